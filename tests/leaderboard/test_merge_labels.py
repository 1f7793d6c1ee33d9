"""A merged board never shows two rows under one label, and two seeds of one configuration compare.

Three simulator runs of the same two-decider grid: 3 agents, 5 agents (both grids name their points
only ``majority_consensus`` and ``simple_voting``), and 3 agents again with another seed. Merging the
first two must name each row by what tells it apart (``agents=5``) and refuse a reference that names
two; merging the first and the third must keep the seeds apart as rows paired on the items both hold,
with the difference of the paired test equal to the one computed from the records by hand.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from helpers import run_quietly
from madeval.errors import UsageError
from madeval.leaderboard import LeaderboardOptions, build_merged_leaderboard
from madeval.records.folder import read_records
from madeval.settings.config import DebateConfig, RunSettings

LIMIT = 20


def grid(agents):
    """Two grid points named as a sweep over ``decider`` names them: by the decider only."""
    return [DebateConfig(name="majority_consensus", decider="majority_consensus", agents=agents, max_turns=3),
            DebateConfig(name="simple_voting", decider="simple_voting", agents=agents, max_turns=3)]


@pytest.fixture(scope="module")
def runs(sim, tmp_path_factory):
    root = tmp_path_factory.mktemp("labels")
    made = {}
    for name, agents, seed in (("three", 3, 1234), ("five", 5, 1234), ("reseeded", 3, 99)):
        settings = RunSettings(base_url=sim.base_url, configurations=grid(agents), tasks=["arith_mc"],
                               limit=LIMIT, seed=seed, output_path=str(root / name))
        made[name] = run_quietly(settings)[0].folder
    return made


def accuracy_rows(board):
    return [r for r in board["rows"] if r["scope"] == "task" and r["metric"] == "accuracy"]


def test_merged_grids_name_every_row_by_what_differs_and_say_so(runs):
    board = build_merged_leaderboard([runs["three"], runs["five"]],
                                     LeaderboardOptions(merge_same=True, compare="all"))
    labels = [r["label"] for r in accuracy_rows(board)]
    assert sorted(labels) == ["majority_consensus agents=3", "majority_consensus agents=5",
                              "simple_voting agents=3", "simple_voting agents=5"]
    for comparison in board["comparisons"]:
        assert comparison["label_a"] != comparison["label_b"]
    for said in board["conclusions"]:  # "majority_consensus beats majority_consensus" is gone
        assert "majority_consensus agents=3 from majority_consensus agents=3" not in said
        assert not any(f"{name} beats {name} " in said or f"{name} − {name} " in said
                       for name in ("majority_consensus", "simple_voting"))
    notes = board["merged"]["notes"]
    assert (f"2 configurations are labelled majority_consensus: shown as majority_consensus agents=3 "
            f"({runs['three']}), majority_consensus agents=5 ({runs['five']})") in notes
    assert board["merged"]["runs"][str(runs["five"])] == ["majority_consensus agents=5", "simple_voting agents=5"]


def test_a_reference_naming_two_configurations_of_a_merge_is_refused(runs):
    folders = [runs["three"], runs["five"]]
    with pytest.raises(UsageError, match="names 2 configurations") as refused:
        build_merged_leaderboard(folders, LeaderboardOptions(merge_same=True, reference="majority_consensus"))
    assert "majority_consensus agents=3" in str(refused.value) and "majority_consensus agents=5" in str(refused.value)
    board = build_merged_leaderboard(folders, LeaderboardOptions(reference="majority_consensus agents=5"))
    (five,) = [c for c, config in board["configurations"].items() if config["label"] == "majority_consensus agents=5"]
    assert board["options"]["reference"] == five
    assert {r["label"] for r in accuracy_rows(board) if r["reference"]} == {"majority_consensus agents=5"}


def test_the_cli_refuses_an_ambiguous_reference_in_one_line(runs, tmp_path):
    done = subprocess.run([sys.executable, "-m", "madeval", "leaderboard", "show", str(runs["three"]),
                           str(runs["five"]), "--reference", "majority_consensus"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "names 2 configurations" in done.stderr
    assert done.stdout == ""


def unit_accuracy(folder, label):
    return {(r["unit"]["item"], r["unit"]["repeat"]): r["metrics"]["accuracy"]
            for r in read_records(folder) if r["config_label"] == label}


def test_two_seeds_of_one_configuration_are_kept_apart_and_paired(runs):
    # before: "configuration majority_consensus is in both ...; pass --merge-same", and with it
    # "has different records ... cannot be merged": no board at all
    for merge_same in (False, True):
        options = LeaderboardOptions(merge_same=merge_same, reference="majority_consensus seed=99")
        board = build_merged_leaderboard([runs["three"], runs["reseeded"]], options)
        rows = {r["label"]: r for r in accuracy_rows(board)}
        assert set(rows) == {"majority_consensus seed=1234", "simple_voting seed=1234",
                             "majority_consensus seed=99", "simple_voting seed=99"}
        first, second = rows["majority_consensus seed=1234"], rows["majority_consensus seed=99"]
        assert first["config"] != second["config"]
        assert first["config"].startswith(second["config"].split("/")[0])  # one configuration, two seeds
        assert any("ran with different seed in 2 runs: kept apart" in note for note in board["merged"]["notes"])

    (comparison,) = [c for c in board["comparisons"] if {c["label_a"], c["label_b"]} == set(
        ["majority_consensus seed=1234", "majority_consensus seed=99"])]
    old, new = unit_accuracy(runs["three"], "majority_consensus"), unit_accuracy(runs["reseeded"], "majority_consensus")
    shared = sorted(set(old) & set(new))
    assert len(shared) == LIMIT and comparison["items"] == LIMIT and comparison["units"] == LIMIT
    assert old != new  # the seeds gave different debates: pooling them was impossible
    by_hand = sum(old[k] - new[k] for k in shared) / len(shared)  # "seed=1234" minus "seed=99"
    sign = 1 if comparison["label_a"] == "majority_consensus seed=1234" else -1
    assert comparison["delta"] == pytest.approx(sign * by_hand, abs=1e-12)
    assert rows["majority_consensus seed=1234"]["score"] == pytest.approx(sum(old.values()) / LIMIT, abs=1e-12)


def test_runs_of_the_same_settings_are_still_refused_unless_pooled(runs, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(runs["three"], copy)
    with pytest.raises(UsageError, match="pass --merge-same"):
        build_merged_leaderboard([runs["three"], copy], LeaderboardOptions())
    pooled = build_merged_leaderboard([runs["three"], copy], LeaderboardOptions(merge_same=True))
    assert sorted(r["label"] for r in accuracy_rows(pooled)) == ["majority_consensus", "simple_voting"]
    # with a third run of another seed: the two of one seed are still one configuration, pooled only when asked
    with pytest.raises(UsageError, match="pass --merge-same"):
        build_merged_leaderboard([runs["three"], copy, runs["reseeded"]], LeaderboardOptions())
    three = build_merged_leaderboard([runs["three"], copy, runs["reseeded"]], LeaderboardOptions(merge_same=True))
    rows = {r["label"]: r for r in accuracy_rows(three)}
    assert set(rows) == {"majority_consensus seed=1234", "simple_voting seed=1234", "majority_consensus seed=99",
                         "simple_voting seed=99"}
    assert rows["majority_consensus seed=1234"]["units"] == LIMIT  # each unit once, not twice
