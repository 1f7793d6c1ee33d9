"""Dynamics of imported runs (``madeval import mallm``): two MALLM debates worked out by hand, and
the 372 real MALLM debates against the figures issue 23 quotes from them (first-turn vote 62.6%,
final 54.0%, 113 agents right to wrong, 55 wrong to right, unanimity 63% to 83%)."""

from __future__ import annotations

import pytest

from madeval.config import RunSettings
from madeval.importers.writer import import_files
from madeval.leaderboard import build_leaderboard
from madeval.plugins import registries
from madeval.run import load_tasks
from test_import_mallm import CORPUS, MIRROR, mallm_record, mirror_rows, needs_corpus, write_json

needs_mirror = pytest.mark.skipif(not MIRROR.is_file(), reason="the MMLU-Pro mirror is not here")


@pytest.fixture(scope="module")
def mmlu_pro():
    return load_tasks(RunSettings(tasks=["mmlu_pro"]), registries())["mmlu_pro"]


def accuracy_entry(folder):
    board = build_leaderboard(folder)
    (entry,) = [e for e in board["dynamics"] if e["metric"] == "accuracy"]
    return entry


@needs_mirror
def test_two_imported_debates_counted_by_hand(tmp_path, mmlu_pro):
    first, second = mirror_rows(2)
    gold, other = first["answer"], "A" if first["answer"] != "A" else "B"
    right, wrong = f"Final Solution: {gold}", f"Final Solution: {other}"
    # turn 1: right, wrong, right (vote right); turn 2: all wrong (vote wrong, unanimous); decision wrong
    drifted = mallm_record(first, "e1", [(1, 0, False, right), (1, 1, False, wrong), (1, 2, False, right),
                                         (2, 0, False, wrong), (2, 1, True, wrong), (2, 2, True, wrong)], wrong)
    gold2, other2 = second["answer"], "A" if second["answer"] != "A" else "B"
    # turn 1: nobody commits to an answer (no vote: wrong); turn 2: right, right, wrong; decision right
    late = mallm_record(second, "e2", [(1, 0, False, "I cannot say."), (1, 1, False, "I cannot say."),
                                       (1, 2, False, "I cannot say."), (2, 0, False, f"Final Solution: {gold2}"),
                                       (2, 1, True, f"Final Solution: {gold2}"),
                                       (2, 2, False, f"Final Solution: {other2}")], f"Final Solution: {gold2}")
    path = write_json(tmp_path / "two.json", [drifted, late])
    import_files(registries().importers.create("mallm"), [path], mmlu_pro, tmp_path / "out")
    entry = accuracy_entry(tmp_path / "out")
    assert entry["items"] == 2 and entry["turns"] == 2
    assert (entry["first_turn_vote"], entry["final"]) == (0.5, 0.5)
    assert entry["vote_by_turn"] == [0.5, 0.5]
    assert entry["unanimous_by_turn"] == [0.0, 0.5]
    assert entry["agent_transitions"] == {"correct_to_correct": 0, "correct_to_wrong": 2, "wrong_to_correct": 2,
                                          "wrong_to_wrong": 2}
    assert (entry["drift"], entry["recovered"], entry["oracle_gap"], entry["unparsed"]) == (0.5, 0.0, 0.5, 3)
    assert entry["final_vs_first_turn_vote"]["delta"] == 0.0


@needs_corpus
def test_the_372_mallm_debates_give_the_figures_the_issue_quotes(tmp_path, mmlu_pro):
    import_files(registries().importers.create("mallm"), [CORPUS], mmlu_pro, tmp_path / "out")
    entry = accuracy_entry(tmp_path / "out")
    assert entry["items"] == 372 and entry["turns"] == 7
    assert round(100 * entry["first_turn_vote"], 1) == 62.6
    assert round(100 * entry["final"], 1) == 54.0
    assert entry["agent_transitions"]["correct_to_wrong"] == 113
    assert entry["agent_transitions"]["wrong_to_correct"] == 55
    assert sum(entry["agent_transitions"].values()) == 3 * 372
    assert round(100 * entry["unanimous_by_turn"][0]) == 63 and round(100 * entry["unanimous_by_turn"][-1]) == 83
    versus = entry["final_vs_first_turn_vote"]
    assert versus["test"] == "mcnemar" and versus["delta"] == pytest.approx(entry["final"] - entry["first_turn_vote"])
    assert versus["significant"]
