"""Cost in money: a price table per model turns the tokens a run recorded into dollars.

:mod:`.table` reads the price file; :mod:`.usage` sums a record's tokens per model (kept when its
transcript is dropped); :mod:`.cost` prices records, items and configurations; :mod:`.study` prices a
study before it runs (``madeval sample-size --prices``). The leaderboard shows cost per item and per
configuration and draws its Pareto front against money when the board is given ``--prices``.
"""

from madeval.pricing.cost import BATCH_KEY, CostSummary, price_records, record_cost, unpriced_models, usage_cost
from madeval.pricing.table import ModelPrice, PriceTable, read_price_table
from madeval.pricing.usage import USAGE_KEY, Usage, cached_said, calls_usage, record_usage, used_models

__all__ = ["BATCH_KEY", "USAGE_KEY", "CostSummary", "ModelPrice", "PriceTable", "Usage", "cached_said", "calls_usage",
           "price_records", "read_price_table", "record_cost", "record_usage", "unpriced_models", "usage_cost",
           "used_models"]
