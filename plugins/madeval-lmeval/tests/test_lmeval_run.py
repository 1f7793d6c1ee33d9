"""lm_eval:gsm8k end to end on the simulator: a single-agent baseline and a three-agent debate."""

from __future__ import annotations

import io
import json

import pytest

from madeval.errors import UsageError
from madeval.evaluation import run
from madeval.settings.config import RunSettings, debate_config
from madeval.simulator import simulate


def test_lmeval_gsm8k_runs_as_baseline_and_debate_with_a_row_per_filter(lm_tasks, tmp_path):
    task = lm_tasks("lm_eval:gsm8k")
    with simulate(tasks=[task], accuracy=0.6, conformity=0.0) as sim:
        settings = RunSettings(
            tasks=["lm_eval:gsm8k"], limit=20, base_url=sim.base_url, output_path=str(tmp_path / "run"),
            cache="off", transport="direct",
            configurations=[debate_config({"preset": "baseline_cot"}), debate_config({"agents": 3, "max_turns": 2})],
        )
        result = run(settings, show_progress=False, out=io.StringIO())
        unknown = sim.agents.stats.unknown_questions
    assert result.outcome.finished == 40 and result.outcome.failed == 0
    assert unknown == 0  # the simulator found every lm-eval prompt's question
    records = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert len(records) == 40
    for record in records:
        assert set(record["metrics"]) == {"exact_match,strict-match", "exact_match,flexible-extract"}
        item = next(i for i in task.items if i.id == record["unit"]["item"])
        assert record["metrics"] == task.score(record["prediction"], item)  # lm-eval's score of the final text
    metrics = {row["metric"] for row in result.rows}
    assert {"exact_match,strict-match", "exact_match,flexible-extract"} <= metrics
    labels = {row["label"] for row in result.rows}
    assert len(labels) == 2
    flexible = [r for r in result.rows if r["metric"] == "exact_match,flexible-extract"]
    assert all(0 < r["score"] <= 1 for r in flexible)  # accuracy 0.6 agents state numbers lm-eval finds


def test_lmeval_unknown_task_is_one_line_with_the_closest_name(lm_tasks, tmp_path):
    lm_tasks("lm_eval:gsm8k")  # lm-eval's index built once for the session
    with pytest.raises(UsageError, match=r"unknown task 'lm_eval:gsm8kk'.*did you mean gsm8k"):
        run(RunSettings(tasks=["lm_eval:gsm8kk"], base_url="http://127.0.0.1:9", output_path=str(tmp_path / "x")),
            show_progress=False, out=io.StringIO())
    assert not (tmp_path / "x").exists()


def test_lmeval_multiple_choice_is_lettered_and_noted_in_the_leaderboard(lm_tasks, tmp_path):
    task = lm_tasks("lm_eval:mmlu_abstract_algebra")
    items = task.items
    assert len(items) == 100  # the MMLU mirror's abstract_algebra rows (cais/mmlu config = subject)
    docs = task.lm_task.eval_docs
    first = items[0]
    assert first.target == "ABCD"[docs[0]["answer"]]
    # lm-eval's prompt: the description, then doc_to_text, which already lists A.-D. (no second list)
    assert first.input == ("The following are multiple choice questions (with answers) about abstract algebra.\n\n"
                           + task.lm_task.doc_to_text(docs[0]))
    assert task.score(task.extract(f"FINAL SOLUTION: {first.target}", first), first) == {"accuracy": 1.0}
    assert task.score(task.extract(task.wrong_reply(first), first), first) == {"accuracy": 0.0}
    with simulate(tasks=[task], accuracy=0.6, conformity=0.0) as sim:
        result = run(RunSettings(tasks=["lm_eval:mmlu_abstract_algebra"], limit=10, base_url=sim.base_url,
                                 configurations=[debate_config({})],
                                 output_path=str(tmp_path / "mc"), cache="off", transport="direct"),
                     show_progress=False, out=io.StringIO())
    assert result.outcome.finished == 10
    assert "lm_eval:mmlu_abstract_algebra: lm-eval multiple_choice task run as generation" in result.board["statement"]
    assert "not comparable with lm-eval's acc" in (tmp_path / "mc" / "leaderboard.md").read_text()


def test_lmeval_task_without_a_mirror_fails_in_one_line_naming_the_variable(lm_tasks, tmp_path, capsys):
    from madeval.cli.main import main

    lm_tasks("lm_eval:gsm8k")
    with pytest.raises(SystemExit) as exited:
        main(["--tasks", "lm_eval:arc_easy", "--base-url", "http://127.0.0.1:9", "--output-path", str(tmp_path / "x")])
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "MADEVAL_DATA_DIR" in err[0] and "allenai/ai2_arc" in err[0]
    assert not (tmp_path / "x").exists()


def test_lmeval_group_runs_with_lm_evals_aggregation(lm_tasks, tmp_path):
    from madeval.core.plugins import registries
    from madeval.task.files import AggregateMetric, task_index

    index = task_index(registries(), [])
    members = index.expand("lm_eval:mmlu_pro")
    assert len(members) == 14 and members[0] == "lm_eval:mmlu_pro_biology"  # _mmlu_pro.yaml's order
    spec = index.group_spec("lm_eval:mmlu_pro")
    # lm-eval: metric exact_match, filter_list custom-extract, weight_by_size true (micro)
    assert spec.aggregate_metric_list == (AggregateMetric("exact_match,custom-extract", "mean", True),)
    assert index.expand("lm_eval:ai2_arc") == ["lm_eval:arc_challenge", "lm_eval:arc_easy"]  # a tag
    tasks = [lm_tasks(name) for name in members]
    with simulate(tasks=tasks, accuracy=0.6, conformity=0.0) as sim:
        result = run(RunSettings(tasks=["lm_eval:mmlu_pro"], limit=3, base_url=sim.base_url,
                                 configurations=[debate_config({"preset": "baseline_cot"})],
                                 output_path=str(tmp_path / "g"), cache="off", transport="direct"),
                     show_progress=False, out=io.StringIO())
    assert result.outcome.finished == 42 and result.outcome.failed == 0
    group_rows = [r for r in result.rows if r["task"] == "lm_eval:mmlu_pro"]
    assert [r["metric"] for r in group_rows] == ["exact_match,custom-extract"]
    assert group_rows[0]["aggregation"] == "micro" and group_rows[0]["aggregation_declared"]
    records = [json.loads(line) for line in (tmp_path / "g" / "records.jsonl").read_text().splitlines()]
    pooled = sum(r["metrics"]["exact_match,custom-extract"] for r in records) / len(records)
    assert group_rows[0]["score"] == pytest.approx(pooled)  # micro: every item counts once


def test_lmeval_num_fewshot_uses_lm_evals_sampler_seeded_by_the_run_seed(tmp_path):
    from madeval.core.plugins import registries
    from madeval.task.definition import task_loader
    from madeval.task.files import task_index

    built = registries()
    settings = RunSettings(tasks=["lm_eval:bbh_fewshot_geometric_shapes"], num_fewshot=2, seed=77)
    load = task_loader(task_index(built, []), built.extractors, built.metrics, settings)
    task = load("lm_eval:bbh_fewshot_geometric_shapes")
    items = task.items
    assert "2-shot (lm-eval sampler seed 77)" in task.source
    lm = task.lm_task  # lm-eval itself: seed the sampler, then build the prompts in doc order
    lm.set_fewshot_seed(seed=77)
    expected = [lm.fewshot_context(doc=doc, num_fewshot=2) for doc in lm.eval_docs]
    assert [item.input for item in items] == expected
    zero = [lm.fewshot_context(doc=doc, num_fewshot=0) for doc in list(lm.eval_docs)[:3]]
    assert all(len(item.input) > len(z) for item, z in zip(items, zero))  # the examples are there
    gsm8k = task_loader(task_index(built, []), built.extractors, built.metrics,
                        RunSettings(tasks=["lm_eval:gsm8k"], num_fewshot=5))("lm_eval:gsm8k")
    with pytest.raises(UsageError, match="few-shot split has no local mirror"):
        gsm8k.items  # noqa: B018
