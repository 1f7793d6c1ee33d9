"""The price table and the cost of recorded calls, checked against sums done by hand."""

from __future__ import annotations

import pytest

from madeval.errors import UsageError
from madeval.pricing import price_records, read_price_table

TABLE = """
gpt-4o-mini: {input: 0.15, output: 0.60, cached_input: 0.075, batch_discount: 0.5}
judge-model: {input: 2, output: 8}
"""


def call(model, prompt, completion, cached=False):
    return {"model": model, "prompt_tokens": prompt, "completion_tokens": completion, "cached": cached}


def record(config, item, calls):
    return {"unit": {"config": config, "task": "t", "item": item, "repeat": 0}, "transcript": {"calls": calls}}


def test_costs_per_item_and_configuration(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text(TABLE)
    table = read_price_table(path)
    assert table.price("judge-model").cached_input == 2.0  # defaults to the input price
    # 1,000,000 prompt tokens at 0.15 and 200,000 completion tokens at 0.60: 0.15 + 0.12 = 0.27 dollars
    assert table.price("gpt-4o-mini").cost(1_000_000, 200_000) == pytest.approx(0.27)
    assert table.price("gpt-4o-mini").cost(1_000_000, 200_000, batch=True) == pytest.approx(0.135)
    # half the prompt served from the provider's prompt cache: 0.075 + 0.0375 + 0.12
    assert table.price("gpt-4o-mini").cost(1_000_000, 200_000, cached_prompt_tokens=500_000) == pytest.approx(0.2325)
    records = [
        record("a", "1", [call("gpt-4o-mini", 1000, 100), call("judge-model", 500, 50)]),
        record("a", "2", [call("gpt-4o-mini", 2000, 0), call("gpt-4o-mini", 9999, 9999, cached=True)]),
        record("b", "1", [call("mystery", 10, 10)]),
    ]
    summary = price_records(records, table)
    # item 1: 1000*0.15e-6 + 100*0.6e-6 + 500*2e-6 + 50*8e-6 = 0.00015 + 0.00006 + 0.001 + 0.0004
    assert summary.per_item["a"]["t/1"] == pytest.approx(0.00161)
    assert summary.per_item["a"]["t/2"] == pytest.approx(0.0003)  # the cache hit cost nothing
    assert summary.per_configuration()["a"] == pytest.approx((0.00161 + 0.0003) / 2)
    assert summary.unpriced == {"mystery"} and summary.per_item["b"]["t/1"] is None  # never 0: not priced
    assert summary.per_configuration()["b"] is None
    batch = price_records(records, table, batch=True)
    # only gpt-4o-mini has a batch discount: 0.00021 / 2 + 0.0014
    assert batch.per_item["a"]["t/1"] == pytest.approx(0.000105 + 0.0014)


@pytest.mark.parametrize("text, problem", [
    ("[1, 2]", "must map model names"),
    ("m: {input: 1}", "has no output price"),
    ("m: {input: 1, output: -2}", "output must be a number >= 0"),
    ("m: {input: .nan, output: 1}", "input must be a number >= 0"),
    ("m: {input: 1, output: 1, batch_discount: 2}", "batch_discount is a share"),
    ("m: {input: 1, output: 1, price: 3}", "unknown key 'price'"),
    ("m: {input: [", "not YAML or JSON"),
])
def test_bad_price_files_are_one_line(tmp_path, text, problem):
    path = tmp_path / "prices.yaml"
    path.write_text(text)
    with pytest.raises(UsageError, match=problem) as refused:
        read_price_table(path)
    assert "\n" not in str(refused.value) and "prices.yaml" in str(refused.value)
