"""The cost of a study before it runs (``madeval sample-size --prices``): calls and tokens measured
on a MALLM file or a pilot run, priced at list and batch prices; every figure done by hand."""

from __future__ import annotations

import gzip
import json

import pytest

from helpers import madeval_in_process
from madeval.debate.prompts.mallm import DEBATE_SYSTEM, DISCUSSION_LINES, SIMPLE_IMPROVE
from madeval.leaderboard.study_cost import CallShape, mallm_shape, pilot_shape, study_cost
from madeval.pricing import ModelPrice

PRICE = ModelPrice(input=0.15, output=0.60, cached_input=0.075, batch_discount=0.5)


def test_study_cost_by_hand():
    # 144 configurations x 100 items x 12 calls = 172,800 calls; 1,000 prompt and 250 completion tokens
    # each: 172.8 M x $0.15 + 43.2 M x $0.60 = $25.92 + $25.92 = $51.84 at list, half in batch
    cost = study_cost(100, 144, CallShape(12.0, 1000, 250), PRICE)
    assert cost.calls == 172_800
    assert cost.list_dollars == pytest.approx(51.84)
    assert cost.batch_dollars == pytest.approx(25.92)


def test_mallm_shape_rebuilds_the_prompts(tmp_path):
    debate = {
        "exampleId": "e1", "finalAnswer": "t", "instruction": "I", "input": ["Q?"],
        "personas": "[{'persona': 'A', 'personaDescription': 'd'}]",
        "globalMemory": [
            {"turn": 1, "agent_id": "a", "persona": "A", "message": "x" * 40, "agreement": None, "solution": "s"},
            {"turn": 2, "agent_id": "a", "persona": "A", "message": "y" * 80, "agreement": False, "solution": "t"},
        ],
    }
    path = tmp_path / "mallm.json.gz"
    with gzip.open(path, "wt") as handle:
        json.dump([debate], handle)
    fixed = (len(DEBATE_SYSTEM.format(persona="", instruction="", input="", context_line="", discussion=""))
             + len(DISCUSSION_LINES.format(draft="", memory="")) + len(SIMPLE_IMPROVE))
    shape = mallm_shape(path)
    # first call: role "A: d" (4) + instruction and input (3); second: + the draft "s" (1) + the first
    # turn's message as memory, "A" + ": " + 40 + newline (44): mean prompt fixed + (7 + 52) / 2 characters
    assert shape.prompt_tokens == pytest.approx((fixed + 29.5) / 4)
    assert shape.completion_tokens == pytest.approx(60 / 4)
    assert shape.calls_per_item == 2
    first = mallm_shape(path, max_turns=1)  # only the first turn's message: no draft, no discussion
    assert (first.prompt_tokens, first.completion_tokens, first.calls_per_item) == ((fixed + 7) / 4, 10, 1)


def test_mallm_files_that_are_not_mallm_output_are_one_line(tmp_path):
    from madeval.errors import UsageError

    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000)  # read as a stream, depth-bounded: no recursion, no gigabytes
    with pytest.raises(UsageError, match="nested more than"):
        mallm_shape(path)
    path.write_text('[{"a": 1}]')
    with pytest.raises(UsageError, match="record 1 has no"):
        mallm_shape(path)


def pilot_run(tmp_path, calls, **fields):
    """A pilot run folder: configuration c, task t, one finished debate that made ``calls``;
    ``fields``: more fields of its record."""
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"configurations": {"c": {"label": "c"}}, "tasks": {"t": {}}}))
    record = {"unit": {"key": "k1", "config": "c", "task": "t", "item": "1", "repeat": 0}, "metrics": {"acc": 1.0},
              "decision_success": True, "parse_failure": False, "turns": 1, "calls": len(calls), **fields,
              "transcript": {"calls": calls}}
    (folder / "records.jsonl").write_text(json.dumps(record) + "\n")
    return folder


def sample_size(*args):
    """``madeval sample-size ARGS`` in the test's process, its output captured."""
    return madeval_in_process("sample-size", *args)


def priced_study(tmp_path, folder, prices_yaml, model, *more):
    """``madeval sample-size`` of a study of 1,000 items and 2 configurations of ``model`` priced by the price
    file ``prices_yaml`` (written to tmp_path/prices.yaml), its calls shaped as the pilot ``folder``'s."""
    prices = tmp_path / "prices.yaml"
    prices.write_text(prices_yaml)
    return sample_size("--items", 1000, "--configurations", 2, "--prices", prices, "--model", model,
                       "--cost-pilot", folder, *more)


def test_pilot_shape_and_the_command(tmp_path):
    calls = [{"model": "gpt-4o-mini", "prompt_tokens": 900, "completion_tokens": 300, "cached": False},
             {"model": "gpt-4o-mini", "prompt_tokens": 1100, "completion_tokens": 100, "cached": False},
             {"model": "gpt-4o-mini", "prompt_tokens": 5000, "completion_tokens": 5000, "cached": True}]
    folder = pilot_run(tmp_path, calls, cached_calls=1, tokens={"total": 12400})
    shape = pilot_shape(folder)
    # 3 calls per item; the 2 paid calls average 1,000 prompt and 200 completion tokens
    assert (shape.calls_per_item, shape.prompt_tokens, shape.completion_tokens) == (3, 1000, 200)
    shown = priced_study(tmp_path, folder, "gpt-4o-mini: {input: 0.15, output: 0.60, batch_discount: 0.5}\n",
                         "gpt-4o-mini")
    assert shown.returncode == 0, shown.stderr
    # 2 x 1,000 x 3 = 6,000 calls: 6 M prompt x $0.15 + 1.2 M completion x $0.60 = $0.90 + $0.72
    assert "calls: 6,000" in shown.stdout
    assert "$1.62 at list prices, $0.81 at batch prices" in shown.stdout
    bad = sample_size("--items", 10, "--prices", tmp_path / "prices.yaml", "--model", "other", "--cost-pilot", folder)
    assert bad.returncode == 2 and "no price for model 'other'" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1


def test_a_pilots_provider_cached_prompt_tokens_are_priced_at_cached_input(tmp_path):
    calls = [{"model": "m", "prompt_tokens": 900, "completion_tokens": 300, "cached": False,
              "cached_prompt_tokens": 400},
             {"model": "m", "prompt_tokens": 1100, "completion_tokens": 100, "cached": False,
              "cached_prompt_tokens": 600},
             {"model": "m", "prompt_tokens": 10, "completion_tokens": 10, "cached": False,
              "cached_prompt_tokens": None}]
    folder = pilot_run(tmp_path, calls, tokens={"total": 2420})
    shape = pilot_shape(folder)
    # 3 paid calls: 2,010 prompt tokens, 1,000 of them cached (the call that did not say counts none)
    assert (shape.prompt_tokens, shape.cached_prompt_tokens, shape.completion_tokens) == (670, 1000 / 3, 410 / 3)
    prices = "m: {input: 0.15, output: 0.60, cached_input: 0.05, batch_discount: 0.5}\n"
    shown = priced_study(tmp_path, folder, prices, "m")
    assert shown.returncode == 0, shown.stderr
    # 2 x 1,000 x 3 = 6,000 calls: 4.02 M prompt of which 2 M cached, 0.82 M completion:
    # 2.02 M x $0.15 + 2 M x $0.05 + 0.82 M x $0.60 = $0.303 + $0.10 + $0.492 = $0.895; half in batch
    assert "2.0 M of the prompt tokens from the provider's prompt cache (333 per call" in shown.stdout
    assert "$0.90 at list prices, $0.45 at batch prices" in shown.stdout
    given = priced_study(tmp_path, folder, prices, "m", "--prompt-tokens", 1000)
    # prompt sizes given: nothing known of their caching, all at input: 6 M x $0.15 + 0.82 M x $0.60 = $1.392
    assert "$1.39 at list prices" in given.stdout and "prompt cache" not in given.stdout
