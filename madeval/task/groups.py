"""How a group row combines its tasks: as the group declares in its ``aggregate_metric_list``.

A group file declares, per metric, ``weight_by_size`` (lm-evaluation-harness' ``GroupConfig``):

* ``true``: **micro** average. Every item counts once (tasks weighted by their number of items):
  the row pools the tasks' per-item scores, its interval is that of the pooled mean and its
  comparisons are the ordinary paired tests on the pooled items.
* ``false`` (madeval's default when a group file leaves it out, though lm-eval's is true since
  0.4.12; also used for tags and for metrics a group does not list):
  **macro** average. Every task counts once: the row is the mean of the task scores, its interval
  is the stratified one (:func:`.stats.stratified_interval`: items are sampled within each task)
  and its comparisons are a stratified sign-flip test (:func:`.stats.stratified_permutation`):
  each item's two scores may swap, items weighted ``1 / (tasks x task items)`` so that the test
  statistic is the difference of the macro averages. When every task has the same number of
  shared items the weights are equal and the ordinary paired test (McNemar for 0/1 scores) is
  used, as for a micro row. The bootstrap option does not apply to unequal macro weights.

The declarations are read from ``run.json`` (``group_aggregation``, when the run recorded them),
else from the task files (the built-in and plugin task folders and the run's ``include_path``).
"""

from __future__ import annotations

from typing import Any

from madeval.core.plugins import registries
from madeval.errors import MadevalError
from madeval.task.files import AggregateMetric, task_index


def declared_aggregations(run: dict[str, Any], groups: list[str]) -> dict[str, dict[str, AggregateMetric]]:
    """Per group name: its declared aggregation per metric (tags and unknown groups: none)."""
    recorded = run.get("group_aggregation")
    if isinstance(recorded, dict):
        return {
            name: {m: AggregateMetric(m, e.get("aggregation", "mean"), bool(e.get("weight_by_size", False)))
                   for m, e in (recorded.get(name) or {}).items()}
            for name in groups
        }
    if not groups:
        return {}
    try:  # a run folder written before run.json recorded them
        index = task_index(registries(), list((run.get("settings") or {}).get("include_path") or []))
    except MadevalError:
        return {}
    return declared_in(index, groups)


def declared_in(index: Any, groups: list[str]) -> dict[str, dict[str, AggregateMetric]]:
    """Per group of ``groups`` that ``index`` (a :class:`madeval.task.files.TaskIndex`) knows:
    its ``aggregate_metric_list`` by metric."""
    found = {}
    for name in groups:
        if name in index.groups or index.provider_of(name) is not None:  # a provider's group (lm_eval:mmlu)
            try:
                spec = index.group_spec(name)
            except MadevalError:
                continue
            found[name] = {entry.metric: entry for entry in spec.aggregate_metric_list}
    return found


def recordable(declared: dict[str, dict[str, AggregateMetric]]) -> dict[str, dict[str, dict[str, Any]]]:
    """``declared`` as ``run.json`` stores it (``group_aggregation``)."""
    return {
        name: {m: {"aggregation": e.aggregation, "weight_by_size": e.weight_by_size} for m, e in entries.items()}
        for name, entries in declared.items()
    }


def rule(aggregations: dict[str, dict[str, AggregateMetric]], group: str, metric: str) -> AggregateMetric:
    """The aggregation of ``metric`` in ``group``: the declared one, else macro (lm-eval's default)."""
    return aggregations.get(group, {}).get(metric) or AggregateMetric(metric)


def is_declared(aggregations: dict[str, dict[str, AggregateMetric]], group: str, metric: str) -> bool:
    """True when the group's file lists ``metric`` in its ``aggregate_metric_list``."""
    return metric in aggregations.get(group, {})


def name(aggregate: AggregateMetric) -> str:
    """``micro`` (items weighted equally) or ``macro`` (tasks weighted equally)."""
    return "micro" if aggregate.weight_by_size else "macro"

