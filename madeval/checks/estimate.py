"""How big a run is before it starts, and asking before a long one.

A run's calls are bounded from below by one call per agent per debate (the first turn) and from
above by every agent speaking on every turn, plus a final round of votes and an extraction. Its
time is at least the lower bound of calls times the seconds a call takes, divided by the calls
that may be in flight at once. The seconds per call come from a probe call
(:meth:`madeval.llm.client.LLMClient.probe`), made only when the run could pass
:data:`LONG_RUN_S` at all (a short run is never slowed by it). A run estimated to pass it prints the
estimate and how to limit it, and asks; ``--yes`` (``yes: true`` in a config file) goes on
without asking, and with no terminal to ask on the run is refused in one line (exit 2).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import LLMError, UsageError

#: A run estimated to take longer than this (seconds) is not started without a yes.
LONG_RUN_S = 3600.0
#: No probe when even calls this slow (seconds) would keep the run under LONG_RUN_S.
SLOWEST_CALL_S = 30.0


@dataclass(frozen=True)
class RunSize:
    """The calls a run makes (between ``low`` and ``high``) and how many may be in flight at once."""

    low: int
    high: int
    parallel: int

    def seconds(self, per_call: float) -> float:
        """The least time the run takes at ``per_call`` seconds a call."""
        return self.low * per_call / max(self.parallel, 1)


def run_size(plan: Any, endpoints: dict[str, Any], concurrency: int) -> RunSize:
    """The calls of ``plan`` (:class:`madeval.plan.Plan`) and the calls in flight at most on
    ``endpoints`` (their own limits, capped by ``concurrency``)."""
    low = high = 0
    used: set[str] = set()
    repeats = plan.settings.repeats
    items = sum(len(items) for items in plan.items.values())
    for planned in plan.configs.values():
        config = planned.config
        low += items * repeats * config.agents
        high += items * repeats * (config.agents * (config.max_turns + 1) + 1)
        used.update(ref.endpoint for ref in (*planned.agent_models, planned.judge_model))
    parallel = min(concurrency, sum(endpoints[name].concurrency for name in used if name in endpoints) or 1)
    return RunSize(low, high, parallel)


def duration(seconds: float) -> str:
    """``seconds`` as a person says it: ``40 s``, ``12 minutes``, ``5.2 hours``, ``3.1 days``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} hours"
    return f"{seconds / 86400:.1f} days"


def estimate_text(size: RunSize, per_call: float) -> str:
    """The estimate as said to the user, with how to limit the run."""
    return (f"this run makes at least {size.low:,} calls (up to {size.high:,}) and takes at least "
            f"{duration(size.seconds(per_call))} ({per_call:.2f} s a call, measured by a probe call; "
            f"{size.parallel} in flight at once); limit it with --limit N or --sample N")


async def confirm_long_run(plan: Any, client: Any, endpoints: dict[str, Any], settings: Any,
                           ask: Callable[[str], bool] | None = None) -> str | None:
    """Probe a model of ``plan`` when the run could be long; when the estimate passes
    :data:`LONG_RUN_S`, go on only with ``settings.yes`` or a yes from ``ask`` (default: on the
    terminal). Returns the estimate's text when one was made, for the run's record.

    With no terminal on stdin and no ``--yes``, a one-line UsageError (exit 2); an answer other
    than yes is one too. Nothing has been written when either is raised."""
    size = run_size(plan, endpoints, settings.calls_in_flight())
    if size.seconds(SLOWEST_CALL_S) <= LONG_RUN_S:
        return None
    first = next(iter(plan.configs.values())).agent_models[0]
    try:
        per_call = (await client.probe(first.endpoint, first.model)).latency_s
    except LLMError as error:
        if not error.retryable:
            raise UsageError(f"a test call to model {first.model} failed: {error}") from None
        return None  # the run's own calls will retry and report
    if size.seconds(per_call) <= LONG_RUN_S:
        return None
    text = estimate_text(size, per_call)
    if settings.yes:
        print(f"madeval: {text}; starting it (--yes)", file=sys.stderr)
        return text
    ask = ask or ask_on_terminal
    if not ask(f"madeval: {text}. Start it? [y/N] "):
        raise UsageError(f"{text}, or pass --yes (yes: true in a config file) to start it without asking")
    return text


def ask_on_terminal(question: str) -> bool:
    """Ask ``question`` on stderr and read the answer from stdin; False when stdin is not a terminal."""
    if not (sys.stdin and sys.stdin.isatty()):
        return False
    sys.stderr.write(question)
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")
