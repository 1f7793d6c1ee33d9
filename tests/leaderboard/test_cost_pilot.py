"""A pilot run prices a study only with replies of the model priced, each debate counted once.

A simulator run's replies are synthetic (a dozen tokens each, against about 480 for real MALLM
replies): ``sample-size --cost-pilot`` must refuse to print them as money, whatever name the run
gave its model, and a rescored pilot must not count its replayed debates a second time.
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from pathlib import Path

import pytest

from helpers import madeval_in_process, run_quietly, settings_for
from madeval.leaderboard.study_cost import pilot_shape
from madeval.records.folder import read_records

PRICES = Path(__file__).resolve().parents[2] / "examples" / "prices-openai.yaml"


def madeval(*args):
    return madeval_in_process(*args)


def price(pilot, *more):
    return madeval("sample-size", "--items", 100, "--prices", PRICES, "--model", "gpt-4o-mini",
                   "--configurations", 4, "--cost-pilot", pilot, *more)


@pytest.fixture(scope="module")
def pilot(sim, tmp_path_factory):
    """A simulator run of 12 items, 2 repeats, counting after 3 turns, with a rescore added."""
    folder = tmp_path_factory.mktemp("pilot") / "run"
    settings = settings_for(sim.base_url, folder.parent, limit=12, repeats=2, decider="counting", max_turns=3,
                            output_path=str(folder))
    run_quietly(settings)
    done = madeval("rescore", folder, "--decider", "counting:after_turns=1", "--base-url", sim.base_url,
                   "--cache", "off")
    assert done.returncode == 0, done.stderr
    return folder


@pytest.fixture(scope="module")
def named_pilot(generated_tasks, tmp_path_factory):
    """A simulator serving the priced model's own name (``--model gpt-4o-mini``)."""
    from madeval.simulator import simulate

    folder = tmp_path_factory.mktemp("named") / "run"
    with simulate(tasks=generated_tasks.values(), served=["gpt-4o-mini"]) as named:
        run_quietly(settings_for(named.base_url, folder.parent, limit=4, model="gpt-4o-mini",
                                 output_path=str(folder)))
    assert {m["model"] for m in json.loads((folder / "run.json").read_text())["models"]} == {"gpt-4o-mini"}
    return folder


@pytest.mark.parametrize("which", ["pilot", "named_pilot"])
def test_a_simulator_pilot_is_not_printed_as_money(which, request):
    folder = request.getfixturevalue(which)
    done = price(folder)
    assert done.returncode == 2 and done.stdout == ""
    (line,) = done.stderr.strip().splitlines()
    assert "answered by madeval's simulator" in line and "synthetic" in line and "$" not in line


def test_a_rescored_pilot_counts_each_debate_once(pilot):
    own = list(read_records(pilot))
    rescored = [json.loads(line) for line in (pilot / "rescored.jsonl").read_text().splitlines()]
    assert len(own) == 24 and len(rescored) == 24
    shape = pilot_shape(pilot)
    # by hand over records.jsonl only: calls per item (mean over an item's repeats), tokens per paid call
    by_item = defaultdict(list)
    for record in own:
        by_item[record["unit"]["item"]].append(record["calls"])
    calls = sum(record["calls"] for record in own)
    prompt = sum(c["prompt_tokens"] for r in own for c in r["transcript"]["calls"])
    completion = sum(c["completion_tokens"] for r in own for c in r["transcript"]["calls"])
    assert shape.calls_per_item == pytest.approx(statistics.fmean(statistics.fmean(v) for v in by_item.values()))
    assert shape.prompt_tokens == pytest.approx(prompt / calls)
    assert shape.completion_tokens == pytest.approx(completion / calls)
    assert shape.source.startswith(f"measured on 24 debates of {pilot} (24 rescored records left out")
    assert shape.simulated == ("simulator",)


def test_the_calls_of_a_simulator_pilot_price_with_token_sizes_given(pilot):
    shape = pilot_shape(pilot)
    done = price(pilot, "--prompt-tokens", 2000, "--completion-tokens", 480)
    assert done.returncode == 0, done.stderr
    calls = 4 * 100 * shape.calls_per_item
    # calls x 2,000 x $0.15 / M + calls x 480 x $0.60 / M
    dollars = calls * 2000 * 0.15 / 1e6 + calls * 480 * 0.60 / 1e6
    assert f"calls: {calls:,.0f} ({shape.calls_per_item:.2f} per item; measured on 24 debates" in done.stdout
    assert "answered by madeval's simulator; --prompt-tokens, --completion-tokens given" in done.stdout
    assert f"${dollars:,.2f} at list prices" in done.stdout


def test_a_pilot_of_another_model_is_priced_with_a_caution(tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "run.json").write_text(json.dumps({"configurations": {"c": {"label": "c"}}, "tasks": {"t": {}},
                                                 "models": [{"endpoint": "default", "model": "llama-3-8b"}]}))
    calls = [{"model": "llama-3-8b", "prompt_tokens": 1000, "completion_tokens": 400, "cached": False}]
    record = {"unit": {"key": "k1", "config": "c", "task": "t", "item": "1", "repeat": 0}, "metrics": {"acc": 1.0},
              "decision_success": True, "parse_failure": False, "turns": 1, "calls": 1, "tokens": {"total": 1400},
              "transcript": {"calls": calls}}
    (folder / "records.jsonl").write_text(json.dumps(record) + "\n")
    done = price(folder)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == ("caution: the pilot's replies came from llama-3-8b, not gpt-4o-mini: the tokens per call "
                        "are theirs, and gpt-4o-mini may write longer or shorter replies")
    # 400 calls x (1,000 x $0.15 + 400 x $0.60) / M = $0.156
    assert lines[-1] == "cost on gpt-4o-mini: $0.16 at list prices, $0.08 at batch prices"
