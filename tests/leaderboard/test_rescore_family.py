"""A rescore adds rows without changing what the board said about the run's own configurations.

A simulator run of a strong (accuracy 0.95) and a weak (0.3) configuration gives one comparison
with a small p-value. Two rescores then add two rescored configurations each. Before, each rescored
comparison joined the Holm family of the run's own, so the run's adjusted p-value grew with every
rescore and ``leaderboard.md`` was rewritten with nothing said. Now the run's comparisons keep
their family (and their p-values, to the last digit), the rescored ones form a family of their own
adjusted by Holm over exactly their own p-values (statsmodels' ``multipletests`` is the reference),
and the board of before each rescore is kept in ``previous-boards/<n>/``.
"""

from __future__ import annotations

import json

import pytest
from statsmodels.stats.multitest import multipletests

from helpers import madeval_in_process, run_quietly
from madeval.settings.config import DebateConfig, RunSettings
from madeval.simulator import AgentProfile, simulate

STRONG = DebateConfig(name="strong", decider="counting", max_turns=3, agent_models=["strong"] * 3)
WEAK = DebateConfig(name="weak", decider="counting", max_turns=3, agent_models=["weak"] * 3)


@pytest.fixture(scope="module")
def server(generated_tasks):
    profiles = {"strong": AgentProfile(accuracy=0.95), "weak": AgentProfile(accuracy=0.3)}
    with simulate(tasks=generated_tasks.values(), profiles=profiles) as running:
        yield running


def rescore(folder, deciders, base_url):
    return madeval_in_process("rescore", folder, "--decider", deciders, "--base-url", base_url, "--cache", "off")


def board_of(folder):
    return json.loads((folder / "leaderboard.json").read_text())


def accuracy(board):
    return [c for c in board["comparisons"] if c["scope"] == "task" and c["metric"] == "accuracy"]


def holm(comparisons):
    return list(multipletests([c["p_value"] for c in comparisons], method="holm")[1])


def test_rescored_rows_are_their_own_family_and_the_board_before_is_kept(server, tmp_path):
    folder = tmp_path / "run"
    settings = RunSettings(base_url=server.base_url, configurations=[STRONG, WEAK], tasks=["arith_mc"], limit=30,
                           output_path=str(folder), cache="off")
    run_quietly(settings)
    first = board_of(folder)
    (original,) = accuracy(first)
    assert original["p_value"] < 0.01  # strong against weak: a clear difference
    first_md = (folder / "leaderboard.md").read_text()

    boards, said = [first], []
    for decider in ("counting:after_turns=1", "counting:after_turns=2"):
        done = rescore(folder, decider, server.base_url)
        assert done.returncode == 0, done.stderr
        boards.append(board_of(folder))
        said.append(done.stdout)

    last = accuracy(boards[-1])
    run_family = [c for c in last if c.get("family", "run") == "run" and "->" not in c["label_a"] + c["label_b"]]
    rescored = [c for c in last if c not in run_family]
    assert len(run_family) == 1 and len(rescored) >= 4  # 4 rescored configurations against the reference
    (same,) = run_family
    assert (same["a"], same["b"]) == (original["a"], original["b"])
    # unchanged to the last digit: before, Holm over 1, then 3, then 5 comparisons raised it each time
    assert same["p_value"] == original["p_value"] and same["p_adjusted"] == original["p_adjusted"]
    assert same["adjusted_over"] == 1
    assert [c["p_adjusted"] for c in rescored] == pytest.approx(holm(rescored), abs=1e-15)
    assert {c["adjusted_over"] for c in rescored} == {len(rescored)}
    assert "Rescored configurations (madeval rescore) are compared in a family of their own" in boards[-1][
        "statement"]

    for number, stdout in enumerate(said, start=1):  # the board of before each rescore, as it was
        kept = folder / "previous-boards" / str(number)
        assert f"the board before this rescore is kept in {kept}" in stdout
        assert json.loads((kept / "leaderboard.json").read_text()) == boards[number - 1]
    assert (folder / "previous-boards" / "1" / "leaderboard.md").read_text() == first_md
    again = rescore(folder, "counting:after_turns=1", server.base_url)  # nothing new: no copy kept
    assert again.returncode == 0 and "0 debates rescored" in again.stdout and "kept in" not in again.stdout
    assert sorted(p.name for p in (folder / "previous-boards").iterdir()) == ["1", "2"]
    header = (folder / "comparisons.csv").read_text().splitlines()[0].split(",")
    assert "family" in header and "adjusted_over" in header
