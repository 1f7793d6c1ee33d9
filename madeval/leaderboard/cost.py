"""Cost against accuracy: which configurations are on the cost-accuracy Pareto front.

A debate's cost is read from its record, as every row already reports it: tokens (prompt plus
completion, ``tokens.total`` of the record, summed over the debate's calls) and calls, per item
(the mean over items of the mean over the item's repeats; see :mod:`.table`). A row is on the
front of its task and metric when no other row there has a score at least as high and a cost at
most as high, with one of the two strictly better (scores are read as higher-is-better). Two rows
with the same score and cost do not dominate each other: both stay on the front.
"""

from __future__ import annotations

from typing import Any, Sequence

#: The costs a front is drawn against: row key and how it is named.
COSTS = {"tokens_per_item": "tokens per item", "calls_per_item": "calls per item"}


def pareto_front(points: Sequence[tuple[float, float]]) -> list[bool]:
    """For each ``(score, cost)``: True when no other point dominates it (score >= and cost <=,
    one of them strictly). Quadratic in the number of points, which is the number of configurations."""
    return [
        not any(s >= score and c <= cost and (s > score or c < cost) for s, c in points)
        for score, cost in points
    ]


def front_key(cost: str) -> str:
    """The row key that says whether a row is on the front against ``cost`` (``front_tokens_per_item``)."""
    return f"front_{cost}"


def mark_fronts(rows: list[dict[str, Any]]) -> None:
    """Mark each row of one family (task or group, metric) as on or off each cost's front."""
    for cost in COSTS:
        flags = pareto_front([(r["score"], r[cost]) for r in rows])
        for row, on_front in zip(rows, flags):
            row[front_key(cost)] = on_front

