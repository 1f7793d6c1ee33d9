"""A benchmark task with debate metrics, run end to end against the simulator."""

from __future__ import annotations

import json
import os
from pathlib import Path

from helpers import run_quietly, settings_for
from madeval.core.plugins import registries
from madeval.records.folder import read_records
from madeval.settings.config import RunSettings
from madeval.simulator import simulate
from madeval.task.definition import load_tasks

DATA_DIR = os.environ.get("MADEVAL_DATA_DIR") or str(Path(__file__).resolve().parents[3] / "shared" / "data")


def test_task_bbh_run_records_madc_metrics(tmp_path, monkeypatch):
    monkeypatch.setenv("MADEVAL_DATA_DIR", DATA_DIR)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    name = "bbh_logical_deduction_three_objects"
    tasks = load_tasks(RunSettings(tasks=[name]), registries())
    with simulate(tasks=tasks.values(), accuracy=0.7) as sim:
        settings = settings_for(sim.base_url, tmp_path, tasks=[name], sample="6", cache="off", max_turns=2,
                                paradigm="collective_refinement", decider="counting")
        result, _ = run_quietly(settings)
    records = list(read_records(result.folder))
    assert len(records) == 6
    for record in records:
        metrics = record["metrics"]
        assert set(metrics) >= {"accuracy", "answer_entropy", "answer_entropy_sum", "gold_share"}
        assert 0.0 <= metrics["gold_share"] <= 1.0
        assert metrics["answer_entropy"] <= metrics["answer_entropy_sum"] <= record["turns"] * 1.585 + 1e-9  # log2 3
    sampling = json.loads((result.folder / "run.json").read_text())["tasks"][name]["sampling"]
    assert sampling["population"] == 250 and sampling["size"] == 6 and sampling["method"] == "count"
    assert sampling["source"].startswith("mirror ")
