"""The interval of a difference belongs to its test (issue 33, item 18): McNemar's compatible
interval (Fay and Lumbard 2021) checked against a Monte Carlo of its definition and closed forms, the
sign-flip test and its inversion against scipy's exact permutation test and a brute-force
enumeration, and each interval leaving out 0 exactly when its test's p-value is below 0.05."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from madeval.analysis import difference as D
from madeval.analysis import stats as S

TOLERANCE = 1e-9


def melded_monte_carlo(n10: int, n01: int, n: int, draws: int, seed: int) -> tuple[float, float]:
    """Fay-Lumbard's interval by its Monte Carlo definition: ``T (2B - 1)`` with the Clopper-Pearson
    confidence distributions drawn (T ~ Beta(m, n - m + 1) or Beta(m + 1, n - m), B ~ Beta(n10,
    n01 + 1) for the lower end or Beta(n10 + 1, n01) for the upper), the lower end the smaller of the
    two 2.5% quantiles, the upper the larger of the two 97.5% quantiles."""
    rng = np.random.default_rng(seed)

    def beta(a: int, b: int) -> np.ndarray:  # Beta(0, b) is the point 0, Beta(a, 0) the point 1
        return np.zeros(draws) if a == 0 else np.ones(draws) if b == 0 else rng.beta(a, b, draws)

    m = n10 + n01
    t_low, t_high = beta(m, n - m + 1), beta(m + 1, n - m)
    b_low, b_high = beta(n10, n01 + 1), beta(n10 + 1, n01)
    low = min(np.quantile(t_low * (2 * b_low - 1), 0.025), np.quantile(t_high * (2 * b_low - 1), 0.025))
    high = max(np.quantile(t_low * (2 * b_high - 1), 0.975), np.quantile(t_high * (2 * b_high - 1), 0.975))
    return float(low), float(high)


@pytest.mark.parametrize(("n10", "n01", "n"), [(12, 3, 60), (7, 9, 250), (40, 20, 160), (3, 1, 30), (30, 10, 40)])
def test_mcnemar_interval_equals_a_monte_carlo_of_its_definition(n10, n01, n):
    found = D.mcnemar_interval(n10, n01, n)
    low, high = melded_monte_carlo(n10, n01, n, 400_000, seed=n10 * 1000 + n01)
    assert abs(found.low - low) < 0.004 and abs(found.high - high) < 0.004
    assert found.low < (n10 - n01) / n < found.high


def test_mcnemar_interval_closed_forms_at_the_edges():
    # no discordant pair: the difference lies within +-(1 - 0.025^(1/n)) (the Clopper-Pearson bound on T)
    for n in (5, 20, 300):
        edge = 1 - 0.025 ** (1 / n)
        found = D.mcnemar_interval(0, 0, n)
        assert abs(found.low + edge) < 1e-7 and abs(found.high - edge) < 1e-7
    # every item discordant and on one side: the upper end is 1 (the lower is Clopper-Pearson's on B)
    assert D.mcnemar_interval(20, 0, 20).high == 1.0 and D.mcnemar_interval(0, 20, 20).low == -1.0
    # all discordant pairs on one side, fewer than n: the upper end is T's Clopper-Pearson bound
    found = D.mcnemar_interval(5, 0, 40)
    assert abs(found.high - stats.beta.ppf(0.975, 6, 35)) < 1e-7


def test_mcnemar_interval_leaves_out_zero_exactly_when_mcnemar_rejects():
    checked = 0
    for n in (8, 30, 120):
        for n10, n01 in itertools.product(range(0, min(n, 25) + 1, 2), range(0, min(n, 25) + 1, 3)):
            if n10 + n01 > n:
                continue
            a = [1.0] * n10 + [0.0] * n01 + [1.0] * (n - n10 - n01)
            b = [0.0] * n10 + [1.0] * n01 + [1.0] * (n - n10 - n01)
            p = S.mcnemar_exact(a, b).p_value
            found = D.mcnemar_interval(n10, n01, n)
            assert (found.low <= 0 <= found.high) == (p >= 0.05), (n10, n01, n, p, found)
            checked += 1
    assert checked > 150


def scipy_exact(x, y):
    return stats.permutation_test((x, y), lambda u, v, axis: np.mean(u - v, axis=axis), permutation_type="samples",
                                  n_resamples=np.inf, vectorized=True).pvalue


def test_sign_flip_p_value_equals_scipy_s_exact_permutation_test():
    rng = np.random.default_rng(4)
    x, y = rng.normal(size=11), rng.normal(0.6, 1.0, size=11)  # continuous: all 2^11 flips
    result, _ = D.sign_flip(x, y)
    assert result.method == "exact over 2^11 sign flips"
    assert abs(result.p_value - scipy_exact(x, y)) < TOLERANCE
    k_a, k_b = rng.integers(0, 4, 14), rng.integers(0, 4, 14)  # means over 3 repeats, ties included
    result, _ = D.sign_flip(k_a / 3, k_b / 3)
    assert abs(result.p_value - scipy_exact(k_a.astype(float), k_b.astype(float))) < TOLERANCE
    k_a, k_b = rng.integers(0, 4, 60), rng.integers(0, 4, 60)  # the joint distribution on the lattice
    result, _ = D.sign_flip(k_a / 3, k_b / 3)
    assert "lattice" in result.method
    assert abs(result.p_value - S.paired_permutation(k_a / 3, k_b / 3).p_value) < TOLERANCE
    for alternative in ("less", "greater"):
        one_sided, _ = D.sign_flip(k_a / 3, k_b / 3, alternative)
        assert abs(one_sided.p_value - S.paired_permutation(k_a / 3, k_b / 3, alternative).p_value) < TOLERANCE


def test_sign_flip_interval_is_the_shifts_scipy_s_test_does_not_reject():
    rng = np.random.default_rng(8)
    x, y = rng.normal(size=10), rng.normal(0.5, 1.0, size=10)
    _, interval = D.sign_flip(x, y)
    diffs = x - y
    for end, outward in ((interval.low, -1), (interval.high, 1)):
        assert scipy_exact(diffs - (end - outward * 1e-9), np.zeros(10)) >= 0.05
        assert scipy_exact(diffs - (end + outward * 1e-6), np.zeros(10)) < 0.05


def test_sign_flip_joint_distribution_equals_brute_force_enumeration():
    rng = np.random.default_rng(12)
    ks = rng.integers(-3, 4, 13)
    joint = D._joint(ks, 3)
    chosen = np.array(list(itertools.product((0, 1), repeat=13)))
    sizes, totals = chosen.sum(axis=1), chosen @ ks
    for numerator, denominator in ((-1, 2), (-1, 7), (0, 1), (1, 10), (1, 3), (9, 20)):
        # in integers: a subset's mean totals / (3 sizes) against the shift numerator / denominator
        greater = np.mean(totals * denominator <= numerator * 3 * sizes)
        less = np.mean(totals * denominator >= numerator * 3 * sizes)
        found = joint.tails(numerator / denominator)
        assert np.allclose(found, (greater, less), atol=1e-12), (numerator, denominator)


def test_sign_flip_monte_carlo_is_seeded_and_close_to_scipy():
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=40), rng.normal(0.3, 1.0, size=40)
    first = D.sign_flip(x, y, resamples=20000, seed=5)
    assert first[0].method.startswith("Monte Carlo") and first == D.sign_flip(x, y, resamples=20000, seed=5)
    reference = stats.permutation_test((x, y), lambda u, v, axis: np.mean(u - v, axis=axis),
                                       permutation_type="samples", n_resamples=200000, vectorized=True,
                                       rng=1).pvalue
    assert abs(first[0].p_value - reference) < 4 * math.sqrt(reference * (1 - reference) / 20000) + 1e-3
    low, high = stats.ttest_rel(x, y).confidence_interval()  # the t interval: close, not the same
    assert abs(first[1].low - low) < 0.05 and abs(first[1].high - high) < 0.05


def test_stratified_sign_flip_equals_the_stratified_permutation_test():
    a, b = [1, 1, 1, 0, 0, 0, 0.5, 1], [0, 0, 0, 0, 0, 1, 0, 0.5]
    strata = ["A", "A", "B", "B", "B", "B", "B", "B"]
    weights = [8 / (2 * 2)] * 2 + [8 / (2 * 6)] * 6
    result, interval = D.sign_flip(a, b, weights=weights)
    expected = S.stratified_permutation(a, b, strata)
    assert result.test == "stratified permutation"
    assert abs(result.p_value - expected.p_value) < TOLERANCE and abs(result.delta - expected.delta) < TOLERANCE
    assert interval.low < result.delta < interval.high


def test_each_interval_leaves_out_zero_exactly_when_its_test_rejects():
    """Before, the interval was always a paired t while the p-value came from McNemar or the
    permutation test: they disagreed in 6 of 540 A/A comparisons."""
    rng = np.random.default_rng(2024)
    seen = {True: 0, False: 0}
    for run in range(240):
        n = int(rng.integers(8, 120))
        shift = rng.uniform(-0.25, 0.25)
        kind = run % 3
        if kind == 0:  # means over 3 repeats: the lattice (exact)
            x, y = rng.binomial(3, 0.6, n) / 3, rng.binomial(3, float(np.clip(0.6 + shift, 0, 1)), n) / 3
        elif kind == 1:  # continuous: Monte Carlo beyond 16 items
            x, y = rng.uniform(size=n), rng.uniform(size=n) + shift
        else:  # weighted (a macro row)
            x, y = rng.uniform(size=n), rng.uniform(size=n) + shift
        weights = rng.choice([0.5, 2.0], size=n) if kind == 2 else None
        result, interval = D.sign_flip(x, y, weights=weights, resamples=999, seed=run)
        inside = interval.low <= 0 <= interval.high
        assert inside == (result.p_value >= 0.05), (run, result, interval)
        seen[inside] += 1
    assert min(seen.values()) > 30


def test_too_few_items_leave_an_end_open():
    _, interval = D.sign_flip([0.3, 0.9, 0.5], [0.1, 0.2, 0.4])  # 8 flips: p is at least 1/4
    assert interval.low is None and interval.high is None and "too few items" in interval.method
