"""Task-level numbers from per-item records, for every metric name a record carries.

Repeats are averaged within an item first, then items are averaged. A metric name averages over
the items that report it: ``HasAns_f1`` over answerable SQuAD items, ``answer_entropy_turn3``
over debates that reached turn 3 (see :mod:`madeval.metrics`).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from typing import Any, Iterable


def item_means(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """``{metric: {item id: mean over that item's repeats}}``."""
    values: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        item = record["unit"]["item"]
        for name, value in (record.get("metrics") or {}).items():
            if value is not None:
                values[name][item].append(float(value))
    return {name: {item: statistics.fmean(v) for item, v in per_item.items()} for name, per_item in values.items()}


def task_scores(records: Iterable[dict[str, Any]]) -> dict[str, dict[str, float]]:
    """``{metric: {"mean": ..., "items": n}}``: the mean over items of the per-item means."""
    return {
        name: {"mean": statistics.fmean(per_item.values()), "items": len(per_item)}
        for name, per_item in item_means(records).items()
    }
