"""``self_consistency_matched`` spends the budget of the configuration it is matched to, and a
leaderboard marks the cost-accuracy Pareto front of its rows (simulator runs with known accuracies)."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict

import pytest

from helpers import run_quietly
from madeval.cli.main import main
from madeval.leaderboard.cost import pareto_front
from madeval.settings.config import build_settings
from madeval.simulator import simulate


def calls_per_item(folder, label: str) -> float:
    """Mean over items of the mean over repeats of a configuration's calls, read from the records."""
    configs = json.loads((folder / "run.json").read_text())["configurations"]
    wanted = next(cid for cid, c in configs.items() if c["label"] == label)
    by_item = defaultdict(list)
    for line in (folder / "records.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["unit"]["config"] == wanted:
            by_item[record["unit"]["item"]].append(record["calls"])
    return statistics.fmean(statistics.fmean(v) for v in by_item.values())


@pytest.fixture(scope="module")
def matched_runs(generated_tasks, tmp_path_factory):
    """A debate sweep, then a sweep with self-consistency matched to its simple_voting debate."""
    root = tmp_path_factory.mktemp("matched")
    common = {"tasks": ["arith_mc"], "limit": 24, "repeats": 2, "cache": "off"}
    with simulate(tasks=generated_tasks.values(), accuracy=0.6, conformity=0.3) as sim:
        debate = {**common, "output_path": str(root / "debate"), "base_url": sim.base_url,
                  "common": {"agents": 3, "max_turns": 4, "paradigm": "memory"},
                  "grid": {"decider": ["majority_consensus", "simple_voting"]}}
        first, _ = run_quietly(build_settings(debate))
        matched = {**common, "output_path": str(root / "matched"), "base_url": sim.base_url,
                   "runs": [{"preset": "self_consistency_matched",
                             "preset_args": {"run": str(first.folder), "match": "simple_voting"}},
                            {"preset": "baseline_cot"}],
               "leaderboard": {"charts": True}}  # the cost chart is drawn when asked
        second, _ = run_quietly(build_settings(matched))
    return first.folder, second.folder


def test_cost_self_consistency_matched_spends_the_matched_calls_per_item(matched_runs):
    debate, matched = matched_runs
    target = calls_per_item(debate, "simple_voting")
    spent = calls_per_item(matched, "self_consistency_matched to simple_voting")
    assert target > 5  # a debate of several turns: the budget is worth matching
    assert abs(spent - target) <= 0.05 * target
    config = next(c for c in json.loads((matched / "run.json").read_text())["configurations"].values()
                  if c["preset"] == "self_consistency_matched")
    assert config["agents"] == config["preset_args"]["samples"] == round(target) == spent
    assert config["preset_args"]["matched_calls_per_item"] == pytest.approx(target, rel=1e-12)
    assert config["preset_args"]["matched_label"] == "simple_voting"
    assert (config["max_turns"], config["decider"], config["responder"]) == (1, "counting", "cot")


def test_cost_board_marks_exactly_the_non_dominated_rows(matched_runs):
    _, matched = matched_runs
    board = json.loads((matched / "leaderboard.json").read_text())
    rows = [r for r in board["rows"] if r["scope"] == "task"]
    for cost in ("tokens_per_item", "calls_per_item"):
        expected = pareto_front([(r["score"], r[cost]) for r in rows])
        assert [r[f"front_{cost}"] for r in rows] == expected
    assert (matched / "charts" / "cost.png").stat().st_size > 10_000
    assert "Cost and accuracy" in (matched / "leaderboard.md").read_text()


@pytest.mark.parametrize(("args", "message"), [
    ("", "needs --preset-args run=FOLDER,match=CONFIG"),
    ("run=RUN,match=nope", "unknown reference configuration 'nope'"),
    ("run=RUN,match=simple_voting,samples=3", "does not take the options samples"),
])
def test_cost_self_consistency_matched_bad_input_is_one_line_and_status_2(matched_runs, args, message, capsys,
                                                                          tmp_path):
    argv = ["--tasks", "arith_mc", "--preset", "self_consistency_matched", "-o", str(tmp_path / "out"),
            "--base-url", "http://127.0.0.1:9/v1"]
    if args:
        argv += ["--preset-args", args.replace("RUN", str(matched_runs[0]))]
    with pytest.raises(SystemExit) as done:
        main(argv)
    err = capsys.readouterr().err
    assert done.value.code == 2 and len(err.strip().splitlines()) == 1 and message in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("width", [1400, 800])
def test_cost_page_shows_the_cost_table_chart_and_mde_in_headless_chromium(matched_runs, tmp_path, width):
    from browser import run_chromium

    page = matched_runs[1] / "leaderboard.html"
    dom = run_chromium(page, tmp_path / "profile-dom", f"--window-size={width},3000", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-sortable="ready"' in dom.stdout and "Uncaught" not in dom.stderr
    assert "<table class=\"sortable cost\">" in dom.stdout and 'alt="cost"' in dom.stdout
    assert "<th>MDE (80% power)</th>" in dom.stdout
    shot = tmp_path / "page.png"
    taken = run_chromium(page, tmp_path / "profile-shot", f"--screenshot={shot}", f"--window-size={width},3000")
    assert taken.returncode == 0 and shot.stat().st_size > 50_000
