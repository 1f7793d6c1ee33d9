"""The interval of a paired difference that belongs to the test that gave its p-value.

A comparison shows a p-value and a 95% interval of the difference ``a - b``; when they come from
different tests they can contradict each other (a paired t interval beside a McNemar p-value did,
in 6 of 540 comparisons of a calibration). Here each test's interval is the set of differences that
same test does not reject, so 0 lies outside the interval exactly when the two-sided p-value is
below ``1 - level`` (0.05 at the board's 95%):

* **exact McNemar** (0/1 scores): :func:`mcnemar_interval`, Fay and Lumbard's (2021) melded interval
  for the difference of paired proportions, the one compatible with the exact McNemar test (R's
  ``exact2x2::mcnemarExactDP``; no Python library has it).
* **paired sign-flip (permutation) test**: :func:`sign_flip`, the test and its inversion from one
  distribution of sign flips, exact or Monte Carlo; with weights, the stratified test of a macro
  average.
* **paired bootstrap**: :func:`madeval.analysis.stats.paired_bootstrap`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

import numpy as np

from madeval.analysis.stats import ALTERNATIVES, Interval, TestResult, on_lattice

#: Largest number of items whose 2^n sign flips are enumerated one by one.
ENUMERATE_AT_MOST = 16
#: Largest (items x items x lattice range) for which the exact joint distribution of a random
#: subset's size and sum is built (about half a second); beyond it the sign flips are drawn.
JOINT_WORK_AT_MOST = 200_000_000


@lru_cache(maxsize=4096)  # a pure function of four numbers, which repeat across a board's comparisons
def mcnemar_interval(n10: int, n01: int, n: int, level: float = 0.95) -> Interval:
    """Fay and Lumbard's (2021) interval for ``p10 - p01`` compatible with the exact McNemar test.

    ``n10`` items are right only on side a, ``n01`` only on side b, of ``n``. The difference is
    ``T (2 B - 1)`` with ``T = p10 + p01`` (the discordance) and ``B = p10 / T``. Each end melds
    (Fay, Proschan and Brittain 2015) the Clopper-Pearson confidence distributions of the two:
    the lower end is the ``delta`` where ``P(T* (2 B_L - 1) <= delta) = (1 - level) / 2``, with
    ``B_L ~ Beta(n10, m - n10 + 1)`` (m = n10 + n01) and ``T* ~ Beta(m, n - m + 1)`` above 0 or
    ``Beta(m + 1, n - m)`` below it; the upper end mirrors it with ``B_U ~ Beta(n10 + 1, m - n10)``.
    At ``delta = 0`` those probabilities are the exact binomial tails of McNemar's test, so the
    interval leaves out 0 exactly when McNemar's two-sided p-value is below ``1 - level``.
    """
    if not (0 <= n10 and 0 <= n01 and n10 + n01 <= n and n >= 1):
        raise ValueError("need 0 <= n10, n01 and n10 + n01 <= n, n >= 1")
    from scipy import optimize

    tail = (1 - level) / 2
    m = n10 + n01
    below = _MeldedTail(n10, m, n, lower=True)
    above = _MeldedTail(n10, m, n, lower=False)
    low = -1.0 if below(-1.0) >= tail else optimize.brentq(lambda d: below(d) - tail, -1.0, 1.0, xtol=1e-12)
    high = 1.0 if above(1.0) >= tail else optimize.brentq(lambda d: above(d) - tail, -1.0, 1.0, xtol=1e-12)
    low, high = agreeing(low, high, below(0.0) >= tail, above(0.0) >= tail)
    return Interval(low, high, "exact McNemar's compatible interval (Fay-Lumbard melded)")


def agreeing(low: float | None, high: float | None, low_keeps_zero: bool,
             high_keeps_zero: bool) -> tuple[float | None, float | None]:
    """An interval's ends put on the side of 0 that the test's own one-sided p-values at 0 say
    (``*_keeps_zero``: that tail is at least ``(1 - level) / 2``). The ends are found by a root search
    or a cumulative sum whose last bits can differ from the p-values' own sums; this keeps 0 inside
    the interval exactly when the test does not reject it."""
    if low is not None:
        low = min(low, 0.0) if low_keeps_zero else max(low, math.ulp(0.0))
    if high is not None:
        high = max(high, 0.0) if high_keeps_zero else min(high, -math.ulp(0.0))
    return low, high


@dataclass(frozen=True)
class _MeldedTail:
    """``P(T (2 B - 1) <= delta)`` (``lower``) or ``P(T (2 B - 1) >= delta)`` of
    :func:`mcnemar_interval`, as a function of ``delta``."""

    right: int
    discordant: int
    items: int
    lower: bool

    def __call__(self, delta: float) -> float:
        x, m, n = self.right, self.discordant, self.items
        b = (x, m - x + 1) if self.lower else (x + 1, m - x)
        if delta == 0:  # T > 0: only B's side of 1/2 matters; the exact binomial tail
            return self._b_tail(0.5, b)
        toward = (delta > 0) == self.lower  # melded: the T of the two that makes this tail larger
        t = (m, n - m + 1) if toward else (m + 1, n - m)
        return self._expected_tail(delta, t, b)

    def _b_tail(self, q: float, b: tuple[int, int]) -> float:
        """``P(B <= q)`` (``lower``) or ``P(B >= q)``; Beta(0, k) is the point 0, Beta(k, 0) the point 1."""
        from scipy.stats import beta

        if b[0] == 0 or b[1] == 0:
            point = 0.0 if b[0] == 0 else 1.0
            return float(point <= q) if self.lower else float(point >= q)
        return float(beta.cdf(q, *b)) if self.lower else float(beta.sf(q, *b))

    def _expected_tail(self, delta: float, t: tuple[int, int], b: tuple[int, int]) -> float:
        """``E_T[P(B <= or >= 1/2 + delta / (2 T))]`` with ``T ~ Beta(*t)``."""
        from scipy.special import betainc
        from scipy.stats import beta

        if t[0] == 0:  # T is the point 0: the difference is 0
            return float(0.0 <= delta) if self.lower else float(0.0 >= delta)
        if t[1] == 0:  # T is the point 1
            return self._b_tail(0.5 + delta / 2, b)
        if b[0] == 0 or b[1] == 0:  # B is a point: T (2B - 1) is T or -T
            sign = -1.0 if b[0] == 0 else 1.0
            lower_t = self.lower == (sign > 0)  # P(T <= sign * delta) or P(T >= sign * delta)
            return float(beta.cdf(sign * delta, *t)) if lower_t else float(beta.sf(sign * delta, *t))
        nodes, weights = _beta_nodes(*t, split=abs(delta))
        q = np.clip(0.5 + delta / (2 * nodes), 0.0, 1.0)
        # scipy.stats.beta's cdf and sf without their overhead; P(B >= q) = P(Beta(b, a) <= 1 - q), as
        # scipy.special.betaincc is a hundred times slower than betainc
        inner = betainc(*b, q) if self.lower else betainc(b[1], b[0], 1.0 - q)
        return min(1.0, max(0.0, float(np.dot(weights, inner))))


@lru_cache(maxsize=64)
def _beta_support(a: int, b: int) -> tuple[float, float]:
    """All of ``Beta(a, b)`` but 1e-13 in each tail (scipy.stats.beta's ppf and isf, without their overhead)."""
    from scipy.special import betainccinv, betaincinv

    return max(float(betaincinv(a, b, 1e-13)), 1e-300), float(betainccinv(a, b, 1e-13))


@lru_cache(maxsize=4)
def _legendre(order: int) -> tuple[np.ndarray, np.ndarray]:
    """numpy's Gauss-Legendre nodes and weights on [-1, 1] (an eigenvalue problem: computed once)."""
    return np.polynomial.legendre.leggauss(order)


def _beta_nodes(a: int, b: int, split: float, order: int = 48) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes and weights for ``E[g(T)]``, ``T ~ Beta(a, b)`` (a, b >= 1), over its
    support cut at ``split``: the integrands of :func:`mcnemar_interval` are smooth except for a
    kink where ``1/2 + delta / (2 t)`` leaves [0, 1], at ``t = |delta|``. Accurate to about 1e-8
    in a few hundred microseconds (scipy's adaptive ``quad`` took a second per interval)."""
    start, stop = _beta_support(a, b)
    cuts = np.array([start, split, stop] if start < split < stop else [start, stop])
    x, w = _legendre(order)
    half = np.diff(cuts)[:, None] / 2
    nodes = (cuts[:-1, None] + half * (x + 1)).ravel()
    log_beta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
    density = np.exp((a - 1) * np.log(nodes) + (b - 1) * np.log1p(-nodes) - log_beta)
    return nodes, (half * w).ravel() * density


@dataclass(frozen=True)
class _Subsets:
    """A distribution of random subsets F of the items (each item in F with probability 1/2): per
    cell, ``size`` = sum of the weights in F, ``total`` = sum of weight x difference in F, and its
    probability. Shifting every difference by ``d``, the sign-flip statistic is at least the
    observed one exactly when ``total <= d * size`` (flipping the signs of F)."""

    size: np.ndarray
    total: np.ndarray
    probability: np.ndarray
    method: str
    #: cells whose size is 0 (the empty subset): they count on both sides for every shift
    empty: float

    def tails(self, shift: float) -> tuple[float, float]:
        """The one-sided p-values (greater, less) of the sign-flip test of ``differences - shift``.

        Ties count on both sides, within a relative tolerance of 1e-12 (as scipy's): a subset whose
        mean equals the shift in exact arithmetic (2/3 over 2 items against 1/3) can miss it by an ulp.
        """
        moved = self.total - shift * self.size
        largest = float(np.abs(self.total).max(initial=0.0)) + abs(shift) * float(self.size.max(initial=0.0))
        tolerance = 1e-12 * largest
        full = self.size > 0
        greater = self.empty + float(self.probability[full & (moved <= tolerance)].sum())
        less = self.empty + float(self.probability[full & (moved >= -tolerance)].sum())
        return min(1.0, greater), min(1.0, less)

    def interval(self, level: float) -> tuple[float | None, float | None]:
        """The shifts the two-sided test does not reject at ``1 - level``: the ends are where the
        subset means ``total / size``, ordered, gather ``(1 - level) / 2`` with the empty cells."""
        tail = (1 - level) / 2
        full = self.size > 0
        means = self.total[full] / self.size[full]
        order = np.argsort(means, kind="mergesort")
        means, weights = means[order], self.probability[full][order]
        if self.empty >= tail or not len(means):
            return None, None
        rising = self.empty + np.cumsum(weights)
        falling = self.empty + np.cumsum(weights[::-1])
        low = means[min(int(np.searchsorted(rising, tail * (1 - 1e-12))), len(means) - 1)]
        high = means[::-1][min(int(np.searchsorted(falling, tail * (1 - 1e-12))), len(means) - 1)]
        return float(low), float(high)


def sign_flip(
    a: Sequence[float],
    b: Sequence[float],
    alternative: str = "two-sided",
    *,
    weights: Sequence[float] | None = None,
    level: float = 0.95,
    resamples: int = 9999,
    seed: int = 0,
) -> tuple[TestResult, Interval]:
    """The paired sign-flip (permutation) test of the mean difference and its interval, from one
    distribution of sign flips.

    Under the null hypothesis that the differences ``a_i - b_i`` are symmetric about ``d``, the signs
    of ``a_i - b_i - d`` are exchangeable; the test of ``d = 0`` is the usual paired permutation test
    (``scipy.stats.permutation_test(..., permutation_type='samples')``) and the interval is every
    ``d`` it does not reject (Hartigan 1969), so it leaves out 0 exactly when the two-sided p-value
    is below ``1 - level``. With ``weights`` the statistic is ``sum_i w_i (a_i - b_i - d)``: the
    stratified test of a macro average (``w_i = 1 / (tasks x task items)``), its interval about the
    macro difference.

    The distribution is exact when it can be built in bounded work: all 2^n flips for at most
    :data:`ENUMERATE_AT_MOST` items, or, for equal weights and differences on a lattice (scores
    averaged over repeats: multiples of 1/repeats), the joint distribution of a random subset's size
    and sum (:data:`JOINT_WORK_AT_MOST`). Otherwise ``resamples`` seeded random flips and the
    observed arrangement give ``(hits + 1) / (resamples + 1)``. An interval end no shift reaches
    (too few items) is None.
    """
    if len(a) != len(b):
        raise ValueError("paired samples must have the same length")
    if alternative not in ALTERNATIVES:
        raise ValueError(f"alternative must be one of {', '.join(ALTERNATIVES)}")
    diffs = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
    w = np.ones(len(diffs)) if weights is None else np.asarray(weights, dtype=float)
    if len(w) != len(diffs):
        raise ValueError("every item needs a weight")
    name = "permutation" if weights is None else "stratified permutation"
    if not len(diffs):
        return TestResult(name, 0.0, 1.0, "no items"), Interval(None, None, "no items")
    delta = float(np.sum(w * diffs) / np.sum(w))
    subsets = _subsets(diffs, w, weights is None, resamples, seed)
    greater, less = subsets.tails(0.0)
    p = {"greater": greater, "less": less, "two-sided": min(1.0, 2 * min(greater, less))}[alternative]
    low, high = agreeing(*subsets.interval(level), greater >= (1 - level) / 2, less >= (1 - level) / 2)
    shown = "the sign flips it does not reject" + ("" if low is not None else "; too few items to bound it")
    return TestResult(name, delta, p, subsets.method), Interval(low, high, f"{shown} ({subsets.method})")


def _subsets(diffs: np.ndarray, w: np.ndarray, equal: bool, resamples: int, seed: int) -> _Subsets:
    n = len(diffs)
    lattice = on_lattice(diffs, JOINT_WORK_AT_MOST // n) if equal else None
    if n <= ENUMERATE_AT_MOST:
        chosen = ((np.arange(2**n)[:, None] >> np.arange(n)) & 1).astype(float)
        size, total = _sums(chosen, w, diffs, lattice)
        return _Subsets(size, total, np.full(2**n, 0.5**n), f"exact over 2^{n} sign flips", empty=0.5**n)
    if lattice is not None:
        return _joint(*lattice)
    rng = np.random.default_rng(seed)
    size, total = np.empty(resamples), np.empty(resamples)
    rows = max(1, 4_000_000 // n)  # bounded memory: flips drawn in blocks
    for start in range(0, resamples, rows):
        chosen = rng.random((min(rows, resamples - start), n)) < 0.5
        size[start:start + len(chosen)], total[start:start + len(chosen)] = _sums(chosen, w, diffs, None)
    # the observed arrangement is one of the draws: (hits + 1) / (resamples + 1)
    share = np.full(resamples, 1 / (resamples + 1))
    return _Subsets(size, total, share, f"Monte Carlo, {resamples} seeded sign flips",
                    empty=1 / (resamples + 1) + float(share[size == 0].sum()))


def _sums(chosen: np.ndarray, w: np.ndarray, values: np.ndarray,
          lattice: tuple[np.ndarray, int] | None) -> tuple[np.ndarray, np.ndarray]:
    """Per row of ``chosen`` (a subset of the items): the sum of its weights and of its weighted
    values. On a lattice the sums are of integers, exact; otherwise they are rounded to 12
    significant digits of the largest possible sum, so that subsets whose sums are equal in exact
    arithmetic (differences such as 1/3) tie as they do for scipy's relative tolerance."""
    if lattice is not None:
        return chosen @ w, (chosen @ lattice[0].astype(float)) / lattice[1]
    scale = float(np.abs(w * values).sum()) or 1.0
    digits = 12 - math.floor(math.log10(scale))
    return np.round(chosen @ w, 12), np.round(chosen @ (w * values), digits)


def _joint(ks: np.ndarray, denominator: int) -> _Subsets:
    """The exact distribution of (|F|, sum of ``ks`` over F) for a random subset F, by dynamic
    programming on integers (differences ``ks / denominator``)."""
    n = len(ks)
    offset, width = int(-ks[ks < 0].sum()), int(np.abs(ks).sum()) + 1
    dist = np.zeros((n + 1, width))
    dist[0, offset] = 1.0
    for index, k in enumerate(ks.tolist()):
        held = dist[: index + 1].copy()
        dist[: index + 1] *= 0.5
        if k >= 0:
            dist[1: index + 2, k:] += 0.5 * held[:, : width - k]
        else:
            dist[1: index + 2, : width + k] += 0.5 * held[:, -k:]
    rows, columns = np.nonzero(dist)
    probability = dist[rows, columns]
    size = rows.astype(float)
    total = (columns - offset).astype(float) / denominator
    empty = float(dist[0].sum())
    keep = rows > 0
    return _Subsets(size[keep], total[keep], probability[keep], f"exact over 2^{n} sign flips (lattice)", empty)
