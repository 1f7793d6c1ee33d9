"""What a record's calls used, per model: the tokens pricing needs, kept when the transcript is not.

A board is built from records without their transcripts (:func:`madeval.leaderboard.data.load_run`
drops them: they are about 97% of a record), but a call's price depends on its model and on its
prompt and completion tokens apart. So each record's calls are summed per model as the record is
read: ``{model: (prompt tokens, completion tokens)}``, a few numbers per model instead of the debate.
Calls the response cache answered are left out: they cost nothing (their recorded tokens are the
original call's).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: model -> (prompt tokens, completion tokens) of the calls that reached it
Usage = dict[str, tuple[int, int]]

#: the record key holding its usage once the transcript is dropped
USAGE_KEY = "usage"


def calls_usage(calls: Iterable[Mapping[str, Any]]) -> Usage:
    """Prompt and completion tokens per model over ``calls`` (transcript calls), cache hits left out."""
    usage: dict[str, tuple[int, int]] = {}
    for call in calls:
        if call.get("cached"):
            continue
        model = str(call.get("model") or "")
        prompt, completion = usage.get(model, (0, 0))
        usage[model] = (prompt + _tokens(call.get("prompt_tokens")), completion + _tokens(call.get("completion_tokens")))
    return usage


def record_usage(record: Mapping[str, Any]) -> Usage:
    """A record's usage: the one noted when its transcript was dropped, else summed from the transcript."""
    noted = record.get(USAGE_KEY)
    if noted is not None:
        return noted
    transcript = record.get("transcript")
    return calls_usage(transcript.get("calls") or []) if isinstance(transcript, dict) else {}


def _tokens(value: Any) -> int:
    """A recorded token count as a number >= 0 (a record from elsewhere may hold anything)."""
    return max(int(value), 0) if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value \
        and abs(value) < 1e15 else 0
