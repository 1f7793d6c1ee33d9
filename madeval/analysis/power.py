"""Power of the leaderboard's paired tests: the minimum detectable effect and the paired sample size.

A comparison that is not significant says little until it also says how large a difference its
test could have found. The **minimum detectable effect** (MDE) of a comparison is the smallest
absolute mean difference ``|a - b|`` that its test detects with probability ``power`` (80%) at a
two-sided ``alpha``, with this many items and the spread the comparison observed. It is a planning
figure: a true difference of that size is found 4 times in 5, a smaller one less often (not never),
a larger one more often. The board states it at the level its star needs
(:func:`madeval.analysis.compare.mde_alpha`):

* **0/1 scores (exact McNemar)**: the discordance ``psi = (n10 + n01) / n`` is held at its observed
  value; the difference is ``delta = p10 - p01``. The power is the *exact* power of the exact test
  :func:`madeval.analysis.stats.mcnemar_exact`: the number of discordant pairs is
  Binomial(n, psi), and given k of them ``n10`` is Binomial(k, (psi + delta) / (2 psi)); the test
  rejects where its exact p-value is at most alpha. Connor's (1987) normal approximation
  (:func:`connor_sample_size`, Miettinen's discordant-pair formula) overstates the power of the
  exact, conservative test by 2-5 points at 80% (e.g. 0.757 at its own MDE for n = 100,
  psi = 0.3), so it only seeds the search; ``tests/test_power_*`` checks both against a seeded
  simulation of the test.
* **other scores (paired permutation or bootstrap)**: the paired t approximation, statsmodels'
  ``TTestPower`` (a one-sample t test on the differences), times the observed standard deviation of
  the differences; the sign-flip test has the t test's power asymptotically.
* **macro group rows (stratified sign flips)**: the normal approximation (statsmodels'
  ``NormalIndPower`` with one sample) on the variance of the macro difference
  ``sum_t s_t^2 / (T^2 n_t)``.

None means the comparison cannot say: no discordant pair, no spread, or fewer than two items.

:func:`paired_sample_size` answers the other way round: how many items the board's paired test
needs for ``power`` against a given difference. Those tests are about the population of questions
(they have no finite-population correction), so neither is the sample size: a benchmark's size only
bounds it.

scipy.stats and statsmodels are imported inside the functions that use them: together they take
most of a second to load, and a run with one configuration compares nothing (tests/architecture/test_startup.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from madeval.errors import UsageError

#: The power at which the leaderboard states a minimum detectable effect.
POWER = 0.8
#: Discordant-pair counts whose probability is below this are left out of the exact power sum.
NEGLIGIBLE = 1e-12


@dataclass(frozen=True)
class Detectable:
    """A comparison's minimum detectable effect (None when it cannot be stated) and how it was got."""

    mde: float | None
    method: str


def _check_levels(alpha: float, power: float) -> None:
    if not 0 < alpha < 1 or not 0 < power < 1:
        raise UsageError(f"alpha and power must be between 0 and 1 (exclusive), got {alpha} and {power}")


def _z(alpha: float, power: float) -> tuple[float, float]:
    from scipy import stats as scipy_stats

    _check_levels(alpha, power)
    return float(scipy_stats.norm.ppf(1 - alpha / 2)), float(scipy_stats.norm.ppf(power))


def mcnemar_rejection_bounds(k: np.ndarray, alpha: float) -> np.ndarray:
    """Per number of discordant pairs ``k``: the largest ``c`` whose exact two-sided p-value
    ``2 P(n10 <= c)`` is below alpha (the leaderboard calls ``p < alpha`` significant), so the test
    rejects at ``n10 <= c`` or ``n10 >= k - c``; -1 when it never rejects."""
    from scipy import stats as scipy_stats

    k = np.asarray(k, dtype=np.int64)
    c = scipy_stats.binom.ppf(alpha / 2, k, 0.5).astype(np.int64)
    for _ in range(2):  # ppf gives the smallest c with P(n10 <= c) >= alpha / 2: one step down, a second
        # only if ppf's floating point lands one above
        over = (c >= 0) & (scipy_stats.binom.cdf(c, k, 0.5) >= alpha / 2)
        c = np.where(over, c - 1, c)
    return np.where(k > 0, c, -1)


def mcnemar_power(n: int, discordance: float, delta: float, alpha: float = 0.05) -> float:
    """Exact power of the two-sided exact McNemar test on ``n`` items.

    ``discordance`` is the probability ``psi = p10 + p01`` that an item is right on one side only,
    ``delta = p10 - p01`` the difference of the two accuracies (``|delta| <= psi``).
    """
    if n < 1 or discordance <= 0:
        return 0.0
    psi = min(discordance, 1.0)
    if abs(delta) > psi + 1e-12:
        raise UsageError(f"a difference of {delta} needs at least that much discordance, got {psi}")
    return _McNemarPower(n, psi, alpha)(delta)


class _McNemarPower:
    """The exact McNemar test's power on ``n`` items at discordance ``psi`` as a function of the
    difference: the discordant pairs' distribution and the rejection bounds, which do not depend on
    the difference, are computed once (an MDE's root search asks for the power 20 times)."""

    def __init__(self, n: int, psi: float, alpha: float) -> None:
        from scipy import stats as scipy_stats

        k = np.arange(1, n + 1)
        weight = scipy_stats.binom.pmf(k, n, psi)
        keep = weight > NEGLIGIBLE
        self.psi, self.k, self.weight = psi, k[keep], weight[keep]
        self.c = mcnemar_rejection_bounds(self.k, alpha)
        self.rejects = self.c >= 0

    def __call__(self, delta: float) -> float:
        from scipy.special import bdtr, bdtrc  # scipy.stats.binom's cdf and sf, without its per-call checks

        q = min(max((self.psi + delta) / (2 * self.psi), 0.0), 1.0)
        k, c = self.k[self.rejects], self.c[self.rejects]
        low = bdtr(c, k, q)
        high = bdtrc(k - c - 1, k, q)
        return float(np.sum(self.weight[self.rejects] * (low + high)))


def connor_sample_size(delta: float, discordance: float, alpha: float = 0.05, power: float = POWER) -> float:
    """Connor's (1987) items for McNemar's test (unrounded): ``(z_a sqrt(psi) + z_b sqrt(psi - d^2))^2 / d^2``."""
    z_alpha, z_beta = _z(alpha, power)
    return (z_alpha * math.sqrt(discordance) + z_beta * math.sqrt(max(discordance - delta**2, 0.0))) ** 2 / delta**2


def mcnemar_mde(n: int, discordance: float, alpha: float = 0.05, power: float = POWER) -> float | None:
    """The smallest ``delta`` at which the exact McNemar test on ``n`` items has ``power``
    (discordance held at ``psi``); None when even ``delta = psi`` (every discordant pair on one side)
    does not reach it."""
    if n < 1 or discordance <= 0:
        return None
    psi = min(discordance, 1.0)
    power_at = _McNemarPower(n, psi, alpha)
    if power_at(psi) < power:
        return None
    from scipy import optimize

    # The power rises with delta (a stochastically larger n10 given k): bisection on [0, psi].
    return float(optimize.brentq(lambda d: power_at(d) - power, 0.0, psi, xtol=1e-7))


def mcnemar_items(delta: float, discordance: float, alpha: float = 0.05, power: float = POWER) -> int:
    """The fewest items on which the exact McNemar test has ``power`` against ``delta``.

    The exact test's power saw-tooths in ``n``; this is the first ``n`` that reaches ``power``,
    searched upwards from Connor's approximation (which it never falls below by much).
    """
    if not 0 < abs(delta) <= discordance <= 1:
        raise UsageError(f"need 0 < |difference| <= discordance <= 1, got {delta} and {discordance}")
    n = max(1, math.floor(connor_sample_size(abs(delta), discordance, alpha, power) * 0.8))
    while mcnemar_power(n, discordance, abs(delta), alpha) < power:
        n += 1
    return n


def solved_effect(power_at, power: float, start: float) -> float:
    """The effect size at which ``power_at(effect)`` (rising in the effect, ``alpha`` at 0) reaches
    ``power``: bracketed from ``start`` (the normal approximation) upwards, refined by scipy's ``brentq``."""
    from scipy import optimize

    high = start
    while power_at(high) < power:
        high *= 1.1
    return float(optimize.brentq(lambda e: power_at(e) - power, 0.0, high, xtol=1e-12, rtol=1e-12))


def t_mde(n: int, sd: float, alpha: float = 0.05, power: float = POWER) -> float | None:
    """The paired t test's minimum detectable mean difference: the effect size at which its power on
    ``n`` differences (:func:`t_power`) reaches ``power``, times their standard deviation ``sd``.

    statsmodels' ``TTestPower().solve_power`` gives the same root, but for some ``n`` (73, 87, 92,
    109, ...: 172 of 2 to 2000 at alpha 0.05) it returns a one-element array, at 73 a negative
    one, because its search reaches effects where its power is NaN (see :func:`t_power`).
    """
    if n < 2 or not sd > 0:
        return None
    _check_levels(alpha, power)
    z_alpha, z_beta = _z(alpha, power)
    return solved_effect(lambda e: t_power(n, e, 1.0, alpha), power, (z_alpha + z_beta) / math.sqrt(n)) * sd


def t_power(n: int, delta: float, sd: float, alpha: float = 0.05) -> float:
    """The two-sided paired t test's power against a mean difference ``delta`` on ``n`` pairs with
    differences of standard deviation ``sd``: statsmodels' ``TTestPower().power``, written out.

    That is ``P(T > c) + P(T < -c)`` for T noncentral t (n - 1 df, noncentrality ``|delta| / sd *
    sqrt(n)``) and c the central t's ``1 - alpha / 2`` quantile, from scipy.special (scipy.stats'
    ``nct`` costs 50 times more a call). scipy's noncentral t gives NaN for the second, opposite
    tail once the noncentrality passes about 4.7 (then ``TTestPower`` is NaN, e.g. at effect 1.0 on
    73 pairs); that tail is below ``P(T < 0) = Phi(-noncentrality)``, under 1.1e-6 there, and is
    then taken as 0. ``nctdtr`` also gives NaN for the main tail now and then; ``scipy.stats.nct.sf``
    does not, and is asked then.
    """
    from scipy.special import nctdtr, stdtrit

    df, noncentrality = n - 1, abs(delta) / sd * math.sqrt(n)
    critical = float(stdtrit(df, 1 - alpha / 2))
    main = 1.0 - float(nctdtr(df, noncentrality, critical))
    if math.isnan(main):
        from scipy.stats import nct

        main = float(nct.sf(critical, df, noncentrality))
    opposite = float(nctdtr(df, noncentrality, -critical))
    return main + (0.0 if math.isnan(opposite) else opposite)


def t_items(delta: float, sd: float, alpha: float = 0.05, power: float = POWER) -> int:
    """The fewest pairs on which the paired t test has ``power`` against a mean difference ``delta``:
    the first n whose power (:func:`t_power`) reaches it, searched up from the normal approximation."""
    if not delta or not sd > 0:
        raise UsageError(f"need a non-zero difference and a positive standard deviation, got {delta} and {sd}")
    z_alpha, z_beta = _z(alpha, power)
    n = max(2, math.floor(((z_alpha + z_beta) * sd / abs(delta)) ** 2))  # the t test needs a little more
    while t_power(n, delta, sd, alpha) < power:
        n += 1
    return n


def normal_mde(standard_error: float, alpha: float = 0.05, power: float = POWER) -> float | None:
    """The z test's minimum detectable effect for an estimate with ``standard_error``: the effect at
    which statsmodels' ``NormalIndPower`` with one sample (``ratio=0``) and one observation reaches
    ``power``, times the standard error."""
    if not standard_error > 0:
        return None
    from statsmodels.stats.power import NormalIndPower

    _check_levels(alpha, power)
    power_of = NormalIndPower().power
    z_alpha, z_beta = _z(alpha, power)
    effect = solved_effect(lambda e: float(power_of(effect_size=e, nobs1=1, alpha=alpha, ratio=0)), power,
                           z_alpha + z_beta)
    return effect * standard_error


def discordance(a: Sequence[float], b: Sequence[float]) -> float:
    """The share of items right on exactly one side (0/1 scores)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return float(np.mean(x != y)) if len(x) else 0.0


def detectable(a: Sequence[float], b: Sequence[float], test: str, alpha: float, power: float = POWER,
               strata: Sequence[str] | None = None) -> Detectable:
    """The minimum detectable effect of a comparison of paired scores ``a`` and ``b`` by ``test``
    (``mcnemar``, ``permutation``, ``bootstrap`` or ``stratified permutation``)."""
    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = len(x)
    if test == "mcnemar":
        psi = discordance(x, y)
        mde = mcnemar_mde(n, psi, alpha, power)
        why = "" if mde is not None else ("; no discordant pair" if psi == 0 else "; too few discordant pairs")
        return Detectable(mde, f"exact McNemar power, discordance {psi:.3g} held{why}")
    diffs = x - y
    if test == "stratified permutation" and strata is not None:
        groups = {g: diffs[[s == g for s in strata]] for g in dict.fromkeys(strata)}
        if any(len(d) < 2 for d in groups.values()):
            return Detectable(None, "normal approximation (stratified); a task with fewer than 2 items")
        variance = sum(float(np.var(d, ddof=1)) / len(d) for d in groups.values()) / len(groups) ** 2
        return Detectable(normal_mde(math.sqrt(variance), alpha, power), "normal approximation of the macro "
                          "difference (stratified)")
    sd = float(np.std(diffs, ddof=1)) if n > 1 else 0.0
    return Detectable(t_mde(n, sd, alpha, power), f"paired t approximation, SD of differences {sd:.3g}")


def paired_sample_size(
    delta: float, *, discordance: float | None = None, sd: float | None = None, alpha: float = 0.05,
    power: float = 0.8, population: int | None = None,
) -> int:
    """Items needed to detect a difference ``delta`` between two configurations with ``power``, by the
    test the board runs.

    For 0/1 scores give the ``discordance`` (share of items right on exactly one side, from a pilot):
    the exact McNemar test's first sufficient n. For other scores give the ``sd`` of the paired
    differences: the paired t test's first sufficient n (the permutation test's power, asymptotically).
    The board's paired tests have no finite-population correction, so none is applied:
    ``population``, when given, is the most items there are, and a study that needs more is a
    UsageError that says the power all of them give. See :func:`mcnemar_items` and :func:`t_items`.
    """
    if (discordance is None) == (sd is None):
        raise UsageError("give either the discordance (0/1 scores) or the SD of the paired differences")
    binary = discordance is not None
    n = mcnemar_items(delta, discordance, alpha, power) if binary else t_items(delta, sd, alpha, power)
    if population is not None and n > population:
        reached = mcnemar_power(population, discordance, abs(delta), alpha) if binary \
            else t_power(population, delta, sd, alpha)
        raise UsageError(f"the paired test needs {n} items for power {power:g} against a difference of {delta:g}, "
                         f"but the benchmark has {population}; with all of them its power is {reached:.2f}")
    return n
