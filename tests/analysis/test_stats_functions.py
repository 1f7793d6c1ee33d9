"""The leaderboard's statistics equal scipy / statsmodels (to 1e-9) on fixed fixtures."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.proportion import proportion_confint

from madeval.analysis import stats as S

ALTERNATIVES = ("two-sided", "less", "greater")
TOLERANCE = 1e-9


def mean_difference(x, y, axis):
    return np.mean(x - y, axis=axis)


def scipy_exact_permutation(x, y, alternative):
    return stats.permutation_test((x, y), mean_difference, permutation_type="samples", n_resamples=np.inf,
                                  alternative=alternative, vectorized=True).pvalue


@pytest.fixture
def binary_pair():
    rng = np.random.default_rng(20240601)
    a = (rng.uniform(size=60) < 0.7).astype(float)
    b = np.where(rng.uniform(size=60) < 0.25, 1 - a, a)  # b disagrees with a on about a quarter
    return a, b


def test_stats_mcnemar_equals_statsmodels_and_binomtest(binary_pair):
    a, b = binary_pair
    n10, n01 = int(np.sum((a == 1) & (b == 0))), int(np.sum((a == 0) & (b == 1)))
    table = [[np.sum((a == 1) & (b == 1)), n10], [n01, np.sum((a == 0) & (b == 0))]]
    assert n10 + n01 > 5
    assert abs(S.mcnemar_exact(a, b).p_value - mcnemar(table, exact=True).pvalue) < TOLERANCE
    for alternative in ALTERNATIVES:
        expected = stats.binomtest(n10, n10 + n01, 0.5, alternative=alternative).pvalue
        assert abs(S.mcnemar_exact(a, b, alternative).p_value - expected) < TOLERANCE


def test_stats_mcnemar_without_discordant_pairs_is_one():
    assert S.mcnemar_exact([1, 0, 1], [1, 0, 1]).p_value == 1.0
    with pytest.raises(ValueError):
        S.mcnemar_exact([0.5], [1.0])


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_stats_exact_permutation_on_repeat_means_equals_scipy(alternative):
    # Means over 3 repeats are k/3; scipy runs on the integers k (same p-value, no float noise
    # on ties), madeval on the means themselves, convolving the exact sign-flip distribution.
    rng = np.random.default_rng(7)
    k_a, k_b = rng.integers(0, 4, 14), rng.integers(0, 4, 14)
    k_a[:3] += 0  # keep some equal pairs
    ours = S.paired_permutation(k_a / 3, k_b / 3, alternative)
    assert "exact" in ours.method and "lattice" in ours.method
    assert abs(ours.p_value - scipy_exact_permutation(k_a.astype(float), k_b.astype(float), alternative)) < TOLERANCE


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_stats_exact_permutation_on_continuous_scores_equals_scipy(alternative):
    rng = np.random.default_rng(11)
    x, y = rng.normal(size=12), rng.normal(0.4, 1.0, size=12)
    ours = S.paired_permutation(x, y, alternative)
    assert ours.method.startswith("exact over 2^12")
    assert abs(ours.p_value - scipy_exact_permutation(x, y, alternative)) < TOLERANCE


def test_stats_monte_carlo_permutation_is_seeded_and_close_to_exact():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=40), rng.normal(0.3, 1.0, size=40)
    first = S.paired_permutation(x, y, resamples=20000, seed=5)
    assert first.method.startswith("Monte Carlo")
    assert first == S.paired_permutation(x, y, resamples=20000, seed=5)
    reference = stats.permutation_test((x, y), mean_difference, permutation_type="samples", n_resamples=200000,
                                       vectorized=True, rng=1).pvalue
    assert abs(first.p_value - reference) < 4 * math.sqrt(reference * (1 - reference) / 20000) + 1e-3


def test_stats_bootstrap_interval_and_p_value_by_hand_and_beside_scipy():
    rng = np.random.default_rng(5)
    x, y = rng.uniform(size=50), rng.uniform(size=50)
    result, interval = S.paired_bootstrap(x, y, resamples=3000, seed=9)
    diffs = x - y
    means = np.sort(diffs[np.random.default_rng(9).integers(0, 50, (3000, 50))].mean(axis=-1))
    # one-sided p-values (replicates at most / at least 0, plus one) over 3001; the interval's ends are
    # the k-th smallest and largest replicate, k the least with (k + 1) / 3001 >= 0.025: k = 75
    greater, less = (np.sum(means <= 0) + 1) / 3001, (np.sum(means >= 0) + 1) / 3001
    assert abs(result.delta - diffs.mean()) < TOLERANCE
    assert abs(result.p_value - min(1.0, 2 * min(greater, less))) < TOLERANCE
    assert S.bootstrap_rank(3000, 0.95) == 75 and (75 + 1) / 3001 >= 0.025 > 75 / 3001
    assert (interval.low, interval.high) == (means[74], means[3000 - 75])
    # scipy's percentile interval interpolates between neighbouring replicates: the same to their spacing
    expected = stats.bootstrap((diffs,), np.mean, method="percentile", n_resamples=3000, vectorized=True,
                               rng=np.random.default_rng(9)).confidence_interval
    assert abs(interval.low - expected.low) <= means[75] - means[72]
    assert abs(interval.high - expected.high) <= means[3000 - 73] - means[3000 - 76]


def test_stats_bootstrap_interval_leaves_out_zero_exactly_when_its_p_value_is_below_five_percent():
    rng = np.random.default_rng(21)
    seen = {True: 0, False: 0}
    for run in range(300):
        n = int(rng.integers(5, 40))
        x, y = rng.uniform(size=n), rng.uniform(size=n) + rng.uniform(-0.3, 0.3)
        result, interval = S.paired_bootstrap(x, y, resamples=999, seed=run)
        inside = interval.low <= 0 <= interval.high
        assert inside == (result.p_value >= 0.05), (run, result, interval)
        seen[inside] += 1
    assert min(seen.values()) > 20  # both cases were tried


def test_stats_holm_and_benjamini_hochberg_equal_statsmodels():
    rng = np.random.default_rng(2)
    for size in (1, 2, 7, 30):
        p = rng.uniform(size=size) ** 3
        p[0] = p[-1]  # a tie
        assert np.max(np.abs(np.array(S.holm(p)) - multipletests(p, method="holm")[1])) < TOLERANCE
        assert np.max(np.abs(np.array(S.benjamini_hochberg(p)) - multipletests(p, method="fdr_bh")[1])) < TOLERANCE
        assert np.max(np.abs(np.array(S.adjust(p, "bh")) - stats.false_discovery_control(p, method="bh"))) < TOLERANCE
    assert S.adjust([], "holm") == [] and S.adjust([0.2, 0.01], "none") == [0.2, 0.01]


def test_stats_t_interval_equals_scipy():
    values = np.random.default_rng(4).uniform(0.2, 0.9, size=25)
    interval = S.mean_interval(values)
    low, high = stats.t.interval(0.95, 24, loc=values.mean(), scale=stats.sem(values))
    assert interval.method == "t"
    assert abs(interval.low - low) < TOLERANCE and abs(interval.high - high) < TOLERANCE


def test_stats_wilson_interval_equals_statsmodels_and_stays_in_unit_range():
    values = [1.0] * 17 + [0.0] * 3
    interval = S.mean_interval(values)
    low, high = proportion_confint(17, 20, alpha=0.05, method="wilson")
    assert interval.method == "Wilson"
    assert abs(interval.low - low) < TOLERANCE and abs(interval.high - high) < TOLERANCE
    everything_right = S.mean_interval([1.0] * 12)
    assert 0.0 <= everything_right.low < 1.0 and everything_right.high == 1.0
    near_zero = S.mean_interval([0.0] * 9 + [1 / 3])  # not binary: t, clipped to [0, 1]
    assert near_zero.low == 0.0 and near_zero.high <= 1.0


def test_stats_wilson_and_mcnemar_by_hand():
    """The library calls behind Wilson and exact McNemar against their textbook formulas, written
    out here (Wilson 1927: centre (p + z^2/2n) / (1 + z^2/n), half-width z sqrt(p(1-p)/n +
    z^2/4n^2) / (1 + z^2/n); exact McNemar: twice the binomial tail of the smaller discordant count
    at 1/2, capped at 1), so the check does not compare statsmodels with itself."""
    z = 1.959963984540054
    for right, n in [(17, 20), (1, 3), (5, 10), (0, 7), (40, 41)]:
        p = right / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        low, high = S.wilson(p, n)
        assert abs(low - max(0.0, centre - half)) < TOLERANCE and abs(high - min(1.0, centre + half)) < TOLERANCE
    for n10, n01 in [(7, 2), (3, 3), (10, 0), (1, 4)]:
        a = [1] * n10 + [0] * n01 + [1, 0]
        b = [0] * n10 + [1] * n01 + [1, 0]
        k, m = min(n10, n01), n10 + n01
        expected = min(1.0, 2 * sum(math.comb(m, i) for i in range(k + 1)) / 2 ** m)
        assert abs(S.mcnemar_exact(a, b).p_value - expected) < TOLERANCE


def test_stats_finite_population_correction_by_hand():
    # Cochran: the variance shrinks by (N - n) / (N - 1); two-stage adds f * mean(s_w^2 / K) / n.
    values = [0.0, 1 / 3, 2 / 3, 1.0, 1.0, 2 / 3]
    within = [0.0, 1 / 3, 1 / 3, 0.0, 0.0, 1 / 3]
    n, population, f = 6, 10, 0.6
    s2 = np.var(values, ddof=1)
    variance = ((1 - f) * s2 + f * np.mean(np.array(within) / 3)) / n
    half = stats.t.ppf(0.975, n - 1) * math.sqrt(variance)
    interval = S.mean_interval(values, population=population, within=within, repeats=[3] * 6)
    assert interval.method == "t, two-stage FPC"
    assert abs(interval.low - (np.mean(values) - half)) < TOLERANCE
    assert abs(interval.high - (np.mean(values) + half)) < TOLERANCE
    assert S.fpc(6, 10) == 4 / 9 and S.fpc(10, 10) == 0.0
    # Binary scores on the whole benchmark whose repeats agree on every item: the benchmark score is known.
    whole = S.mean_interval([1.0, 0.0, 1.0], population=3, within=[0.0] * 3, repeats=[2] * 3)
    assert whole.low == whole.high == 2 / 3
    # A sample of a finite benchmark gets Wilson with the effective size n (N - 1) / (N - n).
    part = S.mean_interval([1.0] * 8 + [0.0] * 2, population=50, within=[0.0] * 10, repeats=[3] * 10)
    low, high = S.wilson(0.8, 10 / S.fpc(10, 50))
    assert (part.low, part.high) == (low, high) and part.method == "Wilson with FPC"


def test_stats_benchmark_interval_with_one_repeat_is_the_population_interval_and_says_why():
    """Issue 33, item 15: with one debate per item the debates' randomness cannot be separated from the
    items' spread; the FPC shrank both (37% narrower at 152 of 250 items, a point on the whole benchmark)."""
    ones = [1.0] * 100 + [0.0] * 52
    population = S.mean_interval(ones)
    for repeats in ([1] * 152, [], [2] * 151 + [1]):
        benchmark = S.mean_interval(ones, population=250, within=[None] * 152, repeats=repeats)
        assert (benchmark.low, benchmark.high) == (population.low, population.high) == S.wilson(100 / 152, 152)
        assert benchmark.method == "Wilson; " + S.NOT_SEPARABLE and "cannot be told" in benchmark.method
    whole = S.mean_interval([1.0, 0.0, 1.0, 1.0], population=4, within=[None] * 4, repeats=[1] * 4)
    assert whole.low < 0.75 < whole.high and (whole.low, whole.high) == S.wilson(0.75, 4)
    # scores that are not 0/1 (a mean over repeats, a continuous metric): the t interval, likewise
    values = [0.2, 0.9, 0.4, 0.7, 0.3, 0.8]
    t = S.mean_interval(values, population=6, within=[None] * 6, repeats=[1] * 6)
    half = stats.t.ppf(0.975, 5) * stats.sem(values)
    assert t.method == "t; " + S.NOT_SEPARABLE
    assert abs(t.low - (np.mean(values) - half)) < TOLERANCE and abs(t.high - (np.mean(values) + half)) < TOLERANCE


def test_stats_benchmark_interval_with_one_repeat_covers_the_benchmark_s_expected_score():
    """A direct simulation of the issue's check: a benchmark of 250 items of varying difficulty,
    152 drawn, one debate each (right with the item's own probability); the interval must cover
    the benchmark's expected score (the mean of the 250 probabilities) about 95% of the time. The
    old FPC interval covered it 82.5% of the time; 400 draws tell 0.825 from 0.95 by 7 standard errors."""
    rng = np.random.default_rng(33)
    chance = rng.beta(2.0, 1.2, size=250)  # items of varying difficulty, mean about 0.62
    expected = chance.mean()
    runs, covered = 400, 0
    for _ in range(runs):
        items = rng.choice(250, size=152, replace=False)
        outcomes = (rng.uniform(size=152) < chance[items]).astype(float)
        interval = S.mean_interval(outcomes, population=250, within=[None] * 152, repeats=[1] * 152)
        covered += interval.low <= expected <= interval.high
    assert covered / runs >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / runs), covered


# A macro average over two tasks: task A has 2 items, task B 4; differences a - b per item.
MACRO_A, MACRO_B = [1, 1, 1, 0, 0, 0], [0, 0, 0, 0, 0, 1]
MACRO_STRATA = ["A", "A", "B", "B", "B", "B"]


def test_stats_stratified_permutation_by_hand():
    # Weights 1/(2*2) in A and 1/(2*4) in B: the weighted non-zero differences are 1/4, 1/4, 1/8, -1/8
    # and their sum 1/2 is the macro difference (1 + 0) / 2. Of the 16 sign flips, 3 reach a sum
    # >= 1/2 (+1/4 +1/4 with +1/8 +1/8, +1/8 -1/8 or -1/8 +1/8) and 15 stay <= 1/2.
    result = S.stratified_permutation(MACRO_A, MACRO_B, MACRO_STRATA, "two-sided")
    assert result.test == "stratified permutation" and abs(result.delta - 0.5) < TOLERANCE
    assert abs(result.p_value - 6 / 16) < TOLERANCE
    assert abs(S.stratified_permutation(MACRO_A, MACRO_B, MACRO_STRATA, "greater").p_value - 3 / 16) < TOLERANCE
    assert abs(S.stratified_permutation(MACRO_A, MACRO_B, MACRO_STRATA, "less").p_value - 15 / 16) < TOLERANCE
    # The pooled (micro) test weights every item equally and gives another answer: mean 1/3, p = 5/8.
    pooled = S.paired_permutation(MACRO_A, MACRO_B)
    assert abs(pooled.delta - 1 / 3) < TOLERANCE and abs(pooled.p_value - 10 / 16) < TOLERANCE


@pytest.mark.parametrize("alternative", ALTERNATIVES)
def test_stats_stratified_permutation_equals_scipy_on_weighted_differences(alternative):
    rng = np.random.default_rng(11)
    a, b = rng.integers(0, 4, size=14) / 3, rng.integers(0, 4, size=14) / 3
    strata = ["x"] * 3 + ["y"] * 5 + ["z"] * 6
    weights = np.array([14 / (3 * n) for n in [3] * 3 + [5] * 5 + [6] * 6])
    expected = scipy_exact_permutation(a * weights, b * weights, alternative)
    result = S.stratified_permutation(a, b, strata, alternative)
    assert abs(result.p_value - expected) < TOLERANCE
    macro = np.mean([np.mean((a - b)[[s == t for s in strata]]) for t in "xyz"])
    assert abs(result.delta - macro) < TOLERANCE
    even = S.stratified_permutation(a[:12], b[:12], ["x"] * 6 + ["y"] * 6, alternative)  # equal strata
    assert abs(even.p_value - S.paired_permutation(a[:12], b[:12], alternative).p_value) < TOLERANCE


def test_stats_stratified_interval_by_hand():
    # Task means 3/4 and 1/2: macro 5/8. Variances s^2 = 1/4 and 1/4, so v = 1/16 and 1/12 and
    # the variance of the macro mean is (1/16 + 1/12) / 4; Welch-Satterthwaite df as below.
    strata = [[1.0, 0.0, 1.0, 1.0], [0.5, 0.0, 1.0]]
    v1, v2 = 1 / 16, 1 / 12
    df = (v1 + v2) ** 2 / (v1**2 / 3 + v2**2 / 2)
    half = stats.t.ppf(0.975, df) * math.sqrt((v1 + v2) / 4)
    interval = S.stratified_interval(strata)
    assert abs(interval.low - (5 / 8 - half)) < TOLERANCE and abs(interval.high - min(1.0, 5 / 8 + half)) < TOLERANCE
    assert interval.method == "stratified t (Welch-Satterthwaite df)"
    # With the benchmark sizes N = 8 and 6 and two agreeing repeats of every item: each v shrinks by
    # (1 - n/N) (no spread within items).
    w1, w2 = (1 - 4 / 8) * 1 / 4 / 4, (1 - 3 / 6) * 1 / 4 / 3
    df = (w1 + w2) ** 2 / (w1**2 / 3 + w2**2 / 2)
    half = stats.t.ppf(0.975, df) * math.sqrt((w1 + w2) / 4)
    finite = S.stratified_interval(strata, populations=[8, 6], within=[[0.0] * 4, [0.0] * 3],
                                   repeats=[[2] * 4, [2] * 3])
    assert abs(finite.low - (5 / 8 - half)) < TOLERANCE and finite.method.endswith("two-stage FPC")
    # one repeat of an item: the debates' randomness cannot be separated; the population interval
    single_repeat = S.stratified_interval(strata, populations=[8, 6], within=[[None] * 4, [0.0] * 3],
                                          repeats=[[1] * 4, [2] * 3])
    assert (single_repeat.low, single_repeat.high) == (interval.low, interval.high)
    assert single_repeat.method == "stratified t (Welch-Satterthwaite df); " + S.NOT_SEPARABLE
    single = S.stratified_interval([[1.0, 0.0], [1.0]])
    assert single.low == single.high == 0.75  # a task with one item: no variance estimate
