"""What a record's calls used, per model: the tokens pricing needs, kept when the transcript is not.

A board is built from records without their transcripts (:func:`madeval.analysis.run_data.load_run`
drops them: they are about 97% of a record), but a call's price depends on its model, on whether it
went through a provider's batch API, and on its prompt, cached prompt and completion tokens apart. So
each record's calls are summed per model and way as the record is read:
``{(model, batched): (prompt tokens, completion tokens, cached prompt tokens)}``, a few numbers per
model instead of the debate. Calls the response cache answered are left out: they cost nothing (their
recorded tokens are the original call's).

Whether a call was batched is what it recorded (its ``transport``), so a run resumed under another
transport is priced call by call; a call recorded before calls said so follows its run's
``run.json`` (:data:`BATCH_KEY`, noted on the record by the board's reader). Cached prompt tokens are
those the provider said it served from its prompt cache; a call that did not say counts none, and
when no call of a (model, way) said, its cached count is None rather than 0: "the provider did not
say" (vLLM without ``--enable-prompt-tokens-details``), which the board tells apart from "none cached"
(:func:`madeval.leaderboard.money.prices_entry`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: (model, batched) -> (prompt tokens, completion tokens, cached prompt tokens) of the calls that reached
#: it; cached is None when none of those calls said how many of its prompt tokens were cached
Usage = dict[tuple[str, bool], tuple[int, int, int | None]]

#: the record key holding its usage once the transcript is dropped
USAGE_KEY = "usage"

#: the record key saying its run's ``run.json`` names the batch transport: how a call that did not
#: record its own transport is priced
BATCH_KEY = "batch_priced"

#: the transport whose calls are priced at batch prices
BATCH_TRANSPORT = "batch"


def calls_usage(calls: Iterable[Mapping[str, Any]], batch: bool = False) -> Usage:
    """Tokens per model and way over ``calls`` (transcript calls), cache hits left out; ``batch``:
    whether a call that recorded no transport went through the batch API."""
    usage: Usage = {}
    for call in calls:
        if call.get("cached"):
            continue
        transport = call.get("transport")
        key = (str(call.get("model") or ""), transport == BATCH_TRANSPORT if transport is not None else batch)
        prompt, completion, cached = usage.get(key, (0, 0, None))
        called = _tokens(call.get("prompt_tokens"))
        said = call.get("cached_prompt_tokens")
        if said is not None:
            cached = (cached or 0) + min(_tokens(said), called)
        usage[key] = (prompt + called, completion + _tokens(call.get("completion_tokens")), cached)
    return usage


def cached_said(usage: Usage) -> dict[str, bool]:
    """Model -> whether any of its calls in ``usage`` said how many prompt tokens were cached."""
    said: dict[str, bool] = {}
    for (model, _), (_, _, cached) in usage.items():
        said[model] = said.get(model, False) or cached is not None
    return said


def record_usage(record: Mapping[str, Any]) -> Usage:
    """A record's usage: the one noted when its transcript was dropped, else summed from the transcript."""
    noted = record.get(USAGE_KEY)
    if noted is not None:
        return noted
    transcript = record.get("transcript")
    calls = transcript.get("calls") or [] if isinstance(transcript, dict) else []
    return calls_usage(calls, batch=bool(record.get(BATCH_KEY)))


def used_models(usage: Usage) -> set[str]:
    """The models ``usage`` names."""
    return {model for model, _ in usage}


def _tokens(value: Any) -> int:
    """A recorded token count as a number >= 0 (a record from elsewhere may hold anything)."""
    return max(int(value), 0) if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value \
        and abs(value) < 1e15 else 0
