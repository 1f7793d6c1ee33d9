"""Paired comparisons between configurations on the items they share, with a correction.

The test follows the scores: exact McNemar when both sides' per-item scores are all 0 or 1 (one
repeat, or repeats that agree on every item), otherwise the paired permutation test (or the
paired bootstrap, by option). A macro group row (tasks weighted equally, see :mod:`.groups`) whose
tasks share different numbers of items uses the stratified sign-flip test instead, which weights
each item by ``1 / (tasks x task items)``. A family is one task (or group) and metric; its p-values
are adjusted together. Every comparison records which test it used, and the minimum detectable
effect of that test with these items (:mod:`.power`): the smallest difference it finds with 80% power.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

from .options import LeaderboardOptions
from .power import detectable
from .stats import (
    TestResult, adjust, is_binary, mcnemar_exact, paired_bootstrap, paired_permutation, stratified_permutation,
)


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
) -> list[dict[str, Any]]:
    """Test every wanted pair (scores: config id -> item -> score) and adjust the family.

    ``strata`` (item -> task) is given for a macro group row (see :func:`paired_test`).
    """
    found = []
    for a, b in wanted:
        if a in scores and b in scores:
            result, shared = paired_test(scores[a], scores[b], options, strata=strata)
            items = sorted(set(scores[a]) & set(scores[b]))
            power = detectable([scores[a][k] for k in items], [scores[b][k] for k in items], result.test,
                               options.alpha, strata=[strata[k] for k in items] if strata else None)
            found.append({"a": a, "b": b, "items": shared, "delta": result.delta, "test": result.test,
                          "method": result.method, "p_value": result.p_value, "mde": power.mde,
                          "mde_method": power.method})
    for comparison, adjusted in zip(found, adjust([c["p_value"] for c in found], options.correction)):
        comparison["p_adjusted"] = adjusted
        comparison["significant"] = adjusted < options.alpha
    return found
