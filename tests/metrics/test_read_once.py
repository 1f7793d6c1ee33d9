"""A reply is read once for its answer and, when it has none, the reason (the parse note): the
extractor chain runs once per solution in a debate, per decision in a record and per imported
reply; a task provider that overrides ``extract`` (lm-eval's tasks) keeps its own reading."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from madeval.core.hookspecs import hookimpl
from madeval.core.item import Item
from madeval.core.plugins import registries
from madeval.core.transcript import NO_ANSWER, Decision, Transcript
from madeval.importers.base import read_answer
from madeval.records.unit import Unit, unit_record
from madeval.task.definition import EMPTY_REPLY, NOTHING_FOUND, NoAnswer, Reading, Task, task_loader
from madeval.task.files import task_index
from madeval.testing import core_registries, debate, registered

LABELS = Path(__file__).parent / "fixtures" / "mallm_answers" / "labels.jsonl"
ITEM = Item("q1", "What is 2 + 2?", "B", choices=("3", "4"))
CALLS: Counter = Counter()  # texts the counting extractor was asked to read, by text


def _counted(**_):
    """Reads "Final Solution: X"; "maybe" is a NoAnswer with a reason; anything else is no answer."""

    def extract(text, item=None):
        CALLS[text] += 1
        if "maybe" in text:
            return NoAnswer("hedges")
        marker = text.rfind("Final Solution: ")
        return text[marker + 16] if marker >= 0 else None

    return extract


PLUGIN = ModuleType("counting_extractor_plugin")
PLUGIN.register_extractors = hookimpl(lambda register: register("counted", _counted))


@pytest.fixture
def task(madeval_isolated):
    """A choice task whose only extractor counts its calls."""
    CALLS.clear()
    with registered(PLUGIN):
        built = registries()
        yield Task({"task": "counted_task", "answer_type": "choice", "answer_extraction": ["counted"]},
                   Path("counted_task.yaml"), built.extractors, built.metrics)


def test_read_runs_the_chain_once_and_agrees_with_extract_and_the_reason(task):
    assert task.read("Final Solution: B", ITEM) == Reading("B")
    assert task.read("maybe B", ITEM) == Reading(None, "hedges")
    assert task.read("no idea", ITEM) == Reading(None, NOTHING_FOUND)
    assert task.read("", ITEM) == Reading(None, EMPTY_REPLY)
    assert CALLS == {"Final Solution: B": 1, "maybe B": 1, "no idea": 1}
    for text in ("Final Solution: B", "maybe B", "no idea", ""):
        expected = task.extract(text, ITEM)
        assert task.read(text, ITEM) == Reading(expected, None if expected else task.no_answer_reason(text, ITEM))


def test_a_debate_reads_each_solution_once_and_notes_why_it_has_none(task):
    replies = {(1, 0): "Final Solution: B", (1, 1): "maybe B", (1, 2): "no idea at all"}
    transcript, _ = debate(replies, agents=3, max_turns=1, decider="majority_consensus",
                           extract=lambda text: task.extract(text, ITEM), read=task.reader(ITEM))
    first, second, third = transcript.messages
    assert (first.answer, second.answer, third.answer) == ("B", None, None)
    assert not any(note.startswith(NO_ANSWER) for note in first.parse_notes)
    assert second.parse_notes[-1] == f"{NO_ANSWER}: hedges"
    assert third.parse_notes[-1] == f"{NO_ANSWER}: {NOTHING_FOUND}"
    # each solution was read once when its message was recorded (the decider reads answers, not text)
    assert CALLS["maybe B"] == 1 and CALLS["no idea at all"] == 1


def test_a_debate_without_read_notes_no_reason(task):
    transcript, _ = debate({(1, 0): "maybe B", (1, 1): "Final Solution: B"}, agents=2, max_turns=1,
                           extract=lambda text: task.extract(text, ITEM))
    assert transcript.messages[0].answer is None
    assert not any(note.startswith(NO_ANSWER) for note in transcript.messages[0].parse_notes)


def test_a_record_reads_its_decision_once(task):
    transcript = Transcript()
    transcript.decision = Decision("maybe A", True, 1, "scripted", "test")
    record = asyncio.run(unit_record(Unit("c0", "counted_task", ITEM.id, 0), "label", task, ITEM, transcript, [],
                                     wall_s=0.0))
    assert record["prediction"] is None and record["parse_note"] == "hedges"
    assert CALLS["maybe A"] == 1


def test_an_imported_reply_is_read_once(task):
    assert read_answer(task, "no idea", ITEM) == (None, (f"{NO_ANSWER}: {NOTHING_FOUND}",))
    assert read_answer(task, "Final Solution: A", ITEM) == ("A", ())
    assert CALLS == {"no idea": 1, "Final Solution: A": 1}


class WholeReply(Task):
    """A provider's task that reads the whole reply itself, as lm-eval's tasks do."""

    def extract(self, text, item=None):
        return text.upper() if text and "!" in text else None


def test_a_provider_that_overrides_extract_is_read_with_its_own_extract(madeval_isolated):
    CALLS.clear()
    with registered(PLUGIN):
        built = registries()
        provided = WholeReply({"task": "whole", "answer_extraction": ["counted"]}, Path("whole.yaml"),
                              built.extractors, built.metrics)
        assert provided.read("yes!", ITEM) == Reading("YES!")  # the chain would read no answer here
        assert provided.read("maybe so", ITEM) == Reading(None, "hedges")  # the reason: the chain's
        assert provided.read("Final Solution: A", ITEM) == Reading(None, NOTHING_FOUND)  # its extract finds none
        assert provided.reader(ITEM)("yes!") == Reading("YES!")


def test_read_matches_extract_and_reason_on_the_labelled_mallm_replies():
    """The 405 hand-labelled MALLM solutions: one reading gives the same answers and notes as the two calls."""
    built = core_registries()
    mmlu_pro = task_loader(task_index(built, []), built.extractors, built.metrics)("mmlu_pro")
    labels = [json.loads(line) for line in LABELS.read_text(encoding="utf-8").splitlines() if line.strip()]
    unread = 0
    for label in labels:
        text = label["solution"]
        answer = mmlu_pro.extract(text, None)
        reading = mmlu_pro.read(text, None)
        assert reading == Reading(answer, None if answer is not None else mmlu_pro.no_answer_reason(text, None))
        unread += answer is None
    assert len(labels) == 405 and 0 < unread < len(labels)
