"""The batch transport's options, given as ``--batch-options key=value,...``."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

#: OpenAI's limits on one batch input file (Batch API guide): 50,000 lines and 200 MB.
PROVIDER_MAX_LINES = 50_000
PROVIDER_MAX_BYTES = 200 * 1000 * 1000


#: Seconds past its window a provider's batch is still awaited (the provider expires it at the window
#: and then writes its partial output).
PROVIDER_GRACE_S = 3600.0
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def window_seconds(window: str) -> float:
    """The seconds of a completion window such as ``24h``, ``30m`` or ``0.5s`` (ValueError if it is none)."""
    text = str(window).strip().lower()
    try:
        seconds = float(text[:-1]) * _UNITS[text[-1:]]
    except (KeyError, ValueError):
        raise ValueError(f"window must be a number and a unit (s, m, h, d), such as 24h, got {window!r}") from None
    if not 0 < seconds <= 30 * 86400:
        raise ValueError(f"window must be above 0 and at most 30 days, got {window!r}")
    return seconds


@dataclass(frozen=True)
class BatchSettings:
    """How calls are gathered into batches and how batches are awaited.

    ``flush_s``: a batch is sent once no new call arrived for this long (the calls a finished batch
    released arrive within it), and ``flush_s * 20`` after its first call at the latest;
    ``max_lines`` and ``max_bytes`` bound one request file (at most the provider's limits);
    ``poll_s``: the longest pause between two looks at a batch's status (the first look comes after
    ``min(poll_s, 1)`` seconds, then the pause doubles); ``window``: the completion window asked for
    (a number and a unit, s, m, h or d: OpenAI takes ``24h``); a batch, or a request file of the file
    exchange, still unanswered that long after the run began waiting for it (plus
    :data:`PROVIDER_GRACE_S` for a provider, which expires it itself) is given up: see
    :mod:`madeval.llm.batch.transport`.
    """

    flush_s: float = 0.2
    max_lines: int = PROVIDER_MAX_LINES
    max_bytes: int = PROVIDER_MAX_BYTES
    poll_s: float = 30.0
    window: str = "24h"

    def __post_init__(self) -> None:
        if not 0 <= self.flush_s <= 60:
            raise ValueError(f"flush_s must be between 0 and 60 seconds, got {self.flush_s}")
        if not 1 <= self.max_lines <= PROVIDER_MAX_LINES:
            raise ValueError(f"max_lines must be between 1 and {PROVIDER_MAX_LINES}, got {self.max_lines}")
        if not 1024 <= self.max_bytes <= PROVIDER_MAX_BYTES:
            raise ValueError(f"max_bytes must be between 1024 and {PROVIDER_MAX_BYTES}, got {self.max_bytes}")
        if not 0 < self.poll_s <= 3600:
            raise ValueError(f"poll_s must be above 0 and at most 3600 seconds, got {self.poll_s}")
        window_seconds(self.window)  # raises ValueError for a window that is no duration


def parse_batch_options(value: Any) -> dict[str, Any]:
    """``key=value,...`` text or a mapping -> the checked options as a dict (ValueError if wrong).

    Only the keys given are kept, so a run.json records what the user chose."""
    if isinstance(value, str):
        pairs = {}
        for item in filter(None, (part.strip() for part in value.split(","))):
            key, equals, text = item.partition("=")
            if not equals:
                raise ValueError(f"must be key=value,..., got {item!r}")
            pairs[key.strip()] = text.strip()
        value = pairs
    if not isinstance(value, dict):
        raise ValueError(f"must be key=value,... or a mapping, got {type(value).__name__}")
    known = {spec.name: spec.type for spec in fields(BatchSettings)}
    chosen: dict[str, Any] = {}
    for key, raw in value.items():
        if key not in known:
            raise ValueError(f"has no key {key!r} (keys: {', '.join(known)})")
        kind = {"float": float, "int": int, "str": str}[known[key]]
        try:
            chosen[key] = kind(raw)
        except (TypeError, ValueError):
            raise ValueError(f"{key} must be a {known[key]}, got {raw!r}") from None
    BatchSettings(**chosen)  # checks the values
    return chosen


def attach_run_folder(transports: Any, folder: Path, options: dict[str, Any]) -> None:
    """Give every batch transport among ``transports`` the run's batch options and its folder
    (where it journals submitted batches and finds those of an interrupted run)."""
    settings = BatchSettings(**options)
    for transport in transports:
        configure = getattr(transport, "configure_batches", None)
        if configure is not None:
            configure(settings, folder)


def concurrency_note(concurrency: int | None, endpoint_concurrency: Any, options: dict[str, Any]) -> str | None:
    """The warning for a ``--concurrency`` or ``--endpoint-concurrency`` below a batch's ``max_lines``
    (None: no warning; ``endpoint_concurrency``: None, N, or a mapping of endpoint names to N).

    Each call holds a slot until its batch is back, so the slots bound how many lines one batch
    gathers: such a run sends more batches, each a provider turnaround, than its longest chain."""
    max_lines = BatchSettings(**options).max_lines
    limits = endpoint_concurrency.values() if isinstance(endpoint_concurrency, dict) else [endpoint_concurrency]
    caps = [(value, "--concurrency") for value in [concurrency] if value is not None]
    caps += [(value, "--endpoint-concurrency") for value in limits if value is not None]
    if not caps or min(caps)[0] >= max_lines:
        return None
    cap, flag = min(caps)
    return (f"{flag} {cap} caps each batch at {cap} lines (more batch round trips than the debates' "
            f"longest chain); leave it out to fill batches up to max_lines={max_lines}")
