"""One finished debate as a record: the one record builder below every writer.

A run (:mod:`madeval.run.scheduler`), a rescore (:mod:`madeval.run.rescore`) and an import
(:mod:`madeval.importers.writer`) all build their lines with :func:`unit_record`, so a record is
scored and shaped the same way whoever wrote it. :class:`Unit` names the debate a record is of.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from madeval.core.transcript import Transcript
from madeval.metrics.base import Metric
from madeval.metrics.notes import collecting_scoring_errors
from madeval.task.definition import score_metrics

if TYPE_CHECKING:
    from madeval.core.item import Item
    from madeval.core.plugins import Registries
    from madeval.task.definition import Reading, Task


@dataclass(frozen=True)
class Unit:
    """One debate to run: (configuration id, task, item id, repeat index)."""

    config: str
    task: str
    item: str
    repeat: int

    def key(self) -> str:
        """A string key, stored in records and used to skip finished units on resume."""
        return json.dumps([self.config, self.task, self.item, self.repeat])

    def to_dict(self) -> dict[str, Any]:
        """The ``unit`` field of a record (and of an error line): the key, then its four parts."""
        return {"key": self.key(), "config": self.config, "task": self.task, "item": self.item, "repeat": self.repeat}

    @classmethod
    def of_record(cls, record: dict[str, Any]) -> Unit:
        """The unit a stored record (``records.jsonl``, ``rescored.jsonl``) is the debate of."""
        unit = record["unit"]
        return cls(unit["config"], unit["task"], unit["item"], unit["repeat"])


@dataclass(frozen=True)
class Replayed:
    """What the record of a replayed debate adds (:mod:`madeval.run.rescore`): its configuration (the
    leaderboard reads it from the record, as run.json does not list it) and how many calls the
    replayed decider made."""

    configuration: dict[str, Any]
    new_calls: int


async def unit_record(unit: Unit, label: str, task: Task, item: Item, transcript: Transcript,
                      extras: list[tuple[str, Metric]], *, wall_s: float | None,
                      replayed: Replayed | None = None) -> dict[str, Any]:
    """The record of a finished debate, scored (:func:`score_unit`): a line of ``records.jsonl``,
    or with ``replayed`` a line of ``rescored.jsonl`` (``wall_s`` None, no challenge round).

    ``label`` is the configuration's label, ``extras`` its extra metrics (:func:`extra_metrics`).
    """
    reading = task.read(transcript.decision.answer, item)
    scores = await score_unit(task, extras, reading.answer, item, transcript)
    return _record(unit, label, item, transcript, reading, scores, wall_s, replayed)


def unit_record_blocking(unit: Unit, label: str, task: Task, item: Item, transcript: Transcript,
                         extras: list[tuple[str, Metric]], *, wall_s: float | None) -> dict[str, Any]:
    """:func:`unit_record` for a caller with no event loop to keep free (the importer): the same
    record, scored in the calling thread (:func:`unit_scores`) instead of a worker thread, which
    costs a thread hop per record (most of an imported record's time)."""
    reading = task.read(transcript.decision.answer, item)
    scores = unit_scores(task, extras, reading.answer, item, transcript)
    return _record(unit, label, item, transcript, reading, scores, wall_s, None)


def _record(unit: Unit, label: str, item: Item, transcript: Transcript, reading: Reading, scores: UnitScores,
            wall_s: float | None, replayed: Replayed | None) -> dict[str, Any]:
    """The record's fields, in their order (see :func:`unit_record`)."""
    decision = transcript.decision
    prediction = reading.answer
    return {
        "unit": unit.to_dict(),
        "config_label": label,
        **({"configuration": replayed.configuration} if replayed else {}),
        "target": item.target,
        "prediction": prediction,
        "parse_failure": prediction is None,
        # why the decision's answer could not be read (None when it was; absent in older records)
        "parse_note": reading.note if prediction is None else None,
        "parse_failures": transcript.parse_failures(),
        "metrics": scores.metrics,
        "scoring_errors": scores.errors,
        "decision_success": decision.success,
        "turns": transcript.turns_used,
        "calls": len(transcript.calls),
        # calls answered from the response cache (their tokens and latency are the original call's)
        "cached_calls": sum(1 for call in transcript.calls if call.cached),
        # calls answered with the reply of another configuration's identical call (tokens: the original's)
        "shared_calls": sum(1 for call in transcript.calls if call.shared_from is not None and not call.cached),
        # tokens of the calls made for this debate (neither shared nor from the cache): what the run paid for it
        "made_tokens": sum(call.prompt_tokens + call.completion_tokens for call in transcript.calls
                           if call.shared_from is None and not call.cached),
        "chain": transcript.chain(),
        **({"new_calls": replayed.new_calls} if replayed else {}),
        "tokens": transcript.tokens(),
        # elapsed, including waits for a free concurrency slot (None: a replay, the debate was not re-run)
        "wall_s": None if wall_s is None else round(wall_s, 4),
        # its calls' own latencies (of a replay: the stored discussion's and the new calls')
        "llm_s": round(sum(call.latency_s for call in transcript.calls), 4),
        "oracle": transcript.oracle,
        **({} if replayed else {"challenges": scores.challenges}),
        "transcript": transcript.to_dict(),
    }


@dataclass
class UnitScores:
    """A finished debate's scores (:func:`unit_metrics`), its challenge summary, and the reasons
    why any score could not be decided (``scoring_errors`` in the record; such a score is 0)."""

    metrics: dict[str, float]
    challenges: list[dict[str, Any]]
    errors: list[str]


async def score_unit(task: Task, extras: list[tuple[str, Metric]], prediction: str | None, item: Item,
                     transcript: Transcript) -> UnitScores:
    """Score a finished debate in a worker thread, never on the event loop: scoring reads
    untrusted replies (the math checker is bounded by its own deadline, see
    :mod:`madeval.metrics.checker`), and other debates go on meanwhile."""

    return await asyncio.to_thread(unit_scores, task, extras, prediction, item, transcript)


def unit_scores(task: Task, extras: list[tuple[str, Metric]], prediction: str | None, item: Item,
                transcript: Transcript) -> UnitScores:
    """A finished debate's scores, computed in the calling thread (which must not be an event
    loop's: :func:`score_unit` says why)."""
    with collecting_scoring_errors() as errors:
        metrics = unit_metrics(task, extras, prediction, item, transcript)
        challenges = challenge_summary(transcript, task, item)
    return UnitScores(metrics, challenges, errors)


def unit_metrics(task: Task, extras: list[tuple[str, Metric]], prediction: str | None, item: Item,
                 transcript: Transcript) -> dict[str, float]:
    """A finished debate's scores: the task's metrics, then the configuration's extra metrics
    (:func:`extra_metrics`; one the task's ``metric_list`` already names is left to the task)."""
    return {
        **task.score(prediction, item, transcript=transcript),
        **score_metrics([(n, m) for n, m in extras if n not in task.metric_names], prediction, item,
                        task.answer_type, transcript),
    }


def extra_metrics(names: list[str], registries: Registries) -> list[tuple[str, Metric]]:
    """The configuration's extra metrics (``DebateConfig.metrics``) as (registered name, metric);
    an unknown name raises a one-line UsageError."""
    return [(registries.metrics.resolve(name).name, registries.metrics.create(name)) for name in names]


def challenge_summary(transcript: Transcript, task: Task, item: Item) -> list[dict[str, Any]]:
    """Per challenge variant: how many agents challenged, and the scores of their new answers."""
    summary = []
    for event in transcript.events:
        if event["kind"] != "challenge":
            continue
        results = event["results"]
        challenged = [r for r in results if r["agrees"] is False]
        summary.append({
            "variant": event["variant"],
            "agents": len(results),
            "challenged": len(challenged),
            "new_answer_scores": [task.score(r["new_answer"], item) for r in challenged],
        })
    return summary
