"""The run flags lm-eval users reach for: --limit as a fraction, --gen-kwargs, --log-samples."""

from __future__ import annotations

import json
import math

import pytest

from madeval import UsageError, evaluate
from madeval.run.plan import choose_items
from madeval.settings.config import RULES, RunSettings, check_settings


def test_lmeval_limit_as_a_fraction_rounds_up_like_lm_eval(lm_tasks):
    task = lm_tasks("lm_eval:gsm8k")
    assert RULES["limit"].read("0.1") == 0.1 and RULES["limit"].read("20") == 20
    chosen = choose_items(task, RunSettings(tasks=["lm_eval:gsm8k"], limit=0.1))
    assert len(chosen) == math.ceil(1319 * 0.1) == 132  # lm-eval: int(math.ceil(len(docs) * limit))
    assert chosen == task.items[:132]
    assert len(choose_items(task, RunSettings(tasks=["x"], limit=20))) == 20  # a count, as before
    for bad in ("1.5", "0", "-0.2", "many"):
        with pytest.raises(UsageError, match="limit"):
            check_settings(RunSettings(tasks=["x"], limit=bad))


def test_lmeval_gen_kwargs_reach_every_call_and_win_over_the_options():
    settings = RunSettings(tasks=["x"], gen_kwargs="temperature=0,until=Question:,max_gen_toks=256", max_tokens=99)
    check_settings(settings)
    assert settings.generation() == {"temperature": 0.0, "top_p": 1.0, "presence_penalty": 0.0,
                                     "frequency_penalty": 0.0, "max_tokens": 256, "stop": "Question:"}
    greedy = RunSettings(tasks=["x"], gen_kwargs="do_sample=false")
    check_settings(greedy)
    assert greedy.generation()["temperature"] == 0.0
    assert RunSettings(tasks=["x"]).generation()["temperature"] == 1.0  # default unchanged
    with pytest.raises(UsageError, match="gen_kwargs.*no key 'seed'"):
        check_settings(RunSettings(tasks=["x"], gen_kwargs="seed=3"))


def test_lmeval_log_samples_is_accepted_and_records_are_written(tmp_path):
    from madeval.core.plugins import registries
    from madeval.simulator import simulate
    from madeval.task.definition import load_tasks

    tasks = load_tasks(RunSettings(tasks=["arith_mc"]), registries())
    with simulate(tasks=tasks.values(), accuracy=0.6, conformity=0.0) as sim:
        result = evaluate("arith_mc", base_url=sim.base_url, output_path=tmp_path / "run", limit=0.05,
                          log_samples=True, gen_kwargs={"temperature": 0}, cache="off")
    assert result.outcome.finished == math.ceil(len(tasks["arith_mc"].items) * 0.05)
    run_json = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run_json["settings"]["gen_kwargs"] == {"temperature": 0.0}
    assert len((tmp_path / "run" / "records.jsonl").read_text().splitlines()) == result.outcome.finished


def test_lmeval_wandb_args_log_the_leaderboard_offline(tmp_path, monkeypatch):
    from madeval.core.plugins import registries
    from madeval.simulator import simulate
    from madeval.task.definition import load_tasks

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    with pytest.raises(UsageError, match="wandb_args has no key 'projct'"):
        check_settings(RunSettings(tasks=["x"], wandb_args="projct=madeval"))
    tasks = load_tasks(RunSettings(tasks=["arith_mc"]), registries())
    with simulate(tasks=tasks.values(), accuracy=0.6, conformity=0.0) as sim:
        result = evaluate("arith_mc", base_url=sim.base_url, output_path=tmp_path / "run", limit=4, cache="off",
                          wandb_args=f"project=madeval-test,dir={tmp_path}")
    offline = list((tmp_path / "wandb").glob("offline-run-*"))
    assert len(offline) == 1
    tables = list(offline[0].glob("files/media/table/leaderboard_*.table.json"))
    assert len(tables) == 1
    logged = json.loads(tables[0].read_text())
    assert len(logged["data"]) == len(result.rows) and "metric" in logged["columns"]
    metric = logged["columns"].index("metric")
    assert [row[metric] for row in logged["data"]] == [row["metric"] for row in result.rows]
    assert list(offline[0].glob("files/media/images/charts/*.png"))  # the leaderboard's charts
