"""Pricing what a run recorded: each call's tokens at its model's price."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from .table import PriceTable


@dataclass
class CostSummary:
    """Dollars per configuration and item, and the models the table had no price for."""

    #: configuration id -> item key -> dollars (summed over the item's repeats and calls)
    per_item: dict[str, dict[str, float]] = field(default_factory=dict)
    #: models the table does not price: their calls are left out, and the cost says so
    unpriced: set[str] = field(default_factory=set)

    def per_configuration(self) -> dict[str, float]:
        """Mean dollars per item for each configuration."""
        return {config: sum(items.values()) / len(items) for config, items in self.per_item.items() if items}


def price_records(records: Iterable[dict[str, Any]], table: PriceTable, *, batch: bool = False) -> CostSummary:
    """The cost of every record's calls; calls answered from the response cache cost nothing.

    ``batch``: at the models' batch prices (``batch_discount`` taken off)."""
    summary = CostSummary()
    for record in records:
        unit = record["unit"]
        item = f"{unit['task']}/{unit['item']}"
        dollars = 0.0
        for call in record.get("transcript", {}).get("calls", []):
            if call.get("cached"):
                continue
            price = table.price(call["model"])
            if price is None:
                summary.unpriced.add(call["model"])
                continue
            dollars += price.cost(int(call.get("prompt_tokens") or 0), int(call.get("completion_tokens") or 0),
                                  batch=batch)
        items = summary.per_item.setdefault(unit["config"], {})
        items[item] = items.get(item, 0.0) + dollars
    return summary
