"""Paired comparisons between configurations on the items they share, with a correction.

The test follows the scores: exact McNemar when both sides' per-item scores are all 0 or 1 (one
repeat, or repeats that agree on every item), otherwise the paired permutation test (or the
paired bootstrap, by option). A macro group row (tasks weighted equally, see :mod:`.groups`) whose
tasks share different numbers of items uses the stratified sign-flip test instead, which weights
each item by ``1 / (tasks x task items)``. A family is one task (or group) and metric; its p-values
are adjusted together. Every comparison records which test it used, and the minimum detectable
effect of that test with these items (:mod:`.power`): the smallest difference it finds with 80% power,
and the 95% interval of the difference (paired t over the per-item differences).
"""

from __future__ import annotations

import statistics
from itertools import combinations
from typing import Any

from madeval.analysis.power import detectable
from madeval.analysis.stats import (
    TestResult,
    adjust,
    difference_interval,
    is_binary,
    mcnemar_exact,
    paired_bootstrap,
    paired_permutation,
    stratified_permutation,
)
from madeval.settings.board_options import LeaderboardOptions


def paired_test(
    a: dict[str, float], b: dict[str, float], options: LeaderboardOptions, alternative: str = "two-sided",
    strata: dict[str, str] | None = None,
) -> tuple[TestResult, int]:
    """Test ``a - b`` on the items both score; returns the result and the number of shared items.

    ``strata`` (item -> task) makes it the test of a macro average: items are weighted so that
    every task counts once (the ordinary test when the tasks share equally many items).
    """
    shared = sorted(set(a) & set(b))
    x, y = [a[k] for k in shared], [b[k] for k in shared]
    if strata is not None:
        groups = [strata[k] for k in shared]
        if len({groups.count(g) for g in set(groups)}) > 1:
            return stratified_permutation(x, y, groups, alternative, resamples=options.resamples,
                                          seed=options.seed), len(shared)
    if is_binary(x) and is_binary(y):
        return mcnemar_exact(x, y, alternative), len(shared)
    if options.test == "bootstrap":
        result, _ = paired_bootstrap(x, y, alternative, resamples=options.resamples, seed=options.seed)
        return result, len(shared)
    return paired_permutation(x, y, alternative, resamples=options.resamples, seed=options.seed), len(shared)


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
    found = []
    for a, b in wanted:
        if a in scores and b in scores:
            first, second = (scores[a], scores[b]) if units is None else shared_item_scores(units[a], units[b])
            if units is not None and not first.keys() & second.keys():  # runs holding different items
                continue
            result, shared = paired_test(first, second, options, strata=strata)
            items = sorted(first.keys() & second.keys())
            power = detectable([first[k] for k in items], [second[k] for k in items], result.test,
                               options.alpha, strata=[strata[k] for k in items] if strata else None)
            interval = difference_interval([first[k] - second[k] for k in items],
                                           [strata[k] for k in items] if strata else None)
            found.append({"a": a, "b": b, "items": shared, "delta": result.delta, "delta_ci_low": interval.low,
                          "delta_ci_high": interval.high, "test": result.test, "method": result.method,
                          "p_value": result.p_value, "mde": power.mde, "mde_method": power.method})
            if units is not None:
                found[-1]["units"] = len(set(units[a]) & set(units[b]))
    for comparison, adjusted in zip(found, adjust([c["p_value"] for c in found], options.correction)):
        comparison["p_adjusted"] = adjusted
        comparison["significant"] = adjusted < options.alpha
    return found
