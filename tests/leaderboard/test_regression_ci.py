"""The CI regression leaderboard: the stored sweep on the simulator against the committed baseline.

``leaderboards/ci.yaml`` runs on the simulator (accuracy 0.65, conformity 0.3, seed 0) and is checked
against ``leaderboards/ci.json``: an unchanged run equals the baseline exactly and passes; a planted
drop of 7 items (8.75 points, the bound stated in ci.yaml) in one configuration fails there only,
6 items pass.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from helpers import madeval_in_process, run_quietly
from madeval.leaderboard import LeaderboardOptions, build_leaderboard
from madeval.leaderboard.regression import check as check_boards
from madeval.leaderboard.regression import items_needed
from madeval.settings.config import build_settings, read_config_file
from madeval.simulator import simulate

ROOT = Path(__file__).resolve().parents[2]
BASELINE = ROOT / "leaderboards" / "ci.json"


def run_ci_sweep(tasks, folder: Path, accuracy: float = 0.65) -> Path:
    options = read_config_file(ROOT / "leaderboards" / "ci.yaml")
    with simulate(tasks=tasks.values(), accuracy=accuracy, conformity=0.3, seed=0) as sim:
        options.update(base_url=sim.base_url, cache="off", output_path=str(folder))
        run_quietly(build_settings(options))
    return folder


def check(run: Path, baseline: Path = BASELINE, *extra: str) -> subprocess.CompletedProcess:
    return madeval_in_process("leaderboard", "check", run, "--baseline", baseline, *extra)


@pytest.fixture(scope="module")
def unchanged(generated_tasks, tmp_path_factory):
    return run_ci_sweep(generated_tasks, tmp_path_factory.mktemp("ci") / "run")


def test_regression_unchanged_run_passes_against_the_committed_baseline(unchanged):
    done = check(unchanged)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "PASS" in done.stdout and "| majority_consensus | arith_mc |" in done.stdout
    assert done.stdout.count("| ok |") == 6
    assert ("Detectable drop (80 items, 1 repeat, exact tests): a row is flagged only when at least 7 items "
            "score lower and none higher, a drop of at least 0.087;") in done.stdout
    result = check_boards(build_leaderboard(unchanged), json.loads(BASELINE.read_text()), LeaderboardOptions())
    assert len(result.deltas) == 6
    for entry in result.deltas:  # the simulator is deterministic: not one item differs
        assert entry["delta"] == 0.0 and entry["run"] == entry["baseline"] and entry["items"] == 80, entry
        assert entry["p_value"] == 1.0 and entry["status"] == "ok"


def test_regression_items_needed_follow_the_correction():
    assert items_needed(6, 0.05, "holm") == 7  # 6 / 2^7 = 0.047 < 0.05 <= 6 / 2^6
    assert items_needed(6, 0.05, "bh") == 7
    assert items_needed(6, 0.05, "none") == 5  # 1 / 2^5 = 0.031
    assert items_needed(1, 0.05, "holm") == 5


def test_regression_worse_agents_fail_the_check(generated_tasks, tmp_path):
    worse = run_ci_sweep(generated_tasks, tmp_path / "worse", accuracy=0.35)
    done = check(worse)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL" in done.stdout and "| regressed |" in done.stdout


def plant(unchanged: Path, folder: Path, items: int) -> Path:
    """A copy of the unchanged run where unanimity_consensus gets ``items`` right answers of arith_yesno wrong."""
    shutil.copytree(unchanged, folder)
    lines = (folder / "records.jsonl").read_text().splitlines()
    run = json.loads((folder / "run.json").read_text())
    target = next(cid for cid, c in run["configurations"].items() if c["label"] == "unanimity_consensus")
    flipped = 0
    for index, line in enumerate(lines):
        record = json.loads(line)
        unit = record["unit"]
        if unit["config"] == target and unit["task"] == "arith_yesno" and record["metrics"]["accuracy"] == 1.0:
            if flipped < items:
                record["metrics"]["accuracy"] = 0.0
                flipped += 1
                lines[index] = json.dumps(record)
    assert flipped == items
    (folder / "records.jsonl").write_text("\n".join(lines) + "\n")
    return folder


def test_regression_planted_in_one_configuration_is_found_there_only(unchanged, tmp_path):
    done = check(plant(unchanged, tmp_path / "planted", 7))  # 7 of 80 items: 8.75 points
    assert done.returncode == 1
    regressed = [line for line in done.stdout.splitlines() if line.endswith("| regressed |")]
    assert len(regressed) == 1 and regressed[0].startswith("| unanimity_consensus | arith_yesno |")
    assert "| -0.087 |" in regressed[0]  # 0.0875 on the board's 0-1 scale


def test_regression_a_drop_below_the_stated_bound_passes(unchanged, tmp_path):
    done = check(plant(unchanged, tmp_path / "small", 6))  # 6 items: p = 6 / 2^6 after Holm
    assert done.returncode == 0, done.stdout
    row = next(line for line in done.stdout.splitlines() if line.startswith("| unanimity_consensus | arith_yesno |"))
    assert "| -0.075 |" in row and "| 0.0938 |" in row and row.endswith("| ok |")


def test_regression_missing_configuration_fails(unchanged, tmp_path):
    baseline = json.loads(BASELINE.read_text())
    extra = dict(next(iter(baseline["configurations"].values())), label="gone")
    baseline["configurations"]["0000000000"] = extra
    baseline["rows"].append(dict(baseline["rows"][0], config="0000000000", label="gone"))
    (tmp_path / "baseline.json").write_text(json.dumps(baseline))
    done = check(unchanged, tmp_path / "baseline.json")
    assert done.returncode == 1 and "| gone | arith_mc | accuracy |" in done.stdout and "missing" in done.stdout


def test_regression_bad_baseline_is_one_line_and_status_2(unchanged, tmp_path):
    (tmp_path / "bad.json").write_text("{not json")
    done = check(unchanged, tmp_path / "bad.json")
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "is not valid JSON" in done.stderr
    done = check(tmp_path / "nowhere", BASELINE)
    assert done.returncode == 2 and "not a madeval run folder" in done.stderr
