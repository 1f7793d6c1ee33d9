"""Cost in money on the board: each row's dollars per item and in all, from its records' tokens at the
prices of the board's price file (``--prices``, :mod:`madeval.pricing`).

A call that went through a provider's batch API (``--transport batch``; each call records its
transport, older records follow their ``run.json``) is priced at batch prices, any other at list
prices; the prompt tokens the provider served from its prompt cache at the ``cached_input`` price.
A row is "not priced" when one of its records used a model the file has no price for (the board
names those models in one line), and "not recorded" when its configuration was imported from
another harness (MALLM, lm-eval), whose output holds no calls or tokens: neither is ever shown as 0.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import asdict
from pathlib import Path
from typing import Any, Iterable

from madeval.errors import UsageError
from madeval.pricing import PriceTable, cached_said, read_price_table, record_cost, record_usage, unpriced_models

NOT_PRICED = "not priced"
NOT_RECORDED = "not recorded"


def load_prices(path: str | None) -> PriceTable | None:
    """The board's price table, or None without a price file (a bad file is a one-line UsageError;
    a run folder that names a file no longer there says how to rebuild its board without prices)."""
    if not path:
        return None
    if not Path(path).exists():
        raise UsageError(f"price file {path} is not there: give the board another with --prices FILE, "
                         "or none with --prices ''")
    return read_price_table(path)


def imported(configuration: dict[str, Any]) -> bool:
    """Whether a configuration's records came from another harness's output, without calls or tokens."""
    return bool(configuration.get("imported"))


def row_money(records: list[dict[str, Any]], table: PriceTable | None, recorded: bool) -> dict[str, Any]:
    """A row's ``cost_per_item`` (the mean over items of the mean over repeats, like tokens),
    ``cost_total`` (every debate of the row) and ``cost_status``: ``priced``, ``not priced``,
    ``not recorded``, or None when the board has no price file."""
    if not recorded:
        return {"cost_per_item": None, "cost_total": None, "cost_status": NOT_RECORDED}
    if table is None:
        return {"cost_per_item": None, "cost_total": None, "cost_status": None}
    by_item: dict[tuple[str, str], list[float]] = defaultdict(list)
    for record in records:
        dollars = record_cost(record, table)
        if dollars is None:
            return {"cost_per_item": None, "cost_total": None, "cost_status": NOT_PRICED}
        by_item[(record["unit"]["task"], record["unit"]["item"])].append(dollars)
    return {"cost_per_item": statistics.fmean(statistics.fmean(v) for v in by_item.values()),
            "cost_total": sum(sum(v) for v in by_item.values()), "cost_status": "priced"}


def prices_entry(path: str, table: PriceTable, records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """What the board says about its prices (``leaderboard.json``'s ``prices``): the file, the prices
    of the models the records used, the models without a price, whether list or batch prices applied,
    the models whose cached prompt tokens were priced at the input price (no ``cached_input``), and
    the models priced with a ``cached_input`` of their own whose provider never said how many prompt
    tokens it had cached (``cached_unreported``: every prompt token was priced at ``input``, which may
    be more than was paid)."""
    unpriced: set[str] = set()
    used: set[str] = set()
    kinds: set[str] = set()
    with_cached: set[str] = set()  # models some of whose prompt tokens the provider said it had cached
    said: set[str] = set()  # models some of whose calls said how many prompt tokens were cached (0 too)
    for record in records:
        usage = record_usage(record)
        for (model, batched), (_, _, cached) in usage.items():
            used.add(model)
            kinds.add("batch" if batched else "list")
            if cached:
                with_cached.add(model)
        said |= {model for model, told in cached_said(usage).items() if told}
        unpriced |= unpriced_models(usage, table)
    own_cached_price = {name for name, price in table.items()
                        if name not in table.no_cached_price and price.cached_input != price.input}
    # the prices of the models the runs used (a provider's whole table may list thousands)
    return {"file": path, "models": {name: asdict(price) for name, price in table.items() if name in used},
            "unpriced": sorted(unpriced), "at": " and ".join(sorted(kinds, reverse=True)) or "list",
            "cached_at_input": sorted((with_cached & table.no_cached_price) - unpriced),
            "cached_unreported": sorted((used & own_cached_price) - said - unpriced)}


def prices_note(prices: dict[str, Any] | None) -> str:
    """One sentence under the board: which prices, and the models without one; ``""`` without prices."""
    if not prices:
        return ""
    at = {"list": "list prices", "batch": "batch prices (the calls went through --transport batch)",
          "list and batch": "list prices, and batch prices for the calls that went through --transport batch"
          }[prices["at"]]
    text = f"Costs in dollars at {at}, from {prices['file']}; calls answered from the response cache cost nothing."
    at_input = prices.get("cached_at_input") or []
    if at_input:
        text += (f" Cached input was not priced separately for {', '.join(at_input)}: the price file gives no "
                 "cached_input, so the prompt tokens the provider served from its cache are at the input price.")
    unreported = prices.get("cached_unreported") or []
    if unreported:
        text += (f" The provider never said how many prompt tokens it served from its cache for "
                 f"{', '.join(unreported)}: every prompt token is at the input price, not cached_input "
                 "(vLLM says so only with --enable-prompt-tokens-details).")
    if prices["unpriced"]:
        shown = ", ".join(prices["unpriced"])
        text += (
            f" No price for {shown} in the price file: rows that used "
            f"{'it' if len(prices['unpriced']) == 1 else 'them'} are not priced."
        )
    return text


def dollars(value: float | None, status: str | None = None) -> str:
    """Dollars as shown: ``$0.001234`` (four significant digits below a dollar), ``$12.35``,
    ``$1,234``; the status (``not priced``, ``not recorded``) when there is no value."""
    if value is None:
        return status or "–"
    if value >= 100:
        return f"${value:,.0f}"
    if value >= 1 or value == 0:
        return f"${value:,.2f}"
    digits = 3
    while value < 10 ** -(digits - 3) and digits < 12:
        digits += 1
    return f"${value:.{digits}f}"
