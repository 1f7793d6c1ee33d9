"""Every shipped benchmark task: loads from the local mirror with its full row count, renders a
prompt, and scores a reply stating the gold answer as correct and a wrong one as wrong.

The mirrors are read from ``MADEVAL_DATA_DIR`` (the Makefile and CI set it to ../shared/data;
the same folder is the default here). GPQA has no mirror (its authors ask that examples stay
unpublished), so its tasks read the synthetic fixture in tests/task/fixtures/gpqa/.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from madeval.core.plugins import registries
from madeval.settings.config import RunSettings
from madeval.task.definition import LETTERS, load_tasks
from madeval.task.files import task_index

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = os.environ.get("MADEVAL_DATA_DIR") or str(REPO.parent / "shared" / "data")
FIXTURES = REPO / "tests" / "task" / "fixtures"

# Row counts of the mirrors, from ../shared/data/README.md and the PROVENANCE files (data facts).
ROWS = {
    "mmlu": 14042, "mmlu_pro": 12032, "mmlu_formal_logic": 126, "mmlu_logical_fallacies": 163,
    "strategyqa": 2290, "musr_murder_mysteries": 250, "musr_object_placements": 256,
    "musr_team_allocation": 250, "squad_v2": 11873, "winogrande": 1267, "gsm8k": 1319,
    "math500": 500, "aime2024": 30, "aime2025": 30, "bbh_logical_deduction_three_objects": 250,
    "bbh_logical_deduction_five_objects": 250, "bbh_logical_deduction_seven_objects": 250,
    "bbh_geometric_shapes": 250, "xsum": 1000,
}
# The synthetic GPQA fixture's rows (tests/task/fixtures/gpqa).
FIXTURE_ROWS = {"gpqa_main": 6, "gpqa_diamond": 4, "gpqa_extended": 8}
SHIPPED = sorted(ROWS) + sorted(FIXTURE_ROWS)


def _load(names, data_dir):
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MADEVAL_DATA_DIR", data_dir)
        patch.setenv("HF_HUB_OFFLINE", "1")  # tests use no network
        tasks = load_tasks(RunSettings(tasks=list(names)), registries())
        for task in tasks.values():
            task.items  # noqa: B018 - read while the variables are set
        return tasks


@pytest.fixture(scope="module")
def tasks():
    """Every shipped benchmark task, loaded once."""
    loaded = _load(ROWS, DATA_DIR)
    loaded.update(_load(FIXTURE_ROWS, str(FIXTURES)))
    return loaded


def primary(scores: dict[str, float]) -> float:
    """The first metric a task reports."""
    return next(iter(scores.values()))


def wrong_reply(task, item, items) -> str:
    """A reply that states a wrong answer in the task's format."""
    if task.answer_type == "choice":
        letters = LETTERS[: len(item.choices)]
        return f"FINAL SOLUTION: {letters[(letters.index(item.target) + 1) % len(letters)]}"
    if task.answer_type == "yes_no":
        return "FINAL SOLUTION: " + ("No" if item.target == "yes" else "Yes")
    if task.answer_type == "number":
        return f"FINAL SOLUTION: {int(float(item.target)) + 1}"
    for other in items:  # math and text: another item's gold answer that differs
        reply = task.reference_reply(other)
        if primary(task.score(task.extract(reply, item), item)) < 0.5:
            return reply
    raise AssertionError("no wrong answer found")


def test_every_shipped_task_is_covered():
    names = set(task_index(registries(), []).tasks)
    assert names - {"arith_mc", "arith_yesno"} == set(SHIPPED)


@pytest.mark.parametrize("name", SHIPPED)
def test_task_loads_renders_and_scores(tasks, name):
    task = tasks[name]
    items = task.items
    assert len(items) == {**ROWS, **FIXTURE_ROWS}[name]
    assert len({item.id for item in items}) == len(items)
    for item in (items[0], items[len(items) // 2], items[-1]):
        prompt = task.prompt(item)
        assert prompt.instruction and prompt.input == item.input and item.input.strip()
        if task.answer_type == "choice":
            assert item.choices and item.target in LETTERS[: len(item.choices)]
            for letter, choice in zip(LETTERS, item.choices):
                assert f"\n{letter}) {choice}" in prompt.input
        gold = task.score(task.extract(task.reference_reply(item), item), item)
        assert primary(gold) >= 0.999, gold
        wrong = task.score(task.extract(wrong_reply(task, item, items), item), item)
        assert primary(wrong) <= 0.5 if task.answer_type == "text" else primary(wrong) == 0.0, wrong
        assert primary(task.score(None, item)) == 0.0  # no answer counts as wrong


def test_task_instructions_are_the_published_ones(tasks):
    # 001 Appendix G, verbatim.
    assert tasks["squad_v2"].instruction == (
        "Answer the following question. If the question is not answerable with the provided "
        "information, write '[UNKNOWN]'."
    )
    # MALLM's task instructions (mallm/utils/task_instructions.py), verbatim.
    assert tasks["xsum"].instruction == "Summarize the provided text into one sentence."
    assert tasks["gpqa_main"].instruction.startswith(
        "Answer the following question by choosing option A, B, C, or D. Include the letter "
        "corresponding to your answer in the solution."
    )
    assert tasks["musr_murder_mysteries"].instruction.startswith(
        "Solve the mystery. Make sure to always include the full name of the suspect in your solution."
    )


def test_task_gpqa_choices_are_shuffled_by_record_id(tasks):
    items = tasks["gpqa_main"].items
    again = _load(["gpqa_main"], str(FIXTURES))["gpqa_main"].items
    assert [i.choices for i in items] == [i.choices for i in again]  # the same order every time
    positions = set()
    for item in items:
        doc = item.doc
        assert item.id == doc["Record ID"]
        assert sorted(item.choices) == sorted(
            [doc["Correct Answer"], doc["Incorrect Answer 1"], doc["Incorrect Answer 2"], doc["Incorrect Answer 3"]]
        )
        assert item.choices[LETTERS.index(item.target)] == doc["Correct Answer"]
        positions.add(item.target)
    assert len(positions) > 1  # the correct answer is not always in the same place


def test_task_squad_v2_answerable_and_unanswerable(tasks):
    task = tasks["squad_v2"]
    items = task.items
    unanswerable = [i for i in items if i.target == ["[UNKNOWN]"]]
    assert len(unanswerable) == 5945 and len(items) - len(unanswerable) == 5928  # PROVENANCE counts
    item = unanswerable[0]
    assert task.prompt(item).context == item.doc["context"]
    assert task.score(task.extract("FINAL SOLUTION: [UNKNOWN]", item), item)["NoAns_exact"] == 1.0
    assert task.score(task.extract("FINAL SOLUTION: Paris", item), item) == {
        "exact": 0.0, "f1": 0.0, "NoAns_exact": 0.0, "NoAns_f1": 0.0
    }
    first = items[0]  # "In what country is Normandy located?" -> France
    assert task.score(task.extract("It is in France.\nFINAL SOLUTION: France", first), first)["HasAns_exact"] == 1.0


def test_task_squad_v2_every_item_scores_its_own_first_gold_answer(tasks):
    """The official rules give EM 1 and F1 1 to every dev item's first gold answer (the empty
    answer for an unanswerable item), read from the mirror as the official script reads the file,
    and again through the task (a reply stating the answer, or [UNKNOWN])."""
    from madeval.metrics.squad import squad_v2_scores

    with open(Path(DATA_DIR) / "squad_v2" / "validation.jsonl", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    assert len(rows) == 11873
    by_id = {row["id"]: row["answers"]["text"] for row in rows}
    assert by_id["571cac5d5efbb31900334dd3"][0] == "unknown"  # the first gold answer is the word itself
    failures = []
    for qid, texts in by_id.items():
        scores = squad_v2_scores(texts[0] if texts else "", texts)
        if (scores["exact"], scores["f1"]) != (1.0, 1.0):
            failures.append(qid)
    assert failures == []
    task = tasks["squad_v2"]
    failures = [item.id for item in task.items
                if task.score(task.extract(task.reference_reply(item), item), item)["exact"] != 1.0]
    assert failures == []


def test_task_strategyqa_reads_letters_and_words(tasks):
    task = tasks["strategyqa"]
    item = next(i for i in task.items if i.target == "no")
    assert item.doc["answer"] is False
    for reply in ("FINAL SOLUTION: B) No", "final solution: b", "FINAL SOLUTION: No", "So the answer is (B)."):
        assert task.score(task.extract(reply, item), item) == {"accuracy": 1.0}, reply
    assert task.score(task.extract("FINAL SOLUTION: A", item), item) == {"accuracy": 0.0}


def test_task_mmlu_subsets_are_subject_filters(tasks):
    for name, subject in (("mmlu_formal_logic", "formal_logic"), ("mmlu_logical_fallacies", "logical_fallacies")):
        assert {item.doc["subject"] for item in tasks[name].items} == {subject}


def test_task_bbh_options_become_choices(tasks):
    item = tasks["bbh_geometric_shapes"].items[0]
    assert "Options:" not in item.input and item.choices[:3] == ("circle", "heptagon", "hexagon")
    assert item.target == item.doc["target"].strip("()")
    seven = tasks["bbh_logical_deduction_seven_objects"].items
    assert {len(i.choices) for i in seven} == {7}


def test_task_musr_narrative_is_the_context_and_names_count(tasks):
    task = tasks["musr_murder_mysteries"]
    item = task.items[0]
    assert task.prompt(item).context == item.doc["narrative"]
    name = item.choices[LETTERS.index(item.target)]
    assert task.score(task.extract(f"It was {name}.\nFINAL SOLUTION: {name}", item), item) == {"accuracy": 1.0}


def test_task_math_answers(tasks):
    gsm8k = tasks["gsm8k"].items[0]
    assert gsm8k.target == "18"  # "#### 18" in the first test row
    assert tasks["gsm8k"].score(tasks["gsm8k"].extract("She makes $18 a day. The answer is 18.", gsm8k), gsm8k) == {
        "math_equivalence": 1.0
    }
    aime = next(i for i in tasks["aime2024"].items if i.target.startswith("0"))
    value = str(int(aime.target))
    assert tasks["aime2024"].score(tasks["aime2024"].extract(f"\\boxed{{{value}}}", aime), aime) == {
        "integer_match": 1.0
    }
    math500 = tasks["math500"]
    first = math500.items[0]  # gold "\left( 3, \frac{\pi}{2} \right)"
    reply = "Thus $(r,\\theta) = \\boxed{(3,\\tfrac{\\pi}{2})}$."
    assert math500.score(math500.extract(reply, first), first) == {"math_equivalence": 1.0}


def test_task_group_specs(tasks):
    index = task_index(registries(), [])
    members = {name: index.group_spec(name).tasks for name in index.groups}
    # the issue's groups, and 001 Table 3's selection (GPQA's 546 items are gpqa_extended)
    assert members["knowledge"] == ("mmlu", "mmlu_pro", "gpqa_main", "gpqa_diamond", "gpqa_extended")
    assert members["reasoning"] == (
        "strategyqa",
        "musr_murder_mysteries",
        "musr_object_placements",
        "musr_team_allocation",
        "squad_v2",
    )
    assert members["voc_knowledge"] == ("mmlu", "mmlu_pro", "gpqa_extended")
    assert members["voc_reasoning"] == ("strategyqa", "musr_murder_mysteries", "squad_v2")
    for name in index.groups:  # every group declares how its tasks combine
        declared = [(a.metric, a.aggregation) for a in index.group_spec(name).aggregate_metric_list]
        assert declared == [("accuracy", "mean")], name
    knowledge = index.group_spec("knowledge").aggregate_metric_list[0]
    assert not knowledge.weight_by_size and not index.group_spec("reasoning").aggregate_metric_list[0].weight_by_size
    bbh = index.group_spec("bbh").aggregate_metric_list[0]
    assert bbh.weight_by_size
    # micro (by size) and macro averages, hand-computed
    scores = {"a": (0.5, 100), "b": (1.0, 300)}
    assert bbh.combine(scores) == pytest.approx((50 + 300) / 400)
    assert knowledge.combine(scores) == pytest.approx(0.75)
