"""How big a run is before it starts, and asking before a long one.

A run's calls are bounded from below by one call per agent per debate (the first turn) and from
above by every agent speaking on every turn, plus a final round of votes and an extraction. Its
time is estimated as the lower bound of calls times the seconds a call takes when its reply runs to
``max_tokens``, divided by the calls that may be in flight at once. A resumed run is estimated on
the units it has left: those its folder already holds are not run again, and the estimate says how
many it skips. The seconds a call takes come from probe calls (:meth:`madeval.llm.client.LLMClient.speed`):
the seconds before a reply and per token of it, so that a model that writes 1,024 tokens at ten a
second is not taken for one that says OK in two seconds. They are made only when the run could pass
:data:`LONG_RUN_S` at all (a short run is never slowed by them), or when the model is the embedded
one (:attr:`madeval.llm.client.Endpoint.always_estimated`), whose speed is then always said, in one
line, with how long a debate can take. A debate that can take longer than :data:`LONG_DEBATE_S`
(every agent on every turn, replies of ``max_tokens``, one call after another) is said before the
run starts, with what shortens it. A run estimated to pass :data:`LONG_RUN_S` prints the estimate
and how to limit it, and asks; ``--yes`` (``yes: true`` in a config file) goes on without asking,
and with no terminal to ask on the run is refused in one line (exit 2). The estimate of a run that
was asked about is kept in its ``run.json`` (``estimate``).

Through ``--transport batch`` the seconds a call takes say nothing (a call waits for its whole
batch) and a probe would be a batch of its own. A batch run instead says, in one line and without
asking, the fewest and the most batch round trips it needs one after another (:func:`round_trips`:
the bounds of its debates' chains of dependent calls, :mod:`madeval.debate.chain`) and the
provider's completion window, which bounds each round trip: so the time it may take, in days when
the window is a day.
"""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Collection

from madeval.debate.chain import ChainBounds, chain_bounds
from madeval.errors import LLMError, UsageError
from madeval.llm.batch.settings import BatchSettings, window_seconds
from madeval.llm.probe import Speed

#: A run estimated to take longer than this (seconds) is not started without a yes.
LONG_RUN_S = 3600.0
#: No probe when even calls this slow (seconds) would keep the run under LONG_RUN_S.
SLOWEST_CALL_S = 30.0
#: A debate that may take longer than this (seconds) is said before the run starts.
LONG_DEBATE_S = 600.0
#: Tokens a reply may have when the settings say nothing (the client's own default).
DEFAULT_MAX_TOKENS = 1024


@dataclass(frozen=True)
class RunSize:
    """The calls a run makes (between ``low`` and ``high``), how many may be in flight at once,
    and its units: all of them, and those a resumed run's folder already holds; ``longest`` is the
    most calls one debate left to run makes."""

    low: int
    high: int
    parallel: int
    units: int = 0
    done: int = 0
    longest: int = 0

    def seconds(self, per_call: float) -> float:
        """The least time the run takes at ``per_call`` seconds a call."""
        return self.low * per_call / max(self.parallel, 1)


def run_size(plan: Any, endpoints: dict[str, Any], concurrency: int, done: Collection[str] = ()) -> RunSize:
    """The calls of ``plan`` (:class:`madeval.run.plan.Plan`) left once the units whose keys are in
    ``done`` (a resumed folder's) are skipped, and the calls in flight at most on ``endpoints``
    (their own limits, capped by ``concurrency``)."""
    low = high = units = longest = 0
    used: set[str] = set()
    repeats = plan.settings.repeats
    items = sum(len(items) for items in plan.items.values())
    left = Counter(unit.config for unit in plan.units() if unit.key() not in done) if done else None
    for config_id, planned in plan.configs.items():
        config = planned.config
        runs = items * repeats if left is None else left[config_id]
        units += items * repeats
        most = config.agents * (config.max_turns + 1) + 1  # every agent every turn, a vote round, an extraction
        low += runs * config.agents
        high += runs * most
        if runs:
            longest = max(longest, most)
            used.update(ref.endpoint for ref in (*planned.agent_models, planned.judge_model))
    parallel = min(concurrency, sum(endpoints[name].concurrency for name in used if name in endpoints) or 1)
    return RunSize(low, high, parallel, units, 0 if left is None else units - sum(left.values()), longest)


def duration(seconds: float) -> str:
    """``seconds`` as a person says it: ``40 s``, ``12 minutes``, ``5.2 hours``, ``3.1 days``."""
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    if seconds < 172800:
        return f"{seconds / 3600:.1f} hours"
    return f"{seconds / 86400:.1f} days"


def reply_limit(settings: Any) -> int:
    """The ``max_tokens`` the run's calls are sent with (``--max-tokens``, or ``--gen-kwargs``' own)."""
    generation = getattr(settings, "generation", None)
    limit = generation().get("max_tokens") if callable(generation) else None
    return limit if isinstance(limit, int) and limit > 0 else DEFAULT_MAX_TOKENS


def call_text(speed: Speed, max_tokens: int) -> str:
    """The seconds a call takes, and how they were measured."""
    return (f"{speed.call_s(max_tokens):.2f} s a call of {max_tokens} reply tokens: {speed.overhead_s:.2f} s plus "
            f"{1000 * speed.per_token_s:.1f} ms a token, measured by probe calls")


def estimate_text(size: RunSize, speed: Speed, max_tokens: int) -> str:
    """The estimate as said to the user, with how to limit the run."""
    resumed = f" for the {size.units - size.done:,} of its {size.units:,} units not done yet" if size.done else ""
    return (f"this run makes at least {size.low:,} calls (up to {size.high:,}){resumed} and takes "
            f"{duration(size.seconds(speed.call_s(max_tokens)))} or more when replies run to max_tokens "
            f"({call_text(speed, max_tokens)}; {size.parallel} in flight at once); limit it with --limit N or "
            "--sample N")


def speed_text(model: str, speed: Speed, max_tokens: int, size: RunSize) -> str:
    """One line before the run: how fast ``model`` answers here, how long a debate's replies can take
    and the run's at least; when a debate can pass :data:`LONG_DEBATE_S`, what shortens it. The probes'
    prompts are a line each: a debate's prompts of hundreds of tokens (and, on llama.cpp, replies held
    to a JSON schema) take longer, which the line says (the embedded model on 3 mmlu_pro items: 1.8 s
    estimated, 5.6 s a call measured)."""
    per_call = speed.call_s(max_tokens)
    debate_s = size.longest * per_call
    rate = f"{1 / speed.per_token_s:.1f} tokens a second" if speed.per_token_s > 0 else "at once"
    text = (f"{model} answers at {rate} here ({call_text(speed, max_tokens)}): a debate's replies take up to "
            f"{duration(debate_s)} ({size.longest} calls one after another; reading long prompts adds to that), "
            f"this run's {duration(size.seconds(per_call))} or more ({size.low:,} calls at least)")
    if debate_s > LONG_DEBATE_S:
        text += "; --max-tokens and --max-turns make a debate shorter"
    return text


def estimate_record(size: RunSize, speed: Speed, max_tokens: int) -> dict[str, Any]:
    """The estimate as ``run.json`` keeps it (``estimate``): the calls, the seconds a call takes when
    its reply runs to ``max_tokens`` (and that limit, the seconds before a reply and per token, from the
    probes), the calls in flight, the least time (seconds) and the units left of all."""
    per_call = speed.call_s(max_tokens)
    return {"calls_low": size.low, "calls_high": size.high, "seconds_per_call": round(per_call, 4),
            "max_tokens": max_tokens, "seconds_before_reply": round(speed.overhead_s, 4),
            "seconds_per_token": round(speed.per_token_s, 6), "in_flight": size.parallel,
            "expected_s_at_least": round(size.seconds(per_call), 1), "units": size.units,
            "units_done_before": size.done}


def round_trips(plan: Any, registries: Any, configs: Collection[str] | None = None) -> ChainBounds:
    """The fewest and the most batch round trips ``plan``'s run needs one after another: the
    largest bounds of its configurations' chains of dependent calls (:func:`~madeval.debate.chain.chain_bounds`;
    debates run side by side, and each call of a chain waits for the batch holding the call before
    it). ``most`` is None, with the reason, when a configuration's components do not say.
    ``configs``: only those configurations (the ones a resumed run has units left of); all when None."""
    from madeval.run.plan import debate_setup

    least, most, unknown = 0, 0, None
    for config_id, planned in plan.configs.items():
        if configs is not None and config_id not in configs:
            continue
        bounds = chain_bounds(debate_setup(planned.config, registries))
        least = max(least, bounds.least)
        if bounds.most is None:
            unknown = unknown or bounds.unknown
        else:
            most = max(most, bounds.most)
    return ChainBounds(least, None if unknown else most, unknown)


def in_windows(least: int, window: str, most: int | None = None) -> str:
    """The time of ``least`` (to ``most``) windows: in whole days, hours or minutes when the window
    is one (``2 to 30 days`` for 2 to 30 windows of 24h), else as :func:`duration` says it."""
    seconds = window_seconds(window)
    for unit, name in ((86400, "day"), (3600, "hour"), (60, "minute")):
        if seconds % unit == 0:
            low = round(least * seconds / unit)
            if most is None or most == least:
                return f"{low:,} {name}{'' if low == 1 else 's'}"
            return f"{low:,} to {round(most * seconds / unit):,} {name}s"
    if most is None or most == least:
        return duration(least * seconds)
    return f"{duration(least * seconds)} to {duration(most * seconds)}"


def batch_text(size: RunSize, bounds: ChainBounds, window: str) -> str:
    """What a batch run is told instead of an estimate of its time (see the module)."""
    resumed = f" for the {size.units - size.done:,} of its {size.units:,} units not done yet" if size.done else ""
    if bounds.most is None:
        trips, why = f"at least {bounds.least:,}", f"; no upper bound, as {bounds.unknown}"
        time = f"at least {in_windows(bounds.least, window)}"
    else:
        trips = f"{bounds.least:,}" + (f" to {bounds.most:,}" if bounds.most != bounds.least else "")
        why, time = "", in_windows(bounds.least, window, bounds.most)
    return (
        f"this batch run makes at least {size.low:,} calls (up to {size.high:,}){resumed} in {trips} batch round "
        f"trips one after another (the chain of dependent calls of a debate{why}; each call sent again after a "
        f"failure adds one), each answered within the provider's window of {window} (--batch-options window): "
        f"{time} if each takes its whole window"
    )


async def confirm_long_run(
    plan: Any,
    client: Any,
    endpoints: dict[str, Any],
    settings: Any,
    ask: Callable[[str], bool] | None = None,
    done: Collection[str] = (),
    registries: Any = None,
) -> dict[str, Any] | None:
    """Measure a model of ``plan`` when the run could be long or the model is always estimated (then
    say its speed, :func:`speed_text`); say a debate that can pass :data:`LONG_DEBATE_S`; when the
    estimate passes :data:`LONG_RUN_S`, go on only with ``settings.yes`` or a yes from ``ask``
    (default: on the terminal). ``done``: the keys of the units a resumed folder already holds (only
    the rest is estimated). Returns the estimate (:func:`estimate_record`) when the run was asked
    about, for its ``run.json``; else None.

    With no terminal on stdin and no ``--yes``, a one-line UsageError (exit 2); an answer other
    than yes is one too. Nothing has been written when either is raised.

    Through ``--transport batch``: no probe and no question, one line of :func:`batch_text`
    (``registries`` builds the configurations' components; the loaded plugins' when None)."""
    size = run_size(plan, endpoints, settings.calls_in_flight())
    if getattr(settings, "transport", None) == "batch":
        from madeval.core.plugins import registries as loaded_registries

        # a resume under the batch transport is told of the units it has left, as an estimate is
        left = {unit.config for unit in plan.units() if unit.key() not in done} if done else None
        if left is not None:
            if not left:
                return None  # nothing left to send: no batch at all
            size = run_size(plan, endpoints, settings.calls_in_flight(), done)
        bounds = round_trips(plan, registries or loaded_registries(), left)
        window = BatchSettings(**settings.batch_options).window
        print(f"madeval: {batch_text(size, bounds, window)}", file=sys.stderr)
        return None
    first = next(iter(plan.configs.values())).agent_models[0]
    told = getattr(endpoints.get(first.endpoint), "always_estimated", False)
    if (told or size.seconds(SLOWEST_CALL_S) > LONG_RUN_S) and done:  # only then are the units left counted
        size = run_size(plan, endpoints, settings.calls_in_flight(), done)
    if size.low == 0 or not (told or size.seconds(SLOWEST_CALL_S) > LONG_RUN_S):
        return None
    try:
        speed = await client.speed(first.endpoint, first.model)
    except LLMError as error:
        if not error.retryable:
            raise UsageError(f"a test call to model {first.model} failed: {error}") from None
        return None  # the run's own calls will retry and report
    max_tokens = reply_limit(settings)
    if told or size.longest * speed.call_s(max_tokens) > LONG_DEBATE_S:
        print(f"madeval: {speed_text(first.model, speed, max_tokens, size)}", file=sys.stderr)
    if size.seconds(speed.call_s(max_tokens)) <= LONG_RUN_S:
        return None
    text = estimate_text(size, speed, max_tokens)
    if settings.yes:
        print(f"madeval: {text}; starting it (--yes)", file=sys.stderr)
        return estimate_record(size, speed, max_tokens)
    ask = ask or ask_on_terminal
    if not ask(f"madeval: {text}. Start it? [y/N] "):
        raise UsageError(f"{text}, or pass --yes (yes: true in a config file) to start it without asking")
    return estimate_record(size, speed, max_tokens)


def ask_on_terminal(question: str) -> bool:
    """Ask ``question`` on stderr and read the answer from stdin; False when stdin is not a terminal."""
    if not (sys.stdin and sys.stdin.isatty()):
        return False
    sys.stderr.write(question)
    sys.stderr.flush()
    return sys.stdin.readline().strip().lower() in ("y", "yes")
