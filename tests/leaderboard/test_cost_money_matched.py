"""Money on simulator runs: ``run --prices`` prices every row from the records, the Pareto front and
chart use dollars, and ``self_consistency_matched`` with ``budget=cost`` buys as many samples as the
matched debate's dollars per item. References are summed from ``records.jsonl`` here."""

from __future__ import annotations

import json
import statistics
from collections import defaultdict

import pytest

from helpers import run_quietly
from madeval.leaderboard.cost import pareto_front
from madeval.settings.config import build_settings
from madeval.simulator import simulate

IN, OUT = 0.5, 2.0  # dollars per million prompt and completion tokens


def dollars_per_item(folder, label):
    """Mean over items of the mean over repeats of a configuration's dollars, from its calls."""
    configs = json.loads((folder / "run.json").read_text())["configurations"]
    wanted = next(cid for cid, c in configs.items() if c["label"] == label)
    by_item, calls = defaultdict(list), defaultdict(list)
    for line in (folder / "records.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["unit"]["config"] == wanted:
            spent = sum(c["prompt_tokens"] * IN + c["completion_tokens"] * OUT
                        for c in record["transcript"]["calls"] if not c["cached"]) / 1e6
            by_item[record["unit"]["item"]].append(spent)
            calls[record["unit"]["item"]].append(record["calls"])
    mean = lambda values: statistics.fmean(statistics.fmean(v) for v in values.values())  # noqa: E731
    return mean(by_item), mean(calls)


@pytest.fixture(scope="module")
def runs(generated_tasks, tmp_path_factory):
    root = tmp_path_factory.mktemp("money")
    common = {"tasks": ["arith_mc"], "limit": 12, "cache": "off"}
    with simulate(tasks=generated_tasks.values(), accuracy=0.6, conformity=0.3) as sim:
        first = {**common, "output_path": str(root / "debate"), "base_url": sim.base_url,
                 "runs": [{"agents": 3, "max_turns": 3, "paradigm": "memory", "decider": "simple_voting",
                           "name": "debate"}, {"preset": "baseline_cot"}]}
        debate, _ = run_quietly(build_settings(first))
        model = json.loads((debate.folder / "records.jsonl").read_text()
                           .splitlines()[0])["transcript"]["calls"][0]["model"]
        prices = root / "prices.yaml"
        prices.write_text(f"{json.dumps(model)}: {{input: {IN}, output: {OUT}}}\n")
        second = {**common, "output_path": str(root / "matched"), "base_url": sim.base_url, "prices": str(prices),
                  "runs": [{"preset": "self_consistency_matched",
                            "preset_args": {"run": str(debate.folder), "match": "debate", "budget": "cost",
                                            "prices": str(prices)}},
                           {"preset": "baseline_cot"}],
                  "leaderboard": {"charts": True}}
        matched, _ = run_quietly(build_settings(second))
    return debate.folder, matched.folder


def test_matched_on_money_buys_the_debates_dollars(runs):
    debate, matched = runs
    target, _ = dollars_per_item(debate, "debate")
    cot, cot_calls = dollars_per_item(debate, "baseline_cot")
    config = next(c for c in json.loads((matched / "run.json").read_text())["configurations"].values()
                  if c["preset"] == "self_consistency_matched")
    args = config["preset_args"]
    assert args["matched_cost_per_item"] == pytest.approx(target, rel=1e-9)
    assert args["cost_per_sample"] == pytest.approx(cot / cot_calls, rel=1e-9)
    assert config["agents"] == args["samples"] == max(1, round(target / (cot / cot_calls)))
    assert args["samples"] != args["matched_calls_per_item"]  # a debate's calls cost more than a sample's


def test_run_prices_every_row_and_draws_the_front_against_money(runs):
    _, matched = runs
    board = json.loads((matched / "leaderboard.json").read_text())
    assert board["prices"]["at"] == "list" and board["prices"]["unpriced"] == []
    rows = [r for r in board["rows"] if r["scope"] == "task"]
    for row in rows:
        assert row["cost_per_item"] == pytest.approx(dollars_per_item(matched, row["label"])[0], rel=1e-9)
    assert [r["front_cost_per_item"] for r in rows] == pareto_front([(r["score"], r["cost_per_item"]) for r in rows])
    assert "cost/item" in (matched / "leaderboard.md").read_text()
    assert (matched / "charts" / "cost.png").stat().st_size > 10_000
    assert "dollars per item" in (matched / "charts" / "cost.svg").read_text()


@pytest.mark.parametrize(("args", "message"), [
    ("budget=tokens", "budget is calls or cost"),
    ("budget=cost", "budget=cost needs prices=FILE"),
    ("prices=PRICES", "prices and sample go with budget=cost"),
    ("budget=cost,prices=PRICES,sample=nope", "unknown reference configuration 'nope'"),
])
def test_matched_on_money_bad_input_is_one_line_and_status_2(runs, args, message, capsys, tmp_path):
    from madeval.cli.main import main

    debate, _ = runs
    given = f"run={debate},match=debate," + args.replace("PRICES", str(debate.parent / "prices.yaml"))
    argv = ["--tasks", "arith_mc", "--preset", "self_consistency_matched", "-o", str(tmp_path / "out"),
            "--base-url", "http://127.0.0.1:9/v1", "--preset-args", given]
    with pytest.raises(SystemExit) as done:
        main(argv)
    err = capsys.readouterr().err
    assert done.value.code == 2 and len(err.strip().splitlines()) == 1 and message in err
    assert not (tmp_path / "out").exists()
