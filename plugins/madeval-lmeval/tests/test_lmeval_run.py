"""lm_eval:gsm8k end to end on the simulator: a single-agent baseline and a three-agent debate."""

from __future__ import annotations

import io
import json

import pytest

from madeval.config import RunSettings, debate_config
from madeval.errors import UsageError
from madeval.run import run
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
