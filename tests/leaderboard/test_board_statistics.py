"""The board's statistics as a reader sees them (issue 33, items 15, 17 and 18): a benchmark interval
with one repeat, comparisons of non-0/1 scores at the item counts where statsmodels' solver returns
an array, and each comparison's interval and MDE beside the test and star they belong to."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.power import TTestPower

from madeval.analysis import stats as S
from madeval.analysis.difference import mcnemar_interval, sign_flip
from madeval.analysis.power import mcnemar_mde
from madeval.analysis.run_data import RunData, item_spread
from madeval.cli.main import main
from madeval.leaderboard.table import build
from madeval.settings.board_options import LeaderboardOptions


def record(config: str, item: int, repeat: int, score: float, task: str = "A") -> dict:
    return {"unit": {"key": f"{config}/{task}/{item}/{repeat}", "config": config, "task": task, "item": f"i{item}",
                     "repeat": repeat},
            "metrics": {"accuracy": score}, "parse_failure": False, "decision_success": True, "turns": 1,
            "calls": 2, "tokens": {"total": 10}, "wall_s": 1.0, "llm_s": 0.5, "oracle": False}


def run_data(scores: dict[str, np.ndarray], size: int | None = None) -> RunData:
    """A run by hand: per configuration an (items x repeats) array of scores on task A of ``size`` items."""
    configurations = {cid: {"label": cid, "source": "run"} for cid in scores}
    records = [record(cid, item, repeat, float(value)) for cid, table in scores.items()
               for (item, repeat), value in np.ndenumerate(table)]
    run = {"tasks": {"A": {}}, **({"task_sizes": {"A": size}} if size else {})}
    return RunData(Path("hand"), run, configurations, records)


def test_item_spread_of_one_repeat_is_unknown_not_zero():
    records = [record("c", 0, 0, 1.0), record("c", 1, 0, 0.0), record("c", 1, 1, 1.0)]
    assert item_spread(records, "accuracy") == ([None, 0.5], [1, 2])


def test_benchmark_interval_with_one_repeat_is_the_population_one_and_says_it_cannot_separate():
    """Issue 33, item 15: 152 of 250 items, one debate each. The old interval was 37% narrower than
    the population one (the FPC applied to item spread and debate randomness together), and on all
    250 items a point."""
    rng = np.random.default_rng(15)
    scores = {"a": (rng.uniform(size=(152, 1)) < 0.7).astype(float), "b": (rng.uniform(size=(152, 1)) < 0.6) * 1.0}
    benchmark = build(run_data(scores, 250), LeaderboardOptions(interval="benchmark"))
    population = build(run_data(scores, 250), LeaderboardOptions())
    for row, wide in zip(benchmark["rows"], population["rows"]):
        assert (row["ci_low"], row["ci_high"]) == (wide["ci_low"], wide["ci_high"])
        assert row["ci_method"] == "Wilson; " + S.NOT_SEPARABLE and row["population"] == 250
    assert "cannot be told from the items' spread" in benchmark["statement"]
    whole = build(run_data({"a": (rng.uniform(size=(250, 1)) < 0.7) * 1.0}, 250), LeaderboardOptions(
        interval="benchmark"))["rows"][0]
    assert whole["ci_low"] < whole["score"] < whole["ci_high"]
    # two repeats show the debates' spread: then the two-stage FPC interval, narrower than the population one
    items = rng.uniform(0.2, 0.8, size=(152, 1))  # items differ much more than their debates do
    repeated = {"a": (items + rng.uniform(-0.1, 0.1, size=(152, 2))).round(2)}
    two_stage = build(run_data(repeated, 250), LeaderboardOptions(interval="benchmark"))["rows"][0]
    plain = build(run_data(repeated, 250), LeaderboardOptions())["rows"][0]
    assert two_stage["ci_method"] == "t, two-stage FPC"
    assert two_stage["ci_high"] - two_stage["ci_low"] < plain["ci_high"] - plain["ci_low"]


@pytest.mark.parametrize("items", [73, 87, 92, 109, 117, 120, 876])
def test_comparisons_of_non_binary_scores_at_every_item_count_have_an_mde(items):
    """Issue 33, item 17: at these counts statsmodels' ``solve_power`` returns a one-element array
    (at 73 a negative one) and ``float()`` of it ended the run with a traceback."""
    rng = np.random.default_rng(items)
    scores = {"a": rng.integers(0, 2, (items, 2)) * 1.0, "b": rng.integers(0, 2, (items, 2)) * 1.0}
    board = build(run_data(scores), LeaderboardOptions())
    comparison = board["comparisons"][0]
    a, b = scores["a"].mean(axis=1), scores["b"].mean(axis=1)
    sd = float(np.std(a - b, ddof=1))
    assert comparison["test"] == "permutation" and comparison["mde"] > 0
    power = TTestPower().power(effect_size=comparison["mde"] / sd, nobs=items, alpha=0.05)
    assert power == pytest.approx(0.8, abs=1e-9)


def test_leaderboard_show_writes_the_board_at_73_items(tmp_path, capsys):
    folder = tmp_path / "run"
    folder.mkdir()
    rng = np.random.default_rng(73)
    configurations = {"a": {"label": "a"}, "b": {"label": "b"}}
    (folder / "run.json").write_text(json.dumps({"configurations": configurations, "tasks": {"A": {}}}))
    lines = [json.dumps(record(cid, item, repeat, float(rng.integers(0, 2))))
             for cid in configurations for item in range(73) for repeat in range(2)]
    (folder / "records.jsonl").write_text("\n".join(lines) + "\n")
    main(["leaderboard", "show", str(folder)])
    board = json.loads((folder / "leaderboard.json").read_text())
    assert board["comparisons"][0]["items"] == 73 and board["comparisons"][0]["mde"] > 0
    assert "MDE" in capsys.readouterr().out


def test_each_comparison_shows_the_interval_of_its_own_test_and_the_mde_at_the_star_s_level():
    """Issue 33, item 18: the interval was always a paired t; with --test bootstrap the bootstrap
    interval was computed and dropped; the MDE used alpha before correction beside a Holm star."""
    rng = np.random.default_rng(18)
    binary = {c: (rng.uniform(size=(120, 1)) < p) * 1.0 for c, p in zip("abcd", (0.5, 0.6, 0.7, 0.55))}
    board = build(run_data(binary), LeaderboardOptions())
    family = len(board["comparisons"])  # b, c and d against the reference a, and the best against the runner-up
    assert family == 4
    for c in board["comparisons"]:
        x, y = binary[c["a"]][:, 0], binary[c["b"]][:, 0]
        n10, n01 = int(np.sum(x > y)), int(np.sum(x < y))
        expected = mcnemar_interval(n10, n01, 120)
        assert c["test"] == "mcnemar" and (c["delta_ci_low"], c["delta_ci_high"]) == (expected.low, expected.high)
        assert (c["delta_ci_low"] <= 0 <= c["delta_ci_high"]) == (c["p_value"] >= 0.05)
        # Holm stars every p below 0.05 / 4 whatever the others: the MDE is stated at that level
        assert c["mde"] == mcnemar_mde(120, (n10 + n01) / 120, alpha=0.05 / 4) and c["mde_alpha"] == 0.05 / 4
        assert "(0.05 over 4 comparisons)" in c["mde_method"]
    uncorrected = build(run_data(binary), LeaderboardOptions(correction="none"))["comparisons"][0]
    assert uncorrected["mde_alpha"] == 0.05 and uncorrected["mde"] < board["comparisons"][0]["mde"]
    assert "finds 4 times in 5" in board["statement"] and "not never" in board["statement"]

    repeated = {c: rng.integers(0, 2, (40, 3)) * 1.0 for c in "ab"}
    order = sorted(range(40), key=lambda item: f"A/i{item}")  # the board pairs items in key order
    means = {c: table.mean(axis=1)[order] for c, table in repeated.items()}
    for test in ("permutation", "bootstrap"):
        c = build(run_data(repeated), LeaderboardOptions(test=test, resamples=1999))["comparisons"][0]
        first, second = means[c["a"]], means[c["b"]]
        if test == "bootstrap":
            result, interval = S.paired_bootstrap(first, second, resamples=1999, seed=0)
        else:
            result, interval = sign_flip(first, second, resamples=1999, seed=0)
        assert c["test"] == test and c["p_value"] == result.p_value
        assert (c["delta_ci_low"], c["delta_ci_high"]) == (interval.low, interval.high)
        assert c["delta_ci_method"] == interval.method
