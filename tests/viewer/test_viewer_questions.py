"""The viewer's questions: a task is read only when a debate asks for its questions, and from a
local mirror only the run's items are made (``Task.items_with_ids``), the same items, ids and
texts as the run's own reading of the mirror (through ``datasets``, the reference here)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from madeval.viewer.questions import load_questions

TASK = """task: mirrored_mc
dataset: {path: nobody/mirrored, split: test, mirror: mirrored/test.jsonl, filter: {subject: [math, law]}}
doc_to_id: qid
doc_to_text: question
doc_to_context: context
doc_to_choice: options
doc_to_target: answer_index
answer_type: choice
"""


@pytest.fixture
def mirrored(tmp_path, monkeypatch):
    """A task read from a mirror of 40 rows: a filter keeps 30, two of them without an id."""
    data, tasks = tmp_path / "data", tmp_path / "tasks"
    (data / "mirrored").mkdir(parents=True)
    tasks.mkdir()
    rows = [{"qid": None if n in (4, 9) else 100 + n, "subject": ["math", "law", "art", "law"][n % 4],
             "question": f"Question {n}:\n  what \u202e is {n} + 1?", "context": "a passage" if n % 3 == 0 else None,
             "options": [str(n), str(n + 1), str(n + 2)], "answer_index": 1} for n in range(40)]
    (data / "mirrored" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n", encoding="utf-8")
    (tasks / "mirrored_mc.yaml").write_text(TASK, encoding="utf-8")
    monkeypatch.setenv("MADEVAL_DATA_DIR", str(data))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tasks


def test_only_the_wanted_rows_of_a_mirror_become_items_and_they_are_the_run_s_items(mirrored):
    from madeval import load_task

    reference = load_task("mirrored_mc", [mirrored]).items  # through datasets, as a run reads it
    assert len(reference) == 30 and {"mirrored_mc-3",
                                     "mirrored_mc-7"} <= {i.id for i in reference}  # rows 4 and 9 after the filter
    # 102 is art (filtered out); 104 has no id (it is mirrored_mc-3, its place after the filter)
    wanted = {"102", "104", "mirrored_mc-3", "mirrored_mc-7", "139", "103", "no such item"}
    streamed = load_task("mirrored_mc", [mirrored]).items_with_ids(wanted)
    expected = [item for item in reference if item.id in wanted]
    assert [i.id for i in expected] == ["103", "mirrored_mc-3", "mirrored_mc-7", "139"]
    assert streamed == expected  # ids, question text with its options, context, choices, target, row


def test_a_run_s_questions_load_no_task_until_a_debate_asks_and_then_only_its_items(mirrored):
    run = {"settings": {"include_path": [str(mirrored)]},
           "tasks": {"mirrored_mc": {"items": ["101", "105"]}, "gone_task": {"items": ["1"]}}}
    questions = load_questions(run)
    assert questions.texts == {} and questions.notes == []  # nothing read yet
    carried = {"unit": {"task": "gone_task", "item": "1"}, "input": "carried question"}
    assert questions.of(carried) == "carried question" and questions.notes == []  # an importer's record: no task read
    asked = questions.of({"unit": {"task": "mirrored_mc", "item": "105"}})
    assert asked == "Question 5:\n  what \u202e is 5 + 1?\nA) 5\nB) 6\nC) 7"
    assert sorted(questions.texts) == [("mirrored_mc", "101"), ("mirrored_mc", "105")]
    assert questions.of({"unit": {"task": "gone_task", "item": "1"}}) is None
    assert (len(questions.notes) == 1
            and questions.notes[0].startswith("the questions of task gone_task could not be read"))


def test_a_broken_mirror_line_is_a_note_not_a_crash(mirrored, tmp_path):
    mirror = tmp_path / "data" / "mirrored" / "test.jsonl"
    mirror.write_text(mirror.read_text() + "{not json\n")
    questions = load_questions({"settings": {"include_path": [str(mirrored)]},
                                "tasks": {"mirrored_mc": {"items": ["101"]}}})
    assert questions.of({"unit": {"task": "mirrored_mc", "item": "101"}}) is None
    assert len(questions.notes) == 1 and "mirrored_mc" in questions.notes[0]


def test_the_viewer_does_not_import_datasets_for_a_mirrored_task(mirrored, tmp_path):
    """The seconds ``datasets`` (pyarrow, pandas) takes to import are what the page's writing spent."""
    probe = ("import sys, json; from madeval.viewer.questions import load_questions; "
             f"q = load_questions({{'settings': {{'include_path': [{str(mirrored)!r}]}}, "
             "'tasks': {'mirrored_mc': {'items': ['101']}}}); "
             "print(json.dumps([q.of({'unit': {'task': 'mirrored_mc', 'item': '101'}}), 'datasets' in sys.modules]))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == ["Question 1:\n  what \u202e is 1 + 1?\nA) 1\nB) 2\nC) 3", False]
