"""Reading a batch's output and error files (the OpenAI batch line format, which ``vllm run-batch``
also writes): each line's reply, or the error its call raises."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from ..wire import FatalError, Reply, RetryableError, read_reply, short, status_error

#: Where a request line sends its body.
CHAT_URL = "/v1/chat/completions"


def read_outcomes(content: bytes, max_reply: int, status: str,
                  problems: Counter | None = None) -> dict[str, Reply | Exception]:
    """Each line's outcome in an output or error file: its reply, or the error to raise.

    Lines are untrusted: one that is not a JSON object with a ``custom_id`` is skipped (its call is
    then missing, and retried); a body over ``max_reply`` bytes fails its call without retry; a
    ``custom_id`` repeated in the file keeps its first line (counted in ``problems["repeated"]``:
    which of two answers to one request is right cannot be told, and the first is what a reader of
    the file sees first)."""
    outcomes: dict[str, Reply | Exception] = {}
    for raw in content.splitlines():
        try:
            entry = json.loads(raw)
            custom_id = entry["custom_id"]
            response, error = entry.get("response"), entry.get("error")
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            continue
        if not isinstance(custom_id, str):
            continue
        if custom_id in outcomes:
            if problems is not None:
                problems["repeated"] += 1
            continue
        outcomes[custom_id] = _outcome(response, error, max_reply, status)
    return outcomes


def _outcome(response: Any, error: Any, max_reply: int, status: str) -> Reply | Exception:
    if isinstance(response, dict) and isinstance(response.get("status_code"), int):
        body = response.get("body")
        raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        if len(raw) > max_reply:
            return FatalError(f"reply over {max_reply / (1 << 20):g} MiB (--max-response-mb)")
        if response["status_code"] == 200:
            try:
                return read_reply(raw)
            except RetryableError as malformed:
                return malformed
        return status_error(response["status_code"], {}, raw)
    code = error.get("code") if isinstance(error, dict) else None
    return RetryableError(f"batch line {short(str(code or status), 60)}")


def note_odd_lines(where: str, problems: Counter) -> None:
    """One warning line for a batch whose output repeats a ``custom_id`` or names one it was not sent."""
    parts = []
    if problems["repeated"]:
        parts.append(f"{problems['repeated']} repeat a custom_id (the first line of each kept)")
    if problems["unknown"]:
        parts.append(f"{problems['unknown']} name a custom_id it was not sent (ignored)")
    if parts:
        warn(f"{where}: output lines that {' and '.join(parts)}")


def warn(message: str) -> None:
    """One warning line on stderr."""
    import sys

    print(f"madeval: warning: {message}", file=sys.stderr)
