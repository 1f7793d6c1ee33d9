"""A task scored exactly 0 or 1 gets intervals inside [0, 1] and every chart draws (issue 12, defect 4).

On the old main, ``wilson(0, 3)`` gave a lower end of 5.6e-17 (and ``wilson(1, 10)`` an upper end
of 0.9999999999999999): the score chart then got a negative error bar, matplotlib raised, and a run
ended with exit 1 after writing its leaderboard files.
"""

from __future__ import annotations

import statistics
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.proportion import proportion_confint

from madeval.analysis import stats as S
from madeval.analysis.run_data import RunData
from madeval.leaderboard import charts
from madeval.leaderboard.table import build
from madeval.settings.board_options import LeaderboardOptions

ITEM_COUNTS = range(1, 501)
#: Item counts rendered to PNG/SVG: 3 and 7 had a lower end above 0 on the old main, 10 and 13 an
#: upper end below 1; 1, 2, 499 and 500 are the ends of the range.
RENDERED = (1, 2, 3, 7, 10, 13, 100, 499, 500)


def _inside(low: float, point: float, high: float) -> bool:
    return 0.0 <= low <= point <= high <= 1.0


def test_crash_wilson_is_exactly_0_and_1_at_the_ends_and_equals_statsmodels():
    """Every n from 1 to 500 with 0, 1, n/2, n-1 and n successes: statsmodels' numbers to 1e-12, the
    point inside, and the end at a score of 0 (of 1) exactly 0 (exactly 1)."""
    for n in ITEM_COUNTS:
        for successes in sorted({0, 1, n // 2, n - 1, n}):
            p = successes / n
            low, high = S.wilson(p, n)
            ref_low, ref_high = proportion_confint(successes, n, alpha=0.05, method="wilson")
            assert abs(low - ref_low) < 1e-12 and abs(high - ref_high) < 1e-12, (successes, n)
            assert _inside(low, p, high), (successes, n, low, high)
        assert S.wilson(0.0, n)[0] == 0.0 and S.wilson(1.0, n)[1] == 1.0, n


def test_crash_every_interval_of_a_0_or_1_score_contains_it_inside_the_unit_range():
    """Wilson, Wilson with the FPC (a benchmark of 500 and of 1000 items), the stratified t of a
    macro group and the t of bounded non-binary scores, at every n from 1 to 500."""
    for n in ITEM_COUNTS:
        for value in (0.0, 1.0):
            scores = [value] * n
            for population in (None, 500, 1000):
                interval = S.mean_interval(scores, population=population)
                assert _inside(interval.low, value, interval.high), (n, value, population, interval)
                assert (interval.low if value == 0.0 else interval.high) == value, (n, value, population)
            macro = S.stratified_interval([scores, [value] * (n + 1)])  # no spread: the point
            assert macro.low == macro.high == value, (n, value, macro)
            if n >= 2:  # one half-right item among n - 1 at the bound: t, clipped to [0, 1]
                mixed = [value] * (n - 1) + [0.5]
                t = S.mean_interval(mixed)
                assert t.method == "t" and _inside(t.low, statistics.fmean(mixed), t.high), (n, value, t)
                grouped = S.stratified_interval([mixed, [value] * 3])
                macro_mean = statistics.fmean([statistics.fmean(mixed), value])
                assert _inside(grouped.low, macro_mean, grouped.high), (n, value, grouped)
    assert S.enclose(0.0, 5.6e-17, 0.56, bounded=True) == (0.0, 0.56)
    assert S.enclose(1.0, 0.44, 0.9999999999999999, bounded=True) == (0.44, 1.0)
    assert S.enclose(2.0, 1.5, 2.5, bounded=False) == (1.5, 2.5)  # an unbounded metric keeps its ends


def _record(config: str, item: int, score: float) -> dict:
    return {"unit": {"key": f"{config}/A/{item}/0", "config": config, "task": "A", "item": f"i{item}", "repeat": 0},
            "metrics": {"accuracy": score}, "parse_failure": False, "decision_success": score == 1.0, "turns": 1,
            "calls": 2, "tokens": {"total": 10}, "wall_s": 1.0, "llm_s": 0.5, "oracle": False}


def _configuration(value: float, n: int) -> tuple[str, dict]:
    """A configuration per (score, n): ``agents`` = n lines the n up as a scaling series per score."""
    cid = f"score{value:g}-n{n}"
    return cid, {"label": cid, "source": "run", "agents": n, "decider": f"always{value:g}"}


@pytest.fixture(scope="module")
def bound_board() -> dict:
    """Real leaderboard rows (``table.build``) of a task scored 0 and one scored 1 on n items, for
    every n from 1 to 500, gathered into one board whose configurations differ in ``agents`` = n."""
    configurations, rows = {}, []
    for n in ITEM_COUNTS:
        mine = dict(_configuration(value, n) for value in (0.0, 1.0))
        records = [_record(cid, item, value) for value, cid in zip((0.0, 1.0), mine) for item in range(n)]
        data = RunData(Path("hand"), {"tasks": {"A": {}}}, mine, records)
        rows += build(data, LeaderboardOptions())["rows"]
        configurations.update(mine)
    return {"configurations": configurations, "rows": rows}


def test_crash_every_chart_draws_scores_of_0_and_1_at_every_n(bound_board, tmp_path):
    """The real chart code for a score of 0 and of 1 at every n from 1 to 500, in seconds.

    Rendering 1000 configurations to PNG would take minutes, yet what crashed was matplotlib
    refusing the error bars when a chart was *built* (``errorbar`` checks them when called, before
    any drawing). So: the score chart and the scaling chart are built (not saved) from the real rows
    of all 1000 configurations, each bar and point with its error bar; the error bar lengths they
    pass to matplotlib are checked to be non-negative and to end inside [0, 1], and their interval
    to be exactly 0 (1) at the score's own end. Then every chart kind (score, turns, decisions,
    LLM time, scaling) is rendered to PNG and SVG by ``draw_all`` for a spread of n, including the
    n whose rounding broke the old main.
    """
    rows = charts.chart_rows(bound_board)
    assert len(rows) == 2 * len(ITEM_COUNTS)
    for row in rows:
        assert _inside(row["ci_low"], row["score"], row["ci_high"]), row
        assert (row["ci_low"] if row["score"] == 0.0 else row["ci_high"]) == row["score"], row
    below, above = charts.error_bars([r["score"] for r in rows], [r["ci_low"] for r in rows],
                                     [r["ci_high"] for r in rows])
    scores = np.array([r["score"] for r in rows])
    assert np.all(below >= 0) and np.all(above >= 0)
    assert np.all(scores - below >= 0) and np.all(scores + above <= 1)
    assert charts._score(bound_board, rows) is not None  # builds every bar with its error bar
    series = charts.scaling_series(bound_board)
    assert sorted(len(s) for s in series["agents"]) == [500, 500]
    plotted = charts.scaling_data(bound_board, rows, "agents", series["agents"])["A"]
    for entry in plotted:
        low, high = charts.error_bars(entry["score"], entry["ci_low"], entry["ci_high"])
        assert entry["x"] == [float(n) for n in ITEM_COUNTS] and np.all(low >= 0) and np.all(high >= 0)
    assert charts._scaling(bound_board, rows, "agents", series["agents"]) is not None

    shown = {cid for value in (0.0, 1.0) for cid, _ in [_configuration(value, n) for n in RENDERED]}
    spread = {"configurations": {c: d for c, d in bound_board["configurations"].items() if c in shown},
              "rows": [r for r in bound_board["rows"] if r["config"] in shown]}
    written = charts.draw_all(spread, tmp_path)
    assert sorted(p.name for p in written) == ["decisions.png", "llm-time.png", "scaling-agents.png",
                                               "score.png", "turns.png"]
    assert all(p.stat().st_size > 10_000 and p.with_suffix(".svg").is_file() for p in written)
