"""Pricing what a run recorded: each model's tokens at its price, per record, item and configuration.

A cost is never made up: a record that used a model the table does not price has no cost (None, shown
"not priced"), never a smaller one; calls answered from the response cache cost nothing. Each call is
priced at batch prices when it went through the batch API, and its cached prompt tokens at the
model's ``cached_input`` price (the input price when the file gives none).
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from madeval.pricing.table import PriceTable
from madeval.pricing.usage import BATCH_KEY, Usage, record_usage, used_models

__all__ = ["BATCH_KEY", "CostSummary", "price_records", "record_cost", "unpriced_models", "usage_cost"]


def usage_cost(usage: Usage, table: PriceTable, *, batch: bool = False) -> float | None:
    """Dollars for ``usage`` ((model, batched) -> prompt, completion, cached prompt tokens), each
    model's batched calls at its batch price; None when a model has no price. ``batch``: every call
    at batch prices."""
    dollars = 0.0
    for (model, batched), (prompt, completion, cached) in usage.items():
        price = table.price(model)
        if price is None:
            return None
        dollars += price.cost(prompt, completion, cached or 0, batch=batch or batched)  # None: not said
    return dollars


def unpriced_models(usage: Usage, table: PriceTable) -> set[str]:
    """The models of ``usage`` the table has no price for."""
    return {model for model in used_models(usage) if table.price(model) is None}


def record_cost(record: Mapping[str, Any], table: PriceTable) -> float | None:
    """One record's dollars, each call at batch prices when it went through the batch transport;
    None: not priced."""
    return usage_cost(record_usage(record), table)


@dataclass
class CostSummary:
    """Dollars per configuration and item, and the models the table had no price for."""

    #: configuration id -> item key -> dollars (mean over the item's repeats); None: a call was not priced
    per_item: dict[str, dict[str, float | None]] = field(default_factory=dict)
    #: models the table does not price: the items that used them have no cost
    unpriced: set[str] = field(default_factory=set)

    def per_configuration(self) -> dict[str, float | None]:
        """Mean dollars per item for each configuration; None when any of its items is not priced."""
        return {config: None if None in items.values() else statistics.fmean(items.values())
                for config, items in self.per_item.items() if items}


def price_records(records: Iterable[Mapping[str, Any]], table: PriceTable, *, batch: bool = False) -> CostSummary:
    """The cost of every record, per configuration and item (each item's repeats averaged).

    ``batch``: at the models' batch prices (``batch_discount`` taken off), whatever the records say."""
    summary = CostSummary()
    repeats: dict[str, dict[str, list[float | None]]] = {}
    for record in records:
        unit = record["unit"]
        usage = record_usage(record)
        summary.unpriced |= unpriced_models(usage, table)
        dollars = usage_cost(usage, table, batch=batch)
        repeats.setdefault(unit["config"], {}).setdefault(f"{unit['task']}/{unit['item']}", []).append(dollars)
    for config, items in repeats.items():
        summary.per_item[config] = {item: None if None in values else statistics.fmean(values)
                                    for item, values in items.items()}
    return summary
