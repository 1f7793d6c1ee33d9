"""The price file: per model, dollars per million input, output and cached input tokens, and the
discount of its batch API.

YAML or JSON, one mapping per model name (the shape of inspect-ai's model cost configuration,
``--model-cost-config``: a model's prices per million tokens by kind)::

    gpt-4o-mini:
      input: 0.15          # dollars per million prompt tokens
      output: 0.60         # dollars per million completion tokens
      cached_input: 0.075  # per million prompt tokens the provider served from its prompt cache
      batch_discount: 0.5  # the share taken off through the Batch API (OpenAI: half)

``cached_input`` defaults to ``input`` and ``batch_discount`` to 0. A price is a number from 0
to :data:`MAX_PRICE`; the file is read by madeval's one bounded YAML reader
(:func:`madeval.util.yaml_loader.read_yaml_file`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from madeval.errors import UsageError
from madeval.util.yaml_loader import read_yaml_file

PER = 1_000_000  # prices are per million tokens
#: The highest price a file may give, in dollars per million tokens (the dearest list prices are
#: hundreds): far above any real price, and low enough that no token count makes a cost infinite.
MAX_PRICE = 1_000_000.0
KEYS = ("input", "output", "cached_input", "batch_discount")


@dataclass(frozen=True)
class ModelPrice:
    """One model's prices, in dollars per million tokens."""

    input: float
    output: float
    cached_input: float
    batch_discount: float = 0.0

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_prompt_tokens: int = 0,
             batch: bool = False) -> float:
        """Dollars for one call (``cached_prompt_tokens`` of ``prompt_tokens`` billed at the cached rate)."""
        cached = min(max(cached_prompt_tokens, 0), prompt_tokens)
        dollars = ((prompt_tokens - cached) * self.input + cached * self.cached_input
                   + completion_tokens * self.output) / PER
        return dollars * (1.0 - self.batch_discount) if batch else dollars


class PriceTable(dict):
    """Model name -> :class:`ModelPrice`; :attr:`no_cached_price` names the models whose file entry
    gives no ``cached_input`` (their cached prompt tokens are priced at ``input``)."""

    def __init__(self, *args: Any, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.no_cached_price: set[str] = set()

    def price(self, model: str) -> ModelPrice | None:
        """The price of ``model``, or None when the table has none."""
        return self.get(model)


def read_price_table(path: str | Path) -> PriceTable:
    """Read a price file; any problem is a one-line :class:`UsageError` naming the file and model."""
    where = f"price file {path}"
    data = read_yaml_file(path, what="price file ")  # size, nodes and depth bounded (an alias bomb is refused)
    if not isinstance(data, dict) or not data:
        raise UsageError(f"{where}: must map model names to their prices")
    table = PriceTable()
    for model, prices in data.items():
        table[str(model)] = _model_price(prices, f"{where}: model '{shorten(str(model))}'")
        if "cached_input" not in prices:
            table.no_cached_price.add(str(model))
    return table


def _model_price(prices: Any, where: str) -> ModelPrice:
    if not isinstance(prices, dict):
        raise UsageError(f"{where} must have input and output prices")
    unknown = sorted(set(map(str, prices)) - set(KEYS))
    if unknown:
        raise UsageError(f"{where} has unknown key '{shorten(unknown[0])}' (keys: {', '.join(KEYS)})")
    values = {}
    for key in KEYS:
        if key not in prices:
            continue
        value = prices[key]
        # compared before any conversion: an integer of 400 digits has no float; NaN fails both sides
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= MAX_PRICE:
            shown = repr(value) if not isinstance(value, int) or abs(value) < 10**20 else "a number of " \
                f"{len(str(abs(value)))} digits"
            raise UsageError(f"{where}: {key} must be a number from 0 to {MAX_PRICE:,.0f} "
                             f"(dollars per million tokens), got {shorten(shown)}")
        values[key] = float(value)
    for key in ("input", "output"):
        if key not in values:
            raise UsageError(f"{where} has no {key} price")
    if values.get("batch_discount", 0.0) > 1:
        raise UsageError(f"{where}: batch_discount is a share between 0 and 1, got {values['batch_discount']}")
    return ModelPrice(values["input"], values["output"], values.get("cached_input", values["input"]),
                      values.get("batch_discount", 0.0))


def shorten(text: str, limit: int = 60) -> str:
    """``text`` cut to ``limit`` characters (a value quoted in a one-line error)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."
