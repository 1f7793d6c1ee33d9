"""A sweep over the seven protocols of seed 001 on the simulator produces every output; the HTML
page works in headless Chromium; rows and comparisons are what the statistics say."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from madeval.config import build_settings, read_config_file
from madeval.leaderboard import LeaderboardOptions, build_leaderboard
from madeval.leaderboard.stats import mcnemar_exact, paired_permutation, holm
from madeval.records import read_records
from madeval.simulator import simulate
from browser import run_chromium
from helpers import run_quietly

ROOT = Path(__file__).resolve().parents[1]
PROTOCOLS = ["majority_consensus", "supermajority_consensus", "unanimity_consensus", "simple_voting",
             "approval_voting", "ranked_voting", "cumulative_voting"]


@pytest.fixture(scope="module")
def protocols_run(generated_tasks, tmp_path_factory):
    """leaderboards/protocols.yaml (two tasks, three repeats) on the simulator, 8 items per task."""
    folder = tmp_path_factory.mktemp("protocols") / "run"
    options = read_config_file(ROOT / "leaderboards" / "protocols.yaml")
    with simulate(tasks=generated_tasks.values(), accuracy=0.6, conformity=0.3) as sim:
        options.update(base_url=sim.base_url, limit=8, cache="off", output_path=str(folder))
        result, printed = run_quietly(build_settings(options))
    return result, printed


def test_protocol_sweep_produces_every_output(protocols_run):
    result, printed = protocols_run
    folder = result.folder
    labels = [c["label"] for c in json.loads((folder / "run.json").read_text())["configurations"].values()]
    assert sorted(labels) == sorted(PROTOCOLS + ["baseline_cot", "self_consistency"])
    for name in ("leaderboard.md", "leaderboard.csv", "leaderboard.json", "leaderboard.html"):
        assert (folder / name).stat().st_size > 0, name
    for chart in ("score", "turns", "decisions", "wall"):
        assert (folder / "charts" / f"{chart}.png").stat().st_size > 10_000
        assert (folder / "charts" / f"{chart}.svg").read_text().lstrip().startswith("<?xml")
    rows = result.rows
    assert {(r["label"], r["task"]) for r in rows} == {(l, t) for l in labels for t in ("arith_mc", "arith_yesno")}
    assert all(r["items"] == 8 and r["units"] == 24 and r["repeats"] == 3 for r in rows)
    assert [r["label"] for r in rows[:9]] == PROTOCOLS + ["baseline_cot", "self_consistency"]  # run order
    with open(folder / "leaderboard.csv") as handle:
        assert len(list(csv.DictReader(handle))) == len(rows)
    assert printed.startswith("| configuration | task |") and "about the population of questions" in printed
    assert (folder / "leaderboard.md").read_text() in printed


def test_rows_average_repeats_within_items_and_compare_with_the_reference(protocols_run):
    result, _ = protocols_run
    records = list(read_records(result.folder))
    board = result.board
    reference = board["options"]["reference"]
    assert board["configurations"][reference]["label"] == "majority_consensus"
    per_item = {}
    for r in records:
        if r["unit"]["task"] == "arith_mc":
            per_item.setdefault(r["unit"]["config"], {}).setdefault(r["unit"]["item"], []).append(r["metrics"]["accuracy"])
    means = {c: {i: sum(v) / len(v) for i, v in items.items()} for c, items in per_item.items()}
    family = [r for r in board["rows"] if r["task"] == "arith_mc"]
    p_values = {}
    for row in family:
        mine = means[row["config"]]
        assert abs(row["score"] - sum(mine.values()) / len(mine)) < 1e-12
        if row["config"] != reference:
            a = [mine[i] for i in sorted(mine)]
            b = [means[reference][i] for i in sorted(mine)]
            binary = all(v in (0, 1) for v in a + b)
            expected = (mcnemar_exact(a, b) if binary else paired_permutation(a, b)).p_value
            assert abs(row["p_value"] - expected) < 1e-12 and row["test"] == ("mcnemar" if binary else "permutation")
            p_values[row["config"]] = row["p_value"]
    adjusted = dict(zip(p_values, holm(list(p_values.values()))))
    for row in family:
        if row["config"] != reference:
            assert abs(row["p_adjusted"] - adjusted[row["config"]]) < 1e-12
            assert row["significant"] == (row["p_adjusted"] < 0.05)
        assert 0.0 <= row["ci_low"] <= row["score"] <= row["ci_high"] <= 1.0


def test_all_pairs_benchmark_intervals_and_bh_on_the_same_run(protocols_run):
    result, _ = protocols_run
    options = LeaderboardOptions(compare="all", correction="bh", interval="benchmark")
    board = build_leaderboard(result.folder, options)
    family = [c for c in board["comparisons"] if c["task"] == "arith_yesno"]
    assert len(family) == 9 * 8 // 2
    sizes = json.loads((result.folder / "run.json").read_text())["task_sizes"]
    assert all(r["population"] == sizes[r["task"]] and "FPC" in r["ci_method"] for r in board["rows"])
    assert "finite benchmark" in board["statement"] and "Benjamini-Hochberg" in board["statement"]
    default = {(r["config"], r["task"]): r for r in result.rows}
    for row in board["rows"]:  # 8 of 1000+ items: (1 - f) s^2 + f s_w^2 / K differs little from s^2
        wide = default[(row["config"], row["task"])]
        assert row["ci_high"] - row["ci_low"] <= 1.05 * (wide["ci_high"] - wide["ci_low"]) + 1e-12


def test_html_page_sorts_and_renders_in_headless_chromium(protocols_run, tmp_path):
    page = protocols_run[0].folder / "leaderboard.html"
    text = page.read_text()
    assert "<script" in text and "src='http" not in text and "href='http" not in text  # self-contained
    assert "about the population of questions" in text
    dom = run_chromium(page, tmp_path / "profile-dom", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-sortable="ready"' in dom.stdout
    assert "Uncaught" not in dom.stderr
    shot = tmp_path / "leaderboard.png"
    taken = run_chromium(page, tmp_path / "profile-shot", f"--screenshot={shot}", "--window-size=1280,2000")
    assert taken.returncode == 0, taken.stderr[-2000:]
    assert shot.stat().st_size > 50_000


def test_a_tag_gets_a_group_row_pooling_its_tasks(sim, tmp_path):
    from helpers import settings_for

    settings = settings_for(sim.base_url, tmp_path, tasks=["generated"], limit=5, cache="off",
                            paradigm="collective_refinement", decider="counting", max_turns=1)
    result, printed = run_quietly(settings)
    rows = {(r["scope"], r["task"]): r for r in result.rows}
    assert set(rows) == {("task", "arith_mc"), ("task", "arith_yesno"), ("group", "generated")}
    group = rows[("group", "generated")]
    assert group["items"] == 10
    assert abs(group["score"] - (rows[("task", "arith_mc")]["score"] + rows[("task", "arith_yesno")]["score"]) / 2) < 1e-12
    assert "| generated (group) |" in printed


def test_leaderboard_show_rewrites_outputs_and_rejects_an_unknown_reference(protocols_run):
    import subprocess
    import sys

    folder = protocols_run[0].folder
    done = subprocess.run([sys.executable, "-m", "madeval", "leaderboard", "show", str(folder), "--reference",
                           "unanimity_consensus", "--compare", "all"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "| unanimity_consensus | arith_mc | accuracy |" in done.stdout and "| ref |" in done.stdout
    assert "| task | metric | A | B |" in done.stdout  # the all-pairs table
    bad = subprocess.run([sys.executable, "-m", "madeval", "leaderboard", "show", str(folder), "--reference", "nope"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "unknown reference configuration 'nope'" in bad.stderr
