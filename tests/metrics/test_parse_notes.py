"""Why a reply has no answer reaches the record: the message's parse note and the record's
``parse_note`` (issue 22); records written before the field existed still read."""

from __future__ import annotations

import asyncio

from madeval.core.item import Item
from madeval.core.transcript import NO_ANSWER, Decision, Transcript
from madeval.records.unit import Unit, unit_record
from madeval.task.definition import task_loader
from madeval.task.files import task_index
from madeval.testing import core_registries, debate

BUILT = core_registries()
MMLU_PRO = task_loader(task_index(BUILT, []), BUILT.extractors, BUILT.metrics)("mmlu_pro")
ITEM = Item("q1", "How long is an NBA shot clock?", "E",
            choices=("25 seconds", "18 seconds", "40 seconds", "45 seconds", "24 seconds"))


def test_a_solution_without_an_answer_carries_the_reason_as_a_parse_note():
    replies = {(1, 0): "FINAL SOLUTION: A, E", (1, 1): "The solution is E) 24 seconds.", (1, 2): "K"}
    transcript, _ = debate(replies, agents=3, max_turns=1, extract=lambda text: MMLU_PRO.extract(text, ITEM),
                           read=MMLU_PRO.reader(ITEM))
    first, second, third = transcript.messages
    assert (first.answer is None
            and f"{NO_ANSWER}: names several options after the final marker" in first.parse_notes[-1])
    assert second.answer == "E" and not any(note.startswith(NO_ANSWER) for note in second.parse_notes)
    assert third.parse_notes[-1] == f"{NO_ANSWER}: letter K is not an option (A-E)"
    assert transcript.parse_failures()["unparseable_solutions"] == 2
    restored = Transcript.from_dict(transcript.to_dict())
    assert restored.messages[2].parse_notes == third.parse_notes


def _record(answer: str | None) -> dict:
    transcript = Transcript()
    transcript.decision = Decision(answer, True, 1, "scripted", "test")
    unit = Unit("c0", "mmlu_pro", ITEM.id, 0)
    return asyncio.run(unit_record(unit, "label", MMLU_PRO, ITEM, transcript, [], wall_s=0.0))


def test_the_record_says_why_its_decision_has_no_answer():
    unread = _record("[DISAGREE]")
    assert unread["parse_failure"] is True and unread["prediction"] is None
    assert unread["parse_note"] == "only an agreement marker ([DISAGREE])"
    read = _record("The solution is E) 24 seconds.")
    assert read["prediction"] == "E" and read["parse_failure"] is False and read["parse_note"] is None
    assert _record(None)["parse_note"] == "empty reply"
