"""A run's debates as the viewer shows them: a short row for the list, the whole debate for its view.

Records are read one at a time (:func:`read_debates` is a generator), so a run of 10,000 long
debates never sits in memory at once. The turn-by-turn facts (each agent's answer and whether it is
right, each turn's vote, drift...) are :func:`madeval.analysis.debate_facts.debate_facts`'s, the same
definitions the leaderboard's ``dynamics`` aggregates; a debate whose metric cannot score an
answer alone (an F1 or a judge's score) is shown without them, and says why.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection, Iterator, Mapping

from madeval.analysis.answer_scoring import answer_scorer
from madeval.analysis.debate_facts import DebateFacts, answer_judge, debate_facts, turn_answers
from madeval.analysis.run_data import RESCORED_FILE, complete_rescored
from madeval.errors import UsageError
from madeval.records.folder import RECORDS_FILE, ReadReport, complete_record, read_jsonl_records
from madeval.viewer.questions import Questions

LONE_SURROGATE = re.compile("[\ud800-\udfff]")

#: Characters of the decision's answer kept in the list's row (the debate's view has it whole).
ROW_ANSWER_CHARS = 60


@dataclass
class ViewedDebate:
    """One debate: ``row`` for the list (small: no message text) and ``detail`` for its view."""

    row: dict[str, Any]
    detail: dict[str, Any]


def readable(value: Any) -> Any:
    """``value`` (text, or lists and mappings of it) with each lone surrogate replaced by U+FFFD.

    Model text may hold lone surrogates (records keep them as JSON escapes). UTF-8 has no form for
    them: a browser draws U+FFFD, headless Chromium's DOM dump aborts on them, and inspect-ai
    would store six literal characters. So what is shown or exported carries U+FFFD. (The page
    cleans its JSON text in one pass; walking a long debate's objects costs more.)"""
    if isinstance(value, str):
        return LONE_SURROGATE.sub("\ufffd", value)
    if isinstance(value, (list, tuple)):
        return [readable(v) for v in value]
    if isinstance(value, dict):
        return {readable(k): readable(v) for k, v in value.items()}
    return value


def run_records(folder: Path, report: ReadReport) -> Iterator[dict[str, Any]]:
    """The run's records, then the records ``madeval rescore`` added, each unit once (``report``
    counts broken lines, incomplete records and duplicates, as the leaderboard does)."""
    seen: set[str] = set()
    yield from read_jsonl_records(folder / RECORDS_FILE, report, seen, keep=complete_record)
    yield from read_jsonl_records(folder / RESCORED_FILE, report, seen, keep=complete_rescored)


def left_out(report: ReadReport, unreadable: list[str]) -> list[str]:
    """What reading a run left out, in the notes of the viewer and the export: the lines
    :func:`run_records` skipped (``report``) and the records of another shape (``unreadable``, unit
    keys; the first three named)."""
    notes = [f"records left out: {report.summary()}"] if report else []
    if unreadable:
        named = ", ".join(unreadable[:3]) + (", ..." if len(unreadable) > 3 else "")
        records = f"{len(unreadable)} record{'' if len(unreadable) == 1 else 's'}"
        notes.append(f"{records} with a transcript of another shape left out ({named})")
    return notes


def read_debates(records: Iterator[Mapping[str, Any]], questions: Questions,
                 unreadable: list[str] | None = None, imported: Collection[str] = ()) -> Iterator[ViewedDebate]:
    """Each record as a :class:`ViewedDebate`, in the order read. A record whose transcript is
    not the shape madeval writes (a damaged or hand-edited file) is left out and its unit key
    added to ``unreadable``, so one bad line does not cost the page. ``imported`` are the ids of
    the configurations imported from another harness (their calls and tokens were not recorded)."""
    for record in records:
        try:
            yield view_debate(record, questions.of(record), recorded=str(record["unit"]["config"]) not in imported)
        except (AttributeError, KeyError, TypeError, ValueError):
            if unreadable is not None:
                unreadable.append(str(record["unit"]["key"]))


def primary_metric(record: Mapping[str, Any]) -> str | None:
    """The metric the debate is judged by: the first the record's task scores (the board's first)."""
    return next(iter(record.get("metrics") or {}), None)


@dataclass
class Judged:
    """A debate judged by its primary metric, once: the metric (None: the debate has no score), its
    turn-by-turn facts and ``right`` (``answer -> right?``, each answer scored once), or None for
    both and ``why_not``."""

    metric: str | None
    facts: DebateFacts | None
    right: Callable[[str | None], bool] | None
    why_not: str | None


def judge(record: Mapping[str, Any]) -> Judged:
    """The record's debate judged by its primary metric (:class:`Judged`)."""
    metric = primary_metric(record)
    if metric is None:
        return Judged(None, None, None, "the debate has no score")
    try:
        right = answer_judge(record, metric, answer_scorer(metric))
        return Judged(metric, debate_facts(record, metric, right=right), right, None)
    except UsageError as error:
        return Judged(metric, None, None, str(error))


def facts_of(record: Mapping[str, Any]) -> tuple[DebateFacts | None, str | None]:
    """The debate's turn-by-turn facts (:func:`madeval.analysis.debate_facts.debate_facts`) scored with
    its primary metric, and None; or None and why there are none (no score, or a metric that cannot
    score one answer alone)."""
    judged = judge(record)
    return judged.facts, judged.why_not


def view_debate(record: Mapping[str, Any], question: str | None, recorded: bool = True) -> ViewedDebate:
    """The row and the view of one record. ``recorded`` False: an imported debate, whose calls and
    tokens madeval did not count (its zeros mean "not recorded"; its parse failures the importer
    counted, reading each reply with the task's extractor)."""
    judged = judge(record)
    metric, facts, right = judged.metric, judged.facts, judged.right
    unit = record["unit"]
    transcript = record.get("transcript") or {}
    metrics = record.get("metrics") or {}
    final = metrics.get(metric) if metric else None
    row = {
        "config": str(record.get("config_label") or unit.get("config")),
        "task": str(unit.get("task")),
        "item": str(unit.get("item")),
        "repeat": unit.get("repeat"),
        "score": final,
        "right": None if final is None or final not in (0, 1) else final == 1,
        "first": facts.first_turn_vote_right if facts else None,
        "drift": facts.drift if facts else None,
        "unparsed": facts.unparsed if facts else _unparsed(record),
        "turns": record.get("turns", transcript.get("turns_used")),
        "answer": _short(record.get("prediction")),
    }
    detail = {
        "question": question,
        "target": record.get("target"),
        "prediction": record.get("prediction"),
        "metric": metric,
        "metrics": metrics,
        "scoring_errors": record.get("scoring_errors") or [],
        "parse_failures": record.get("parse_failures") or {},
        "agents": [_agent(agent) for agent in transcript.get("agents") or []],
        "messages": [_message(message, right) for message in transcript.get("messages") or []],
        "events": transcript.get("events") or [],
        "decision": transcript.get("decision"),
        "oracle": bool(transcript.get("oracle")),
        "facts": facts.to_dict() if facts else None,
        "no_facts": judged.why_not,
        "tokens": record.get("tokens"),
        "calls": record.get("calls"),
        "recorded": recorded,
    }
    return ViewedDebate(row, detail)


def _agent(agent: Mapping[str, Any]) -> dict[str, Any]:
    persona = agent.get("persona") or {}
    return {"index": agent.get("index"), "name": persona.get("name"), "description": persona.get("description"),
            "model": agent.get("model"), "neutral": bool(agent.get("neutral"))}


def _message(message: Mapping[str, Any], right: Callable[[str | None], bool] | None) -> dict[str, Any]:
    """A message for the view; ``right`` is whether its parsed answer scores 1 (None: not judged)."""
    answer = message.get("answer")
    shown = {key: message.get(key) for key in ("id", "turn", "step", "agent", "stage", "text", "answer",
                                                  "agreement", "backs", "confidence", "parse_notes")}
    solution = message.get("solution")
    shown["proposes"] = solution is not None  # a message that only agrees proposes nothing to parse
    if solution is not None and solution != message.get("text"):
        shown["solution"] = solution
    shown["right"] = None if right is None or answer is None else right(str(answer))
    return shown


def _unparsed(record: Mapping[str, Any]) -> int:
    """The dynamics' unparsed count, for a debate whose answers cannot be scored (it needs no score)."""
    return sum(answer is None for turn in turn_answers(record).turns for _, answer in turn)


def _short(text: Any) -> str | None:
    if text is None:
        return None
    text = str(text)
    return text if len(text) <= ROW_ANSWER_CHARS else text[: ROW_ANSWER_CHARS - 1] + "…"
