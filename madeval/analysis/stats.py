"""Paired tests, family-wise corrections and confidence intervals for leaderboards.

The standard statistics come from statsmodels and scipy: Benjamini-Hochberg (``multipletests``),
the Wilson interval (statsmodels' ``proportion_confint``, written out: :func:`wilson` says why),
Student t's quantile (``scipy.special.stdtrit``) and the exact McNemar test (``mcnemar`` /
``binomtest``). madeval's own code is what they lack: the exact paired permutation test on a
lattice, its stratified (macro-average) form, the paired bootstrap p-value, the two-stage
finite-population variance and the stratified interval; and Holm (:func:`holm` says why). Every
function works on plain sequences of floats and is checked against scipy / statsmodels or by hand
in ``tests/test_stats_*``. Paired tests take two equally long sequences ``a`` and ``b`` of per-item
scores (repeats already averaged within each item) and test the mean difference ``a - b``.
``alternative`` follows scipy: ``"two-sided"``, ``"less"`` (a is lower) or ``"greater"``.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Sequence

import numpy as np

# scipy.stats and statsmodels are imported inside the statistical tests that use them: they take
# 1.5 to 3 s to import, most of a short run's start-up and wrap-up. The intervals every
# leaderboard row needs use only scipy.special (the functions scipy.stats calls for them).

ALTERNATIVES = ("two-sided", "less", "greater")
#: Largest number of non-zero differences whose sign flips are enumerated one by one.
ENUMERATE_AT_MOST = 16
#: Largest (items x lattice range) for which the exact permutation distribution is convolved.
LATTICE_WORK_AT_MOST = 50_000_000


@dataclass(frozen=True)
class TestResult:
    """A paired test's outcome: which test, the mean difference, the p-value and how it was got."""

    test: str
    delta: float
    p_value: float
    method: str


@dataclass(frozen=True)
class Interval:
    """A confidence interval (of a mean score, or of a mean paired difference) and how it was computed.

    An interval of a difference can have an open end (None): one no difference can be rejected beyond,
    on too few items."""

    low: float | None
    high: float | None
    method: str


def is_binary(values: Sequence[float]) -> bool:
    """True when every value is exactly 0 or 1."""
    return all(v in (0.0, 1.0) for v in values)


def _check_pair(a: Sequence[float], b: Sequence[float], alternative: str) -> tuple[np.ndarray, np.ndarray]:
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {', '.join(ALTERNATIVES)}")
    return np.asarray(a, dtype=float), np.asarray(b, dtype=float)


def mcnemar_exact(a: Sequence[float], b: Sequence[float], alternative: str = "two-sided") -> TestResult:
    """Exact McNemar test for paired binary outcomes: a binomial test on the discordant pairs.

    With ``n10`` items where only ``a`` is right and ``n01`` where only ``b`` is right, the two-sided
    p-value is statsmodels' ``mcnemar(exact=True)`` (``min(1, 2 * cdf(min(n10, n01)))``); that
    function has no one-sided form, so ``less`` and ``greater`` are scipy's
    ``binomtest(n10, n10 + n01, 0.5, alternative)``, the same test. No discordant pair gives p = 1.
    """
    x, y = _check_pair(a, b, alternative)
    if not (is_binary(x) and is_binary(y)):
        raise ValueError("McNemar's test needs binary scores")
    n10 = int(np.sum((x == 1) & (y == 0)))
    n01 = int(np.sum((x == 0) & (y == 1)))
    n = n10 + n01
    delta = float(np.mean(x - y)) if len(x) else 0.0
    if n == 0:
        p = 1.0  # binomtest needs at least one trial
    elif alternative == "two-sided":
        from statsmodels.stats.contingency_tables import mcnemar  # deferred: see the imports

        p = float(mcnemar([[0, n10], [n01, 0]], exact=True).pvalue)  # the concordant cells do not enter
    else:
        from scipy.stats import binomtest  # deferred: see the imports

        p = float(binomtest(n10, n, 0.5, alternative=alternative).pvalue)
    return TestResult("mcnemar", delta, p, f"exact binomial on {n} discordant pairs ({n10} vs {n01})")


def paired_permutation(
    a: Sequence[float],
    b: Sequence[float],
    alternative: str = "two-sided",
    *,
    resamples: int = 9999,
    seed: int = 0,
) -> TestResult:
    """Paired permutation (sign-flip) test of the mean difference.

    Under the null hypothesis each difference ``a_i - b_i`` is equally likely to have either sign.
    The p-value is exact when the differences lie on a lattice (scores averaged over repeats do:
    multiples of 1/repeats), by convolving the sign-flip distribution, or when at most
    :data:`ENUMERATE_AT_MOST` differences are non-zero, by enumerating the flips; it then equals
    ``scipy.stats.permutation_test(..., permutation_type='samples', n_resamples=np.inf)``.
    Otherwise ``resamples`` seeded random flips give ``(hits + 1) / (resamples + 1)``.
    """
    x, y = _check_pair(a, b, alternative)
    diffs = x - y
    delta = float(np.mean(diffs)) if len(diffs) else 0.0
    nonzero = diffs[diffs != 0]
    if len(nonzero) == 0:
        return TestResult("permutation", delta, 1.0, "exact (all differences are zero)")
    lattice = _lattice(nonzero)
    if lattice is not None:
        p = _lattice_p(lattice, alternative)
        return TestResult("permutation", delta, p, f"exact over 2^{len(nonzero)} sign flips (lattice)")
    if len(nonzero) <= ENUMERATE_AT_MOST:
        signs = 1 - 2 * ((np.arange(2 ** len(nonzero))[:, None] >> np.arange(len(nonzero))) & 1)
        null = (signs * nonzero).sum(axis=1)
        p = _tail_p(null, float(nonzero.sum()), alternative, adjustment=0)
        return TestResult("permutation", delta, p, f"exact over 2^{len(nonzero)} sign flips")
    rng = np.random.default_rng(seed)
    signs = rng.choice(np.array([-1.0, 1.0]), size=(resamples, len(nonzero)))
    null = signs @ nonzero
    p = _tail_p(null, float(nonzero.sum()), alternative, adjustment=1)
    return TestResult("permutation", delta, p, f"Monte Carlo, {resamples} seeded sign flips")


def _lattice(diffs: np.ndarray) -> np.ndarray | None:
    """Integer multiples ``k`` with ``diffs = k / L`` for a small ``L``, or None."""
    found = on_lattice(diffs, LATTICE_WORK_AT_MOST)
    return None if found is None else found[0]


def on_lattice(values: np.ndarray, work_at_most: int) -> tuple[np.ndarray, int] | None:
    """``(k, L)`` with integers ``k`` and ``values = k / L`` for the smallest ``L`` up to 120 (scores
    averaged over repeats are multiples of 1/repeats), when ``len(k) * sum(|k|) <= work_at_most``
    (the size of the convolutions over them); otherwise None."""
    for denominator in range(1, 121):
        scaled = values * denominator
        rounded = np.round(scaled)
        if np.all(np.abs(scaled - rounded) < 1e-9):
            ks = rounded.astype(np.int64)
            if len(ks) * int(np.abs(ks).sum()) <= work_at_most:
                return ks, denominator
            return None
    return None


def _lattice_p(ks: np.ndarray, alternative: str) -> float:
    """Exact p-value of the sum of randomly signed integers ``ks`` against the observed sum."""
    span = int(np.abs(ks).sum())
    dist = np.zeros(2 * span + 1)
    dist[span] = 1.0
    for k in np.abs(ks):
        shifted = np.zeros_like(dist)
        shifted[k:] += 0.5 * dist[: len(dist) - k]
        shifted[: len(dist) - k] += 0.5 * dist[k:]
        dist = shifted
    observed = int(ks.sum()) + span
    at_most, at_least = float(dist[: observed + 1].sum()), float(dist[observed:].sum())
    if alternative == "less":
        return min(1.0, at_most)
    if alternative == "greater":
        return min(1.0, at_least)
    return min(1.0, 2.0 * min(at_most, at_least))


def _tail_p(null: np.ndarray, observed: float, alternative: str, adjustment: int) -> float:
    """scipy's p-value rule: a relative tolerance on ties, two-sided = twice the smaller tail."""
    gamma = abs(np.finfo(float).eps * 100 * observed)
    count = len(null) + adjustment
    less = (np.count_nonzero(null <= observed + gamma) + adjustment) / count
    greater = (np.count_nonzero(null >= observed - gamma) + adjustment) / count
    p = {"less": less, "greater": greater, "two-sided": 2 * min(less, greater)}[alternative]
    return float(min(1.0, max(0.0, p)))


def paired_bootstrap(
    a: Sequence[float],
    b: Sequence[float],
    alternative: str = "two-sided",
    *,
    resamples: int = 9999,
    seed: int = 0,
    level: float = 0.95,
) -> tuple[TestResult, Interval]:
    """Paired bootstrap of the mean difference: a percentile interval and the p-value that belongs to it.

    Items are resampled with replacement ``resamples`` (R) times, seeded (the draws of
    ``scipy.stats.bootstrap`` with the same generator). With ``c_le`` and ``c_ge`` the replicates at
    most and at least 0, the one-sided p-values are ``(c_le + 1) / (R + 1)`` (``greater``) and
    ``(c_ge + 1) / (R + 1)`` (``less``), two-sided twice the smaller, capped at 1. The interval is
    the percentile interval by order statistics: the k-th smallest and k-th largest replicate, with
    k the smallest count for which a one-sided p-value ``(k + 1) / (R + 1)`` reaches ``(1 -
    level) / 2``. So 0 lies outside the interval exactly when the two-sided p is below ``1 -
    level``; scipy's percentile interval interpolates between neighbouring replicates and differs
    by about one replicate's spacing. An interval end that no number of replicates can reach (too
    few resamples) is None.
    """
    x, y = _check_pair(a, b, alternative)
    diffs = x - y
    n = len(diffs)
    if n == 0:
        return TestResult("bootstrap", 0.0, 1.0, "no items"), Interval(0.0, 0.0, "no items")
    delta = float(np.mean(diffs))
    rng = np.random.default_rng(seed)
    means = np.sort(diffs[rng.integers(0, n, (resamples, n))].mean(axis=-1))
    at_most = int(np.searchsorted(means, 0.0, side="right"))
    at_least = resamples - int(np.searchsorted(means, 0.0, side="left"))
    greater, less = (at_most + 1) / (resamples + 1), (at_least + 1) / (resamples + 1)
    p = {"greater": greater, "less": less, "two-sided": min(1.0, 2 * min(greater, less))}[alternative]
    k = bootstrap_rank(resamples, level)
    low, high = (float(means[k - 1]), float(means[resamples - k])) if 1 <= k <= resamples else (None, None)
    method = f"{resamples} seeded paired resamples"
    return TestResult("bootstrap", delta, p, method), Interval(low, high, f"bootstrap percentile, {method}")


def bootstrap_rank(resamples: int, level: float) -> int:
    """The rank k of :func:`paired_bootstrap`'s interval ends: the least k with ``(k + 1) / (resamples
    + 1) >= (1 - level) / 2`` (0 when even no replicate beyond 0 reaches it)."""
    return max(0, math.ceil(round((1 - level) / 2 * (resamples + 1), 9)) - 1)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, the numbers of statsmodels' ``multipletests(method='holm')``.

    Written here because that function runs a full ``gc.collect()`` on every Holm call, once per
    family, at a cost that grows with the objects alive (20-50 ms in a bare interpreter; with it the
    500 boards of ``tests/metrics/test_scores_at_bounds.py`` took 51 s instead of 2 s). The pull request
    to drop the call, statsmodels#8671, was closed unmerged. Checked against it in
    ``tests/analysis/test_stats_functions.py``.
    """
    p = np.asarray(p_values, dtype=float)
    m = len(p)
    order = np.argsort(p, kind="mergesort")
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.minimum(stepped, 1.0)
    return adjusted.tolist()


def benjamini_hochberg(p_values: Sequence[float]) -> list[float]:
    """Benjamini-Hochberg adjusted p-values: statsmodels' ``multipletests(method='fdr_bh')``."""
    from statsmodels.stats.multitest import multipletests  # deferred: see the imports

    return multipletests(p_values, method="fdr_bh")[1].tolist()


CORRECTIONS = {"holm": holm, "bh": benjamini_hochberg, "none": lambda p: [float(v) for v in p]}


def adjust(p_values: Sequence[float], method: str) -> list[float]:
    """Adjust a family of p-values: ``holm``, ``bh`` (Benjamini-Hochberg) or ``none``."""
    if not len(p_values):
        return []
    return CORRECTIONS[method](p_values)


def enclose(point: float, low: float, high: float, bounded: bool) -> tuple[float, float]:
    """An interval's ends made consistent: ``low <= point <= high``, and inside [0, 1] when ``bounded``.

    Every interval here contains its point estimate in exact arithmetic (Wilson's lower end is 0
    at a score of 0 and its upper end 1 at a score of 1), but rounding can leave an end a few ulps
    on the wrong side (Wilson at 0 of 3 gave a lower end of 5.6e-17): a chart then gets a negative
    error bar, which matplotlib refuses. A score bounded in [0, 1] gets an interval inside [0, 1].
    """
    if bounded:
        low, high = max(low, 0.0), min(high, 1.0)
    return min(low, point), max(high, point)


def fpc(n: int, population: int) -> float:
    """The finite-population correction factor for the variance, ``(N - n) / (N - 1)``."""
    if population <= 1 or n >= population:
        return 0.0
    return (population - n) / (population - 1)


#: Why a benchmark interval falls back to the population one (see :func:`separable`).
NOT_SEPARABLE = ("no FPC: with one repeat of an item the debates' own randomness cannot be told from "
                 "the items' spread, so this is the population interval, wider than the benchmark's")


def separable(population: int | None, repeats: Sequence[int]) -> bool:
    """Whether a two-stage interval about a finite benchmark of ``population`` items can be computed.

    Its variance needs each item's spread over its debates (the second stage), which one debate of
    an item does not show: with one repeat (or repeats not given) the spread of single debates
    mixes the items' differences and the debates' randomness. The finite-population correction
    shrinks only the first, so applied to the mix it removes debate randomness that is there (on
    every item of the benchmark, one debate each, it left a point). The interval about the
    population of questions, ``s^2 / n``, then bounds the benchmark's: its expected variance is
    ``S_b^2 / n + S_w^2 / (n K)``, at least the two-stage ``(1 - f) S_b^2 / n + S_w^2 / (n K)``.
    """
    return bool(population) and len(repeats) > 0 and min(repeats) >= 2


def mean_interval(
    item_means: Sequence[float],
    *,
    level: float = 0.95,
    population: int | None = None,
    within: Sequence[float | None] = (),
    repeats: Sequence[int] = (),
) -> Interval:
    """The confidence interval of the mean of per-item means.

    Without ``population`` the interval is about the population of questions (the items are a
    sample of it): Student t over the per-item means, ``s / sqrt(n)``. With ``population`` N it is
    about this finite benchmark's expected score: two-stage sampling (Cochran, Sampling Techniques,
    10.8), variance ``(1 - f) s^2 / n + f * mean(s_w,i^2 / K_i) / n`` with ``f = n / N``, where
    ``within`` holds each item's variance over its ``repeats`` K_i (the debates' own randomness).
    That needs at least two repeats of every item (:func:`separable`); otherwise the interval is the
    population one, and its method says why (:data:`NOT_SEPARABLE`).

    Binary per-item means (0 or 1) get a Wilson score interval, with the effective sample size
    ``n / (1 - f)`` under the FPC (every item's repeats then agree: no spread within); other scores
    in [0, 1] are clipped to [0, 1]. Every interval contains the mean (:func:`enclose`). The mean
    is ``statistics.fmean`` (correctly rounded), the same number the leaderboard row shows.
    """
    values = np.asarray(item_means, dtype=float)
    n = len(values)
    mean = statistics.fmean(values.tolist()) if n else float("nan")
    if n == 0:
        return Interval(mean, mean, "no items")
    note = ""
    if population and not separable(population, repeats):
        population, note = None, "; " + NOT_SEPARABLE
    shrink = fpc(n, population) if population else 1.0
    bounded = bool(np.all((values >= 0) & (values <= 1)))
    if is_binary(values):
        if population and shrink == 0.0:
            return Interval(mean, mean, "exact (every item of the benchmark, its repeats in agreement)")
        n_eff = n / shrink if population else n
        low, high = wilson(mean, n_eff, level)  # already enclosed in [0, 1] around the mean
        return Interval(low, high, "Wilson" + (" with FPC" if population else "") + note)
    if n < 2:
        return Interval(mean, mean, "single item")
    variance = _variance_of_mean(values, population, within, repeats)
    method = ("t, two-stage FPC" if population else "t") + note
    half = t_quantile(0.5 + level / 2, n - 1) * math.sqrt(variance)
    low, high = enclose(mean, mean - half, mean + half, bounded)
    return Interval(low, high, method)


def _variance_of_mean(
    values: np.ndarray, population: int | None, within: Sequence[float | None] = (), repeats: Sequence[int] = ()
) -> float:
    """The variance of the mean of at least two per-item means ``values`` (see :func:`mean_interval`).

    ``s^2 / n`` about the population of questions; with ``population`` N, the two-stage FPC
    variance ``((1 - f) s^2 + f * mean(s_w,i^2 / K_i)) / n`` with ``f = n / N``, where ``within``
    holds each item's variance over its ``repeats`` K_i (the caller has checked :func:`separable`).
    Neither scipy nor statsmodels has two-stage sampling with a finite first stage, hence madeval's code.
    """
    n, between = len(values), float(np.var(values, ddof=1))
    if not population:
        return between / n
    f = n / population
    within_term = float(np.mean([w / k for w, k in zip(within, repeats)]))
    return ((1 - f) * between + f * within_term) / n


def t_quantile(q: float, df: float) -> float:
    """Student t's ``q`` quantile with ``df`` degrees of freedom: ``scipy.stats.t.ppf(q, df)``.

    That is ``scipy.special.stdtrit(df, q)``, called here directly because importing scipy.stats
    costs about a second more than scipy.special (``tests/analysis/test_stats_functions.py`` compares them).
    """
    from scipy.special import stdtrit

    return float(stdtrit(df, q))


def wilson(p: float, n: float, level: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a proportion ``p`` observed on ``n`` (possibly effective) trials.

    statsmodels' ``proportion_confint(p * n, n, method='wilson')``, which takes a non-integer
    effective ``n`` (the finite-population correction) as it is (it divides ``p * n`` by ``n``
    again, which can move ``p`` by an ulp there), with its ends enclosed: exactly 0 at ``p = 0``,
    exactly 1 at ``p = 1``, always ``low <= p <= high`` (:func:`enclose`).

    Its ``wilson`` branch is written out here, operation for operation (so the numbers are the
    same to the bit), because importing statsmodels takes 1.5 s or more (pandas, scipy.stats)
    for a few lines of arithmetic; ``tests/metrics/test_scores_at_bounds.py`` compares the two.
    """
    from scipy.special import ndtri  # scipy.stats.norm.isf(x) is -ndtri(x)

    q = (p * n) / n
    crit = -float(ndtri((1 - level) / 2.0))
    crit2 = crit**2
    denom = 1 + crit2 / n
    center = (q + crit2 / (2 * n)) / denom
    dist = crit * math.sqrt(q * (1.0 - q) / n + crit2 / (4.0 * (n * n)))  # numpy squares an array by multiplying
    dist /= denom
    low, high = min(max(center - dist, 0.0), 1.0), min(max(center + dist, 0.0), 1.0)
    return enclose(p, low, high, bounded=True)


def stratified_permutation(
    a: Sequence[float],
    b: Sequence[float],
    strata: Sequence[str],
    alternative: str = "two-sided",
    *,
    resamples: int = 9999,
    seed: int = 0,
) -> TestResult:
    """Paired sign-flip test of a macro average: the mean over strata of each stratum's mean difference.

    Item ``i`` of stratum ``t`` (``n_t`` items, ``T`` strata) has the weight ``1 / (T n_t)``, so the
    statistic ``sum_i w_i (a_i - b_i)`` is the difference of the macro averages. Under the null
    hypothesis each item's two scores are exchangeable, so each weighted difference is equally
    likely to have either sign, independently of the others: flipping signs item by item keeps
    every stratum's size (a stratified permutation). It is :func:`paired_permutation` on the
    weighted differences ``n w_i (a_i - b_i)``, exact or Monte Carlo by the same rules; with equal
    strata it is the ordinary paired test.
    """
    x, y = _check_pair(a, b, alternative)
    if len(strata) != len(x):
        raise ValueError("every item needs a stratum")
    sizes: dict[str, int] = {}
    for stratum in strata:
        sizes[stratum] = sizes.get(stratum, 0) + 1
    scale = np.array([len(x) / (len(sizes) * sizes[s]) for s in strata]) if len(x) else np.zeros(0)
    inner = paired_permutation(x * scale, y * scale, alternative, resamples=resamples, seed=seed)
    return TestResult("stratified permutation", inner.delta, inner.p_value,
                      f"sign flips within items, items weighted 1/(tasks x task items); {inner.method}")


def stratified_interval(
    strata: Sequence[Sequence[float]],
    *,
    level: float = 0.95,
    populations: Sequence[int | None] | None = None,
    within: Sequence[Sequence[float | None]] | None = None,
    repeats: Sequence[Sequence[int]] | None = None,
) -> Interval:
    """The confidence interval of a macro average: the mean over strata of each stratum's mean.

    The strata (a group's tasks) are fixed and items are sampled within each, so the variance is
    ``sum_t v_t / T^2`` with ``v_t = s_t^2 / n_t`` (about the population of questions) or, with
    ``populations`` N_t, the two-stage FPC variance of :func:`mean_interval` per stratum (when every
    item has two repeats or more, :func:`separable`; otherwise the population variance, and the
    method says why). The interval is Student t with Welch-Satterthwaite degrees of freedom
    ``(sum v_t)^2 / sum(v_t^2 / (n_t - 1))``; scores in [0, 1] are clipped to [0, 1]. A stratum
    with one item has no variance estimate: the interval is then the point.
    """
    means = [statistics.fmean(s) for s in strata if len(s)]
    if not means:
        return Interval(float("nan"), float("nan"), "no items")
    mean = statistics.fmean(means)
    if any(len(s) < 2 for s in strata):
        return Interval(mean, mean, "stratified: a task with one item has no variance estimate")
    note = ""
    if populations and not all(separable(population, repeats[index] if repeats else ())
                               for index, population in enumerate(populations)):
        populations, note = None, "; " + NOT_SEPARABLE
    variances = []
    for index, values in enumerate(strata):
        population = populations[index] if populations else None
        spread = (within[index], repeats[index]) if within and repeats else ((), ())
        variances.append(_variance_of_mean(np.asarray(values, dtype=float), population, *spread))
    count = len(strata)
    variance = sum(variances) / count**2
    method = "stratified t (Welch-Satterthwaite df)" + (", two-stage FPC" if populations else "") + note
    if variance == 0.0:
        return Interval(mean, mean, method + "; no spread")
    df = sum(variances) ** 2 / sum(v * v / (len(s) - 1) for v, s in zip(variances, strata))
    half = t_quantile(0.5 + level / 2, df) * math.sqrt(variance)
    bounded = all(0.0 <= v <= 1.0 for s in strata for v in s)
    low, high = enclose(mean, mean - half, mean + half, bounded)
    return Interval(low, high, method)
