"""Minimum detectable effects and paired sample sizes (:mod:`madeval.analysis.power`), checked
against statsmodels' power functions, Connor's formula by hand and seeded simulations of the tests
the leaderboard runs; the leaderboard and ``madeval sample-size --paired`` carry them."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from statsmodels.stats.power import NormalIndPower, TTestPower

from helpers import run_quietly
from madeval.analysis.compare import compare_family
from madeval.analysis.power import (
    connor_sample_size,
    detectable,
    mcnemar_items,
    mcnemar_mde,
    mcnemar_power,
    paired_sample_size,
    t_mde,
)
from madeval.analysis.stats import mcnemar_exact, paired_permutation
from madeval.cli.main import main
from madeval.errors import UsageError
from madeval.leaderboard import LeaderboardOptions
from madeval.leaderboard.pilot import pilot_spread
from madeval.settings.config import build_settings
from madeval.simulator import simulate


def simulated_mcnemar_power(n: int, psi: float, delta: float, runs: int, seed: int) -> float:
    """Share of ``runs`` seeded samples of ``n`` paired 0/1 items (discordance ``psi``, difference
    ``delta``) on which the leaderboard's exact McNemar test is significant at 0.05."""
    rng = np.random.default_rng(seed)
    cells = rng.multinomial(n, [(psi + delta) / 2, (psi - delta) / 2, 1 - psi], size=runs)
    hits = 0
    for n10, n01, _ in cells:
        a = [1.0] * n10 + [0.0] * n01 + [1.0] * (n - n10 - n01)
        b = [0.0] * n10 + [1.0] * n01 + [1.0] * (n - n10 - n01)
        hits += mcnemar_exact(a, b).p_value < 0.05
    return hits / runs


def within_monte_carlo_error(rate: float, expected: float, runs: int) -> bool:
    return abs(rate - expected) <= 3 * math.sqrt(expected * (1 - expected) / runs)


def test_power_mcnemar_mde_has_80_percent_power_in_a_seeded_simulation_of_the_test():
    n, psi, runs = 120, 0.25, 3000
    mde = mcnemar_mde(n, psi)
    assert 0 < mde < psi
    assert within_monte_carlo_error(simulated_mcnemar_power(n, psi, mde, runs, seed=1), 0.8, runs)
    # the smallest such difference: 80% of it is clearly below 80% power
    smaller = simulated_mcnemar_power(n, psi, 0.8 * mde, runs, seed=2)
    assert smaller < 0.8 - 3 * math.sqrt(0.16 / runs)
    assert within_monte_carlo_error(smaller, mcnemar_power(n, psi, 0.8 * mde), runs)


def test_power_connor_formula_by_hand_and_the_exact_test_is_more_conservative():
    # (1.959964 * sqrt(0.2) + 0.841621 * sqrt(0.2 - 0.01))^2 / 0.1^2 = (0.876523 + 0.366853)^2 / 0.01
    assert connor_sample_size(0.1, 0.2) == pytest.approx(154.598, abs=0.01)
    n = mcnemar_items(0.1, 0.2)
    assert mcnemar_power(n, 0.2, 0.1) >= 0.8 > mcnemar_power(n - 1, 0.2, 0.1)
    assert n > 155  # the exact test needs more items than the normal approximation says
    # with many discordant pairs the exact test's MDE approaches Connor's
    connor = __import__("scipy").optimize.brentq(lambda d: connor_sample_size(d, 0.2) - 5000, 1e-4, 0.2)
    assert mcnemar_mde(5000, 0.2) == pytest.approx(connor, rel=0.03)


def test_power_mcnemar_mde_is_none_without_discordance_or_with_too_few_pairs():
    assert mcnemar_mde(50, 0.0) is None
    assert mcnemar_mde(4, 0.5) is None  # at most 4 discordant pairs: p >= 2 / 16 > 0.05, never significant


def test_power_t_mde_agrees_with_statsmodels_and_a_simulation_of_the_permutation_test():
    n, sd, runs = 40, 0.3, 1500
    mde = t_mde(n, sd)
    assert TTestPower().power(effect_size=mde / sd, nobs=n, alpha=0.05) == pytest.approx(0.8, abs=1e-6)
    rng = np.random.default_rng(3)
    hits = sum(paired_permutation(rng.normal(mde, sd, n), np.zeros(n), resamples=499, seed=i).p_value < 0.05
               for i in range(runs))
    assert within_monte_carlo_error(hits / runs, 0.8, runs)
    assert t_mde(1, sd) is None and t_mde(n, 0.0) is None


def test_power_paired_sample_sizes_agree_with_statsmodels_and_a_benchmark_size_only_bounds_them():
    expected = math.ceil(TTestPower().solve_power(effect_size=0.1 / 0.5, nobs=None, alpha=0.05, power=0.8))
    assert paired_sample_size(0.1, sd=0.5) == expected == 199
    # the board's paired tests have no finite-population correction, so the size has none either
    assert paired_sample_size(0.1, sd=0.5, population=500) == 199
    n = paired_sample_size(0.08, discordance=0.3)
    assert mcnemar_power(n, 0.3, 0.08) >= 0.8 > mcnemar_power(n - 1, 0.3, 0.08)
    assert within_monte_carlo_error(simulated_mcnemar_power(n, 0.3, 0.08, 1500, seed=4), mcnemar_power(n, 0.3, 0.08),
                                    1500)
    assert paired_sample_size(0.08, discordance=0.3, population=n) == n
    with pytest.raises(UsageError, match=f"needs {n} items .* has {n - 1}; with all of them its power is "
                                         f"{mcnemar_power(n - 1, 0.3, 0.08):.2f}"):
        paired_sample_size(0.08, discordance=0.3, population=n - 1)
    reached = TTestPower().power(effect_size=0.2, nobs=150, alpha=0.05)
    with pytest.raises(UsageError, match=f"with all of them its power is {reached:.2f}"):
        paired_sample_size(0.1, sd=0.5, population=150)


def test_power_sample_size_gives_the_promised_power_for_the_test_the_board_runs(capsys):
    """Issue 33, item 16: ``--delta 0.1 --discordance 0.46 1000`` printed 274 (Connor's n with an FPC),
    at which the exact McNemar test has power 0.657; the number printed must reach 0.80."""
    main(["sample-size", "--paired", "--delta", "0.1", "--discordance", "0.46", "1000"])
    done = capsys.readouterr()
    n = int(done.out.strip())
    assert mcnemar_power(n, 0.46, 0.1) >= 0.8 > mcnemar_power(n - 1, 0.46, 0.1)
    assert n == 377 and round(mcnemar_power(274, 0.46, 0.1), 3) == 0.657
    assert "no finite-population correction" in done.err
    # the exact power by a seeded simulation of the board's own test at that n
    assert within_monte_carlo_error(simulated_mcnemar_power(n, 0.46, 0.1, 1500, seed=8), mcnemar_power(n, 0.46, 0.1),
                                    1500)
    with pytest.raises(SystemExit) as refused:
        main(["sample-size", "--paired", "--delta", "0.1", "--discordance", "0.46", "300"])
    assert refused.value.code == 2
    assert "needs 377 items" in capsys.readouterr().err


def test_power_leaderboard_comparisons_carry_the_mde_of_their_test():
    options = LeaderboardOptions()
    rng = np.random.default_rng(5)
    items = [f"t/{i}" for i in range(60)]
    a = {k: float(v) for k, v in zip(items, rng.random(60) < 0.7)}
    b = {k: float(v) for k, v in zip(items, rng.random(60) < 0.5)}
    c = {k: float(v) for k, v in zip(items, rng.random(60))}  # not 0/1: the permutation test
    d = {k: float(v) for k, v in zip(items, rng.random(60))}
    binary = compare_family({"A": a, "B": b}, [("A", "B")], options)[0]
    psi = sum(a[k] != b[k] for k in items) / 60
    assert binary["test"] == "mcnemar" and binary["mde"] == mcnemar_mde(60, psi)
    continuous = compare_family({"C": c, "D": d}, [("C", "D")], options)[0]
    sd = float(np.std([c[k] - d[k] for k in items], ddof=1))
    effect = TTestPower().solve_power(effect_size=None, nobs=60, alpha=0.05, power=0.8)
    assert continuous["test"] == "permutation" and continuous["mde"] == pytest.approx(effect * sd, rel=1e-6)
    assert TTestPower().power(effect_size=continuous["mde"] / sd, nobs=60, alpha=0.05) == pytest.approx(0.8, abs=1e-9)
    same = compare_family({"A": a, "B": dict(a)}, [("A", "B")], options)[0]
    assert same["mde"] is None and "no discordant pair" in same["mde_method"]


def test_power_stratified_mde_is_the_normal_approximation_of_the_macro_difference():
    x, y = [0.2, 0.5, 0.9, 0.4, 0.7, 0.1, 0.3], [0.1, 0.6, 0.4, 0.4, 0.2, 0.0, 0.3]
    strata = ["p", "p", "p", "q", "q", "q", "q"]
    diffs = np.subtract(x, y)
    variance = (np.var(diffs[:3], ddof=1) / 3 + np.var(diffs[3:], ddof=1) / 4) / 4
    effect = NormalIndPower().solve_power(effect_size=None, nobs1=1, alpha=0.05, power=0.8, ratio=0)
    found = detectable(x, y, "stratified permutation", 0.05, strata=strata)
    assert found.mde == pytest.approx(effect * math.sqrt(variance), rel=1e-6)
    assert effect == pytest.approx(1.959964 + 0.841621, abs=1e-5)  # z_(1 - alpha/2) + z_power


@pytest.fixture(scope="module")
def pilot_run(generated_tasks, tmp_path_factory):
    """A single agent against self-consistency on 40 items of arith_mc, one repeat: 0/1 scores."""
    folder = tmp_path_factory.mktemp("pilot") / "run"
    options = {"tasks": ["arith_mc"], "limit": 40, "cache": "off", "output_path": str(folder),
               "runs": [{"preset": "baseline_cot"}, {"preset": "self_consistency"}]}
    with simulate(tasks=generated_tasks.values(), accuracy=0.6) as sim:
        result, _ = run_quietly(build_settings({**options, "base_url": sim.base_url}))
    return result.folder


def test_power_sample_size_paired_from_a_pilot_run(pilot_run, capsys):
    records = [json.loads(line) for line in (pilot_run / "records.jsonl").read_text().splitlines()]
    labels = {cid: c["label"] for cid, c in json.loads((pilot_run / "run.json").read_text())["configurations"].items()}
    score = {(labels[r["unit"]["config"]], r["unit"]["item"]): r["metrics"]["accuracy"] for r in records}
    items = {item for _, item in score}
    psi = sum(score[("baseline_cot", i)] != score[("self_consistency", i)] for i in items) / len(items)
    assert psi > 0
    found = pilot_spread(str(pilot_run), "baseline_cot", "self_consistency")
    assert (found.items, found.discordance, found.sd) == (40, psi, None)
    delta = round(psi / 2, 3)
    main(["sample-size", "--paired", "--pilot", str(pilot_run), "--a", "baseline_cot", "--b", "self_consistency",
          "--delta", str(delta), "1000"])
    out = capsys.readouterr()
    assert int(out.out.strip()) == paired_sample_size(delta, discordance=psi, population=1000)
    assert "40 shared items" in out.err
    board = json.loads((pilot_run / "leaderboard.json").read_text())
    comparison = board["comparisons"][0]
    assert comparison["mde"] == mcnemar_mde(40, psi)


@pytest.mark.parametrize("argv", [
    ["sample-size", "--paired", "--delta", "0.1"],
    ["sample-size", "--paired", "--delta", "0.3", "--discordance", "0.2"],
    ["sample-size", "--paired", "--delta", "0.1", "--sd", "0.5", "--alpha", "1.5"],
    ["sample-size"],
])
def test_power_sample_size_bad_input_is_one_line_and_status_2(argv, capsys):
    with pytest.raises(SystemExit) as done:
        main(argv)
    assert done.value.code == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_power_sample_size_paired_from_a_pilot_with_repeats_uses_the_sd_of_differences(generated_tasks, tmp_path,
                                                                                        capsys):
    options = {"tasks": ["arith_mc"], "limit": 30, "repeats": 2, "cache": "off", "output_path": str(tmp_path / "run"),
               "runs": [{"preset": "baseline_cot"}, {"preset": "self_consistency"}]}
    with simulate(tasks=generated_tasks.values(), accuracy=0.6) as sim:
        result, _ = run_quietly(build_settings({**options, "base_url": sim.base_url}))
    configurations = json.loads((result.folder / "run.json").read_text())["configurations"]
    labels = {cid: c["label"] for cid, c in configurations.items()}
    by_item: dict = {}
    for line in (result.folder / "records.jsonl").read_text().splitlines():
        r = json.loads(line)
        by_item.setdefault((labels[r["unit"]["config"]], r["unit"]["item"]), []).append(r["metrics"]["accuracy"])
    items = sorted({item for _, item in by_item})
    diffs = [np.mean(by_item[("baseline_cot", i)]) - np.mean(by_item[("self_consistency", i)]) for i in items]
    sd = float(np.std(diffs, ddof=1))
    found = pilot_spread(str(result.folder), "baseline_cot", "self_consistency")
    assert found.discordance is None and found.sd == pytest.approx(sd, rel=1e-12)  # repeats: not 0/1
    main(["sample-size", "--paired", "--pilot", str(result.folder), "--a", "baseline_cot", "--b", "self_consistency",
          "--delta", "0.1"])
    expected = math.ceil(TTestPower().solve_power(effect_size=0.1 / sd, nobs=None, alpha=0.05, power=0.8))
    assert int(capsys.readouterr().out.strip()) == expected
