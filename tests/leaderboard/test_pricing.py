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
    ("m: {input: 1, output: -2}", "output must be a number from 0 to 1,000,000"),
    ("m: {input: .nan, output: 1}", "input must be a number from 0 to 1,000,000"),
    ("m: {input: 1, output: 1, batch_discount: 2}", "batch_discount is a share"),
    ("m: {input: 1, output: 1, price: 3}", "unknown key 'price'"),
    ("m: {input: [", "malformed YAML in"),
])
def test_bad_price_files_are_one_line(tmp_path, text, problem):
    path = tmp_path / "prices.yaml"
    path.write_text(text)
    with pytest.raises(UsageError, match=problem) as refused:
        read_price_table(path)
    assert "\n" not in str(refused.value) and "prices.yaml" in str(refused.value)


def test_usage_tells_not_said_from_none_cached_and_the_board_says_so_once(tmp_path):
    """A call that did not report cached tokens (None) counts none but leaves the model's cached count
    None while no call of it said; a report of 0 is a 0. The board's price note names, once, the model
    priced with a cached_input of its own whose provider never said (gpt-4o-mini), not the one whose
    provider said 0 (other-model), nor the one without a cached_input (judge-model)."""
    from madeval.leaderboard.money import prices_entry, prices_note
    from madeval.pricing import cached_said, calls_usage

    def told(model, prompt, cached_tokens):
        return {**call(model, prompt, 10), "cached_prompt_tokens": cached_tokens}

    usage = calls_usage([told("gpt-4o-mini", 100, None), told("gpt-4o-mini", 50, None),
                         told("other-model", 100, 0), told("judge-model", 70, None),
                         told("mixed", 100, None), told("mixed", 100, 40), told("mixed", 100, 500)])
    assert usage == {("gpt-4o-mini", False): (150, 20, None), ("other-model", False): (100, 10, 0),
                     ("judge-model", False): (70, 10, None), ("mixed", False): (300, 30, 140)}  # capped at 100
    assert cached_said(usage) == {"gpt-4o-mini": False, "other-model": True, "judge-model": False, "mixed": True}
    path = tmp_path / "prices.yaml"
    path.write_text(TABLE + "other-model: {input: 1, output: 1, cached_input: 0.5}\n"
                    "mixed: {input: 1, output: 1, cached_input: 0.5}\n")
    table = read_price_table(path)
    records = [record("a", "1", [told("gpt-4o-mini", 100, None), told("other-model", 100, 0)]),
               record("a", "2", [told("gpt-4o-mini", 100, None), told("judge-model", 100, None)]),
               record("b", "1", [told("mixed", 100, None)]), record("b", "2", [told("mixed", 100, 30)])]
    # not said is priced as none cached: 100 * 0.15e-6 + 10 * 0.6e-6 + 100 * 1e-6 + 10 * 1e-6
    assert price_records(records, table).per_item["a"]["t/1"] == pytest.approx(0.000015 + 0.000006 + 0.00011)
    entry = prices_entry(str(path), table, records)
    assert entry["cached_unreported"] == ["gpt-4o-mini"]
    note = prices_note(entry)
    assert note.count("never said how many prompt tokens") == 1 and "for gpt-4o-mini:" in note
    assert "--enable-prompt-tokens-details" in note
    said = prices_entry(str(path), table, [records[0] | {"transcript": {"calls": [told("gpt-4o-mini", 9, 0)]}}])
    assert said["cached_unreported"] == [] and "never said" not in prices_note(said)
