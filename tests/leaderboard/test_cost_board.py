"""Cost in money on the board: dollars per item and per configuration from the records' tokens at a
price file's prices (list, or batch for a run through the batch transport), "not priced" and "not
recorded" instead of 0, and the Pareto front against money. Every figure is summed by hand."""

from __future__ import annotations

import csv
import io
import json

import pytest

from helpers import madeval_in_process
from madeval.analysis.run_data import load_run
from madeval.leaderboard import LeaderboardOptions, build_leaderboard, write_outputs
from madeval.leaderboard.render import markdown

PRICES = "m-big: {input: 2.0, output: 8.0, batch_discount: 0.5}\nm-small: {input: 0.5, output: 1.0}\n"


def call(model, prompt, completion, cached=False):
    return {"purpose": "draft", "agent": 0, "turn": 1, "model": model, "endpoint": "default",
            "prompt_tokens": prompt, "completion_tokens": completion, "latency_s": 0.1, "attempts": 1,
            "cached": cached, "errors": [], "depth": 1}


def record(config, item, correct, calls, repeat=0):
    prompt = sum(c["prompt_tokens"] for c in calls)
    completion = sum(c["completion_tokens"] for c in calls)
    return {"unit": {"key": json.dumps([config, "t", item, repeat]), "config": config, "task": "t", "item": item,
                     "repeat": repeat},
            "metrics": {"accuracy": float(correct)}, "decision_success": True, "parse_failure": False,
            "turns": 1, "calls": len(calls), "tokens": {"prompt": prompt, "completion": completion,
                                                         "total": prompt + completion},
            "llm_s": 0.1 * len(calls), "wall_s": 0.2, "transcript": {"calls": calls, "messages": [], "agents": []}}


def write_run(folder, records, configurations, transport="aiohttp"):
    folder.mkdir()
    run = {"configurations": configurations, "tasks": {"t": {}}, "settings": {"transport": transport},
           "order": {"configurations": list(configurations)}}
    (folder / "run.json").write_text(json.dumps(run))
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


# debate: item 1 = 1,000,000 prompt + 100,000 completion tokens of m-big (2.00 + 0.80 = $2.80) and a
# cache hit (free); item 2 = two repeats, 500,000 + 0 of m-big ($1.00) and 0 + 500,000 of m-small ($0.50).
# Per item: (2.80 + (1.00 + 0.50) / 2) / 2 = $1.775; in all 2.80 + 1.00 + 0.50 = $4.30.
# single: 200,000 + 200,000 of m-small per item ($0.10 + $0.20 = $0.30), one right of two.
RECORDS = [
    record("debate", "1", 1, [call("m-big", 1_000_000, 100_000), call("m-big", 7, 7, cached=True)]),
    record("debate", "2", 1, [call("m-big", 500_000, 0)]),
    record("debate", "2", 1, [call("m-small", 0, 500_000)], repeat=1),
    record("single", "1", 1, [call("m-small", 200_000, 200_000)]),
    record("single", "2", 0, [call("m-small", 200_000, 200_000)]),
]
CONFIGS = {"debate": {"label": "debate"}, "single": {"label": "single"}}


@pytest.fixture
def prices(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text(PRICES)
    return path


def rows_by_label(board):
    return {row["label"]: row for row in board["rows"]}


def test_cost_per_item_and_in_all_at_list_prices(tmp_path, prices):
    folder = write_run(tmp_path / "run", RECORDS, CONFIGS)
    board = build_leaderboard(folder, LeaderboardOptions(prices=str(prices)))
    rows = rows_by_label(board)
    assert rows["debate"]["cost_per_item"] == pytest.approx(1.775)
    assert rows["debate"]["cost_total"] == pytest.approx(4.30)
    assert rows["single"]["cost_per_item"] == pytest.approx(0.30)
    assert rows["single"]["cost_total"] == pytest.approx(0.60)
    assert board["prices"]["at"] == "list" and board["prices"]["unpriced"] == []
    assert board["prices"]["models"]["m-big"] == {"input": 2.0, "output": 8.0, "cached_input": 2.0,
                                                  "batch_discount": 0.5}
    # both on the money front: debate scores higher (1.0 > 0.5), single costs less
    assert rows["debate"]["front_cost_per_item"] and rows["single"]["front_cost_per_item"]
    text = markdown(board)
    single_line = next(line for line in text.splitlines() if line.startswith("| single |"))
    assert "| $0.3000 | $0.6000 |" in single_line  # below a dollar: four significant digits
    assert "| $4.30 |" in next(line for line in text.splitlines() if line.startswith("| debate |"))
    write_outputs(board, folder)
    table = {r["label"]: r for r in csv.DictReader(io.StringIO((folder / "leaderboard.csv").read_text()))}
    assert float(table["debate"]["cost_total"]) == pytest.approx(4.30)
    assert "cost/item" in (folder / "leaderboard.html").read_text()


def test_batch_transport_is_priced_at_batch_prices(tmp_path, prices):
    folder = write_run(tmp_path / "run", RECORDS, CONFIGS, transport="batch")
    rows = rows_by_label(build_leaderboard(folder, LeaderboardOptions(prices=str(prices))))
    # m-big at half price (batch_discount 0.5), m-small has no discount: (1.40 + (0.50 + 0.50) / 2) / 2
    assert rows["debate"]["cost_per_item"] == pytest.approx(0.95)
    assert rows["debate"]["cost_total"] == pytest.approx(1.40 + 0.50 + 0.50)
    assert rows["single"]["cost_per_item"] == pytest.approx(0.30)


def test_a_model_without_a_price_is_not_priced_never_zero(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text("m-small: {input: 0.5, output: 1.0}\nunused: {input: 1, output: 1}\n")
    folder = write_run(tmp_path / "run", RECORDS, CONFIGS)
    board = build_leaderboard(folder, LeaderboardOptions(prices=str(path)))
    rows = rows_by_label(board)
    assert rows["debate"]["cost_per_item"] is None and rows["debate"]["cost_status"] == "not priced"
    assert list(board["prices"]["models"]) == ["m-small"]  # the prices of the models used, not the whole file
    assert not rows["debate"]["front_cost_per_item"]
    assert rows["single"]["front_cost_per_item"]  # alone on the money front
    text = markdown(board)
    assert text.count("No price for m-big") == 1
    assert "| not priced | not priced |" in text
    write_outputs(board, folder)
    table = {r["label"]: r for r in csv.DictReader(io.StringIO((folder / "leaderboard.csv").read_text()))}
    assert table["debate"]["cost_per_item"] == "not priced"


def test_without_a_price_file_the_board_shows_no_money(tmp_path):
    folder = write_run(tmp_path / "run", RECORDS, CONFIGS)
    board = build_leaderboard(folder)
    assert board["prices"] is None and "cost/item" not in markdown(board)
    assert all(row["cost_per_item"] is None for row in board["rows"])


def test_imported_configurations_record_no_cost_and_stay_off_the_front(tmp_path, prices):
    imported = [record("mallm", item, 1, []) for item in ("1", "2")]  # all right, and no calls recorded
    configs = {**CONFIGS, "mallm": {"label": "mallm", "imported": {"format": "mallm"}}}
    folder = write_run(tmp_path / "run", RECORDS + imported, configs)
    board = build_leaderboard(folder, LeaderboardOptions(prices=str(prices)))
    row = rows_by_label(board)["mallm"]
    assert row["calls_per_item"] is None and row["tokens_per_item"] is None and row["cost_per_item"] is None
    assert row["cost_status"] == "not recorded"
    # it scores 1.0 "for 0 calls": counted as recorded, it would take the whole front
    assert not any(row[key] for key in ("front_cost_per_item", "front_tokens_per_item", "front_calls_per_item"))
    assert rows_by_label(board)["single"]["front_calls_per_item"]
    line = next(line for line in markdown(board).splitlines() if line.startswith("| mallm |"))
    assert line.count("not recorded") == 5 and " 0.0 " not in line


def test_lean_load_keeps_tokens_per_model(tmp_path):
    folder = write_run(tmp_path / "run", RECORDS, CONFIGS, transport="batch")
    assert "usage" not in load_run(folder, transcripts=False).records[0]  # an unpriced board holds no more
    data = load_run(folder, transcripts=False, priced=True)
    first = data.records[0]
    assert "transcript" not in first
    # (model, batched) -> prompt, completion, cached prompt tokens; the cache hit is left out; calls
    # recorded without their transport follow run.json's; no call said its cached tokens: None, not 0
    assert first["usage"] == {("m-big", True): (1_000_000, 100_000, None)}
    assert first["batch_priced"] is True


def test_leaderboard_show_prices_option(tmp_path, prices):
    folder = write_run(tmp_path / "run", RECORDS, CONFIGS)
    shown = madeval_in_process("leaderboard", "show", folder, "--prices", prices)
    assert shown.returncode == 0, shown.stderr
    assert "$4.30" in shown.stdout
    bad = madeval_in_process("leaderboard", "show", folder, "--prices", tmp_path / "missing.yaml")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "missing.yaml" in bad.stderr


def test_an_lm_eval_import_reads_not_recorded_on_a_priced_board(tmp_path, prices):
    """The importer's configuration is marked imported: a real import's board says "not recorded"."""
    from pathlib import Path

    samples = next((Path(__file__).parents[1] / "importers" / "fixtures" / "lmeval" / "sim-acc80").glob(
        "samples_gsm8k_*.jsonl.gz"))
    folder = tmp_path / "imported"
    done = madeval_in_process("import", "lm-eval", samples, "--task", "gsm8k", "--filter", "strict-match",
                              "--output-path", folder)
    assert done.returncode == 0, done.stderr
    board = build_leaderboard(folder, LeaderboardOptions(prices=str(prices)))
    (row,) = board["rows"]
    assert row["cost_status"] == "not recorded" and row["calls_per_item"] is None
    assert not row["front_calls_per_item"] and not row["front_cost_per_item"]
    write_outputs(board, folder)
    (line,) = csv.DictReader(io.StringIO((folder / "leaderboard.csv").read_text()))
    assert line["calls_per_item"] == line["tokens_per_item"] == line["cost_per_item"] == "not recorded"


def test_merged_runs_are_priced_each_at_its_transport(tmp_path, prices):
    from madeval.leaderboard import build_merged_leaderboard

    listed = write_run(tmp_path / "list", RECORDS[3:], {"single": CONFIGS["single"]})
    batched = write_run(tmp_path / "batch", RECORDS[:3], {"debate": CONFIGS["debate"]}, transport="batch")
    board = build_merged_leaderboard([listed, batched], LeaderboardOptions(prices=str(prices)))
    rows = rows_by_label(board)
    assert rows["debate"]["cost_total"] == pytest.approx(1.40 + 0.50 + 0.50)  # m-big at half price
    assert rows["single"]["cost_total"] == pytest.approx(0.60)  # list prices
    assert board["prices"]["at"] == "list and batch"
    assert "batch prices for the calls that went through --transport batch" in markdown(board)


def test_run_with_a_bad_price_file_stops_before_any_debate(tmp_path, capsys):
    from madeval.cli.main import main

    bad = tmp_path / "prices.yaml"
    bad.write_text("m: {input: 1}\n")
    with pytest.raises(SystemExit) as done:
        main(["--tasks", "arith_mc", "--prices", str(bad), "-o", str(tmp_path / "out"),
              "--base-url", "http://127.0.0.1:9/v1"])
    err = capsys.readouterr().err
    assert done.value.code == 2 and len(err.strip().splitlines()) == 1 and "has no output price" in err
    assert not (tmp_path / "out").exists()


def test_a_stored_price_file_that_is_gone_says_how_to_do_without(tmp_path, prices):
    folder = write_run(tmp_path / "run", RECORDS, CONFIGS)
    run = json.loads((folder / "run.json").read_text())
    (folder / "run.json").write_text(json.dumps({**run, "leaderboard": {"prices": str(tmp_path / "gone.yaml")}}))
    show = ["leaderboard", "show", folder]
    gone = madeval_in_process(*show)
    assert gone.returncode == 2 and "gone.yaml is not there" in gone.stderr and "--prices ''" in gone.stderr
    assert not (folder / "leaderboard.md").exists()
    without = madeval_in_process(*show, "--prices", "")
    assert without.returncode == 0 and "cost/item" not in without.stdout
    other = madeval_in_process(*show, "--prices", prices)
    assert other.returncode == 0 and "$4.30" in other.stdout
