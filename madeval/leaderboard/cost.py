"""Cost against accuracy: which configurations are on the cost-accuracy Pareto front.

A debate's cost is read from its record, as every row already reports it: tokens (prompt plus
completion, ``tokens.total`` of the record, summed over the debate's calls), calls and, when the board
has a price file, dollars (:mod:`.money`), per item (the mean over items of the mean over the item's
repeats; see :mod:`.table`). A row without a cost (not priced, or an imported run that recorded no
calls) is off the front and dominates nothing. A row is on the
front of its task and metric when no other row there has a score at least as high and a cost at
most as high, with one of the two strictly better (scores are read as higher-is-better). Two rows
with the same score and cost do not dominate each other: both stay on the front.
"""

from __future__ import annotations

from typing import Any, Sequence

#: The costs a front is drawn against: row key and how it is named.
COSTS = {"tokens_per_item": "tokens per item", "calls_per_item": "calls per item"}
#: The cost in money, drawn against when the board has a price file.
MONEY = {"cost_per_item": "dollars per item"}


def board_costs(board: dict[str, Any]) -> dict[str, str]:
    """The costs a board's fronts are drawn against: money first when the board is priced."""
    return {**MONEY, **COSTS} if board.get("prices") else dict(COSTS)


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


def mark_fronts(rows: list[dict[str, Any]], costs: Sequence[str] = tuple(COSTS)) -> None:
    """Mark each row of one family (task or group, metric) as on or off each cost's front; a row
    whose cost is None (not priced, not recorded) is off it and takes no part in it."""
    for cost in costs:
        known = [row for row in rows if row.get(cost) is not None]
        flags = pareto_front([(r["score"], r[cost]) for r in known])
        for row in rows:
            row[front_key(cost)] = False
        for row, on_front in zip(known, flags):
            row[front_key(cost)] = on_front

