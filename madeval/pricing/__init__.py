"""Cost in money: a price table per model turns the tokens a run recorded into dollars.

:mod:`.table` reads the price file; :mod:`.cost` prices calls and records. The board, the Pareto
chart, ``self_consistency_matched`` and ``sample-size`` do not use it yet.
"""

from .cost import CostSummary, price_records
from .table import ModelPrice, PriceTable, read_price_table

__all__ = ["CostSummary", "ModelPrice", "PriceTable", "price_records", "read_price_table"]
