"""Sampling: Cochran's size with finite-population correction, seeded paired draws, run.json."""

from __future__ import annotations

import json

import pytest

from helpers import madeval_in_process, run_quietly, settings_for
from madeval.core.item import Item
from madeval.errors import UsageError
from madeval.records.folder import read_records
from madeval.settings.config import DebateConfig
from madeval.settings.sampling import cochran_n0, cochran_sample_size, draw, parse_sample

# "Voting or Consensus?" (seed 001), Table 3: dataset size N and the paper's sample size.
TABLE_3 = [
    ("MMLU", 14042, 375),
    ("MMLU-Pro", 12032, 374),
    ("StrategyQA", 2289, 330),
    ("MuSR", 250, 152),
    ("SQuAD 2.0", 11873, 373),
]


@pytest.mark.parametrize(("name", "population", "paper"), TABLE_3)
def test_sample_size_reproduces_table_3(name, population, paper):
    assert cochran_sample_size(population) == paper, name


def test_sample_size_gpqa_row_does_not_follow_from_the_formula():
    # Table 3 lists 250 for GPQA's 546 items; Cochran with FPC gives n = 385 / (1 + 384/546) = 226.03,
    # so 227 (and 226 without rounding n0 up first). The paper's 250 is not the formula's value.
    assert cochran_sample_size(546) == 227


def test_sample_size_hand_computed_values():
    assert cochran_n0() == 385  # 1.959964^2 * 0.25 / 0.05^2 = 384.15, rounded up
    assert cochran_n0(0.99, 0.05) == 664  # 2.575829^2 * 0.25 / 0.0025 = 663.49
    assert cochran_sample_size(198) == 131  # 385 / (1 + 384/198) = 130.98
    assert cochran_sample_size(10) == 10  # 385 / (1 + 38.4) = 9.77 -> 10, never more than N
    assert cochran_sample_size(1) == 1
    assert cochran_sample_size(1000, 0.90, 0.1) == 64  # n0 = ceil(67.64) = 68; 68 / (1 + 67/1000) = 63.73


def test_sample_size_command(tmp_path):
    done = madeval_in_process("sample-size", "14042")
    assert done.returncode == 0 and done.stdout.strip() == "375"
    done = madeval_in_process("sample-size", "1000", "--confidence", "0.9", "--margin", "0.1")
    assert done.stdout.strip() == "64"
    for bad in (["0"], ["100", "--confidence", "1.2"], ["100", "--margin", "0"]):
        done = madeval_in_process("sample-size", *bad)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr


def test_parse_sample_values():
    assert parse_sample("all").method == "all" and parse_sample("FPC").method == "fpc"
    assert parse_sample(40).size(1000) == 40 and parse_sample("40").size(10) == 10
    assert parse_sample("fpc", 0.95, 0.05).size(250) == 152
    for bad in ("some", "0", "-3", "1.5"):
        with pytest.raises(UsageError):
            parse_sample(bad)


def items(n):
    return [Item(f"i{k}", "q", "A") for k in range(n)]


def test_draw_is_seeded_nested_and_keeps_dataset_order():
    population = items(500)
    first = draw(population, 50, seed=7, task="t")
    assert first == draw(population, 50, seed=7, task="t")
    assert [population.index(i) for i in first] == sorted(population.index(i) for i in first)
    assert set(first) <= set(draw(population, 120, seed=7, task="t"))  # a larger sample contains it
    assert first != draw(population, 50, seed=8, task="t") and first != draw(population, 50, seed=7, task="u")
    assert draw(population, 600, seed=7, task="t") == population
    # the choice does not depend on the order of the dataset
    assert {i.id for i in draw(population[::-1], 50, seed=7, task="t")} == {i.id for i in first}


def test_bad_sample_options_exit_2_without_output(tmp_path):
    for args in (["--sample", "many"], ["--sample", "fpc", "--confidence", "95"],
                 ["--sample", "fpc", "--margin", "-1"]):
        done = madeval_in_process("--tasks", "arith_mc", *args, "--base-url", "http://127.0.0.1:9", "-o", "out",
                                  cwd=tmp_path)
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert not (tmp_path / "out").exists()


def test_sampled_items_are_shared_by_configurations_and_recorded(sim, tmp_path):
    settings = settings_for(sim.base_url, tmp_path, tasks=["arith_mc", "arith_yesno"], sample="fpc",
                            margin=0.2, repeats=2, cache="off", seed=11)
    settings.configurations = [DebateConfig(decider="majority_consensus", max_turns=2),
                               DebateConfig(decider="unanimity_consensus", max_turns=2)]
    result, _ = run_quietly(settings)
    run = json.loads((result.folder / "run.json").read_text())
    mc = run["tasks"]["arith_mc"]
    # n0 = ceil(1.959964^2 * 0.25 / 0.04) = 25; 25 / (1 + 24/1000) = 24.41 -> 25
    assert mc["sampling"] == {"method": "fpc", "confidence": 0.95, "margin": 0.2, "n0": 25, "seed": 11,
                              "limit": None, "population": 1000, "size": 25, "source": "generator"}
    assert run["tasks"]["arith_yesno"]["sampling"]["population"] == 4000
    assert len(mc["items"]) == 25 and mc["items"] != [f"arith-mc-{k:05d}" for k in range(25)]
    records = read_records(result.folder)
    by_config = {}
    for record in records:
        unit = record["unit"]
        by_config.setdefault(unit["config"], set()).add((unit["task"], unit["item"], unit["repeat"]))
    assert len(by_config) == 2
    first, second = by_config.values()
    assert first == second  # paired: the same items and repeats for every configuration
    assert {item for task, item, _ in first if task == "arith_mc"} == set(mc["items"])
    # the same seed draws the same items in another run
    again = settings_for(sim.base_url, tmp_path, tasks=["arith_mc"], sample="fpc", margin=0.2, cache="off",
                         seed=11, max_turns=1, output_path=str(tmp_path / "again"))
    result2, _ = run_quietly(again)
    assert json.loads((result2.folder / "run.json").read_text())["tasks"]["arith_mc"]["items"] == mc["items"]
