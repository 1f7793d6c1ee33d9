"""Paired comparisons between configurations on the items they share, with a correction.

The test follows the scores: exact McNemar when both sides' per-item scores are all 0 or 1 (one
repeat, or repeats that agree on every item), otherwise the paired permutation (sign-flip) test
(or the paired bootstrap, by option). A macro group row (tasks weighted equally, see :mod:`.groups`)
whose tasks share different numbers of items uses the stratified sign-flip test instead, which
weights each item by ``1 / (tasks x task items)``. A family is one task (or group) and metric; its
p-values are adjusted together. Every comparison records which test it used, the 95% interval of
the difference that belongs to that test (:mod:`.difference`: 0 lies outside it exactly when the
test's own p-value, before correction, is below 0.05), and the minimum detectable effect of that
test with these items at the level a starred comparison needs (:mod:`.power`, :func:`mde_alpha`).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from madeval.analysis.difference import mcnemar_interval, sign_flip
from madeval.analysis.power import detectable
from madeval.analysis.stats import (
    Interval,
    TestResult,
    adjust,
    is_binary,
    mcnemar_exact,
    paired_bootstrap,
)
from madeval.settings.board_options import LeaderboardOptions

#: The level of the interval of every difference.
LEVEL = 0.95


@dataclass(frozen=True)
class Tested:
    """A paired test's result, the interval of the difference that belongs to it (None when not
    asked for) and the number of shared items."""

    result: TestResult
    interval: Interval | None
    items: int


def paired_test(
    a: dict[str, float], b: dict[str, float], options: LeaderboardOptions, alternative: str = "two-sided",
    strata: dict[str, str] | None = None,
) -> tuple[TestResult, int]:
    """Test ``a - b`` on the items both score; returns the result and the number of shared items
    (see :func:`tested`)."""
    found = tested(a, b, options, alternative, strata, interval=False)
    return found.result, found.items


def tested(
    a: dict[str, float], b: dict[str, float], options: LeaderboardOptions, alternative: str = "two-sided",
    strata: dict[str, str] | None = None, interval: bool = True,
) -> Tested:
    """Test ``a - b`` on the items both score and, with ``interval``, give the 95% interval of the
    difference that the same test does not reject (:mod:`.difference`).

    ``strata`` (item -> task) makes it the test of a macro average: items are weighted so that
    every task counts once (the ordinary test when the tasks share equally many items).
    """
    shared = sorted(set(a) & set(b))
    x, y = [a[k] for k in shared], [b[k] for k in shared]
    flips = {"resamples": options.resamples, "seed": options.seed, "level": LEVEL}
    if strata is not None:
        groups = [strata[k] for k in shared]
        sizes = {g: groups.count(g) for g in set(groups)}
        if len(set(sizes.values())) > 1:
            weights = [len(x) / (len(sizes) * sizes[g]) for g in groups]
            result, found = sign_flip(x, y, alternative, weights=weights, **flips)
            return Tested(result, found if interval else None, len(shared))
    if is_binary(x) and is_binary(y):
        result = mcnemar_exact(x, y, alternative)
        n10 = sum(1 for u, v in zip(x, y) if u > v)
        n01 = sum(1 for u, v in zip(x, y) if u < v)
        found = (mcnemar_interval(n10, n01, len(x), LEVEL) if x else Interval(None, None, "no items")) \
            if interval else None
        return Tested(result, found, len(shared))
    if options.test == "bootstrap":
        result, found = paired_bootstrap(x, y, alternative, **flips)
    else:
        result, found = sign_flip(x, y, alternative, **flips)
    return Tested(result, found if interval else None, len(shared))


def mde_alpha(options: LeaderboardOptions, comparisons: int) -> float:
    """The significance level at which a family's minimum detectable effects are stated: the level
    below which a p-value is starred whatever the family's other p-values are. Holm and
    Benjamini-Hochberg both star every p-value below ``alpha / m`` with ``m`` comparisons in the
    family (Holm's first step; Benjamini-Hochberg's smallest threshold), and some p-values above
    it only as the others allow; without a correction, ``alpha``."""
    return options.alpha if options.correction == "none" else options.alpha / max(comparisons, 1)


def shared_item_scores(a: dict[tuple[str, int], float],
                       b: dict[tuple[str, int], float]) -> tuple[dict[str, float], dict[str, float]]:
    """Per-item means of ``a`` and ``b`` over the (item, repeat) units both hold."""
    shared = set(a) & set(b)
    return _item_means({k: a[k] for k in shared}), _item_means({k: b[k] for k in shared})


def _item_means(units: dict[tuple[str, int], float]) -> dict[str, float]:
    by_item: dict[str, list[float]] = {}
    for (item, _), value in units.items():
        by_item.setdefault(item, []).append(value)
    return {item: statistics.fmean(values) for item, values in by_item.items()}


def pairs(config_ids: list[str], reference: str | None, compare: str) -> list[tuple[str, str]]:
    """The (configuration, other) pairs to test: each against the reference, or all pairs."""
    if compare == "all":
        return list(combinations(config_ids, 2))
    if reference is None or reference not in config_ids:
        return []
    return [(cid, reference) for cid in config_ids if cid != reference]


def compare_family(
    scores: dict[str, dict[str, float]],
    wanted: list[tuple[str, str]],
    options: LeaderboardOptions,
    strata: dict[str, str] | None = None,
    units: dict[str, dict[tuple[str, int], float]] | None = None,
) -> list[dict[str, Any]]:
    """Test every wanted pair (scores: config id -> item -> score) and adjust the family.

    ``strata`` (item -> task) is given for a macro group row (see :func:`paired_test`). ``units``
    (config id -> (item, repeat) -> score), given for merged runs, pairs each two configurations on
    the units both recorded: their item scores are the means over the shared repeats, and the
    comparison counts the shared units.
    """
    found, tested_items = [], []
    for a, b in wanted:
        if a in scores and b in scores:
            first, second = (scores[a], scores[b]) if units is None else shared_item_scores(units[a], units[b])
            if units is not None and not first.keys() & second.keys():  # runs holding different items
                continue
            done = tested(first, second, options, strata=strata)
            result, interval = done.result, done.interval
            items = sorted(first.keys() & second.keys())
            tested_items.append(([first[k] for k in items], [second[k] for k in items], result.test,
                                 [strata[k] for k in items] if strata else None))
            found.append({"a": a, "b": b, "items": done.items, "delta": result.delta, "delta_ci_low": interval.low,
                          "delta_ci_high": interval.high, "delta_ci_method": interval.method, "test": result.test,
                          "method": result.method, "p_value": result.p_value})
            if units is not None:
                found[-1]["units"] = len(set(units[a]) & set(units[b]))
    level = mde_alpha(options, len(found))
    for comparison, (x, y, test, item_strata) in zip(found, tested_items):
        power = detectable(x, y, test, level, strata=item_strata)
        comparison.update(mde=power.mde, mde_alpha=level, mde_method=f"{power.method}; at alpha {level:.3g}"
                          + (f" ({options.alpha:g} over {len(found)} comparisons)" if level != options.alpha else ""))
    for comparison, adjusted in zip(found, adjust([c["p_value"] for c in found], options.correction)):
        comparison["p_adjusted"] = adjusted
        comparison["significant"] = adjusted < options.alpha
    return found
