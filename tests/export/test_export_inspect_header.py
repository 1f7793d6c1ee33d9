"""What ``inspect view`` shows of an exported run beside its samples: the debate's model (not
``madeval/debate``), a duration (the log's start and end, not NaN), and for debates imported from
MALLM no sample time taken from ``clockSeconds`` (the elapsed time of a debate sharing its server
with the others: 1 to 2.5 hours in the real corpus)."""

from __future__ import annotations

import datetime
import json
import os
from pathlib import Path

import pytest

from helpers import madeval_in_process, run_quietly, settings_for
from madeval.records.folder import read_records

try:
    from inspect_ai.log import read_eval_log
except ImportError:  # the optional extra madeval[inspect]; make install installs it
    if os.environ.get("CI"):
        raise
    pytest.skip("inspect-ai is not installed (pip install 'madeval[inspect]')", allow_module_level=True)

MIRROR = Path(os.environ.get("MADEVAL_DATA_DIR", "")) / "mmlu_pro" / "test.jsonl"


def export(folder: Path, output: Path):
    done = madeval_in_process("export", str(folder), "--format", "inspect", "--output", str(output))
    assert done.returncode == 0, done.stderr
    return read_eval_log(str(output))


def test_the_log_names_the_debate_s_model_and_its_duration(sim, tmp_path):
    folder = tmp_path / "run"
    run_quietly(settings_for(sim.base_url, tmp_path, limit=3, output_path=str(folder)))
    log = export(folder, tmp_path / "run.eval")
    assert log.eval.model == "simulator"  # the model the simulator served, as run.json lists it
    described = json.loads((folder / "run.json").read_text())
    started = datetime.datetime.fromisoformat(log.stats.started_at)
    completed = datetime.datetime.fromisoformat(log.stats.completed_at)
    assert log.stats.started_at == described["sessions"][0]["started"]
    last_write = datetime.datetime.fromtimestamp(int((folder / "records.jsonl").stat().st_mtime), datetime.timezone.utc)
    assert completed == max(started, last_write) and completed.tzinfo is not None
    walls = {(r["unit"]["item"], r["unit"]["repeat"] + 1): r["wall_s"] for r in read_records(folder)}
    assert {(s.metadata["item"], s.epoch): s.total_time for s in log.samples} == walls


def test_heterogeneous_agents_are_all_named(generated_tasks, tmp_path):
    from madeval.simulator import simulate

    folder = tmp_path / "run"
    with simulate(tasks=generated_tasks.values(), served=["alpha", "beta"]) as both:
        run_quietly(settings_for(both.base_url, tmp_path, limit=2, model="alpha",
                                 agent_models=["alpha", "beta", "alpha"], output_path=str(folder)))
    assert export(folder, tmp_path / "run.eval").eval.model == "alpha, beta"


@pytest.mark.skipif(not MIRROR.is_file(), reason="the MMLU-Pro mirror is not here")
def test_an_imported_debate_keeps_mallm_s_clock_out_of_its_sample_time(tmp_path):
    with open(MIRROR, encoding="utf-8") as handle:
        row = json.loads(handle.readline())
    letters = "ABCDEFGHIJ"
    question = row["question"] + "\n\n" + "\n".join(f"{letters[i]}) {o}" for i, o in enumerate(row["options"]))
    agents = ["a0", "a1"]
    record = {  # MALLM's layout (see tests/importers/test_import_mallm.py), clockSeconds as in the real corpus
        "dataset": "mmlu_pro", "exampleId": "e1", "datasetId": str(row["question_id"]),
        "instruction": "Answer the provided question by choosing one option.", "coordinatorId": "c",
        "personas": [{"agentId": a, "model": "llama-3.1-70b", "persona": f"Expert {i}", "personaDescription": "d"}
                     for i, a in enumerate(agents)],
        "persona_diversity": None, "paradigm": "memory", "input": [question], "context": None,
        "finalAnswer": "Final Solution: C", "votesEachTurn": {}, "challengedAnswers": {},
        "references": [row["answer"]], "metadata": None, "decisionSuccess": True, "agreements": [], "turns": 1,
        "clockSeconds": 8417.1, "agentMemory": None,
        "globalMemory": [{"message_id": n, "turn": 1, "agent_id": a, "persona": f"Expert {n}",
                          "contribution": "improve", "message": "[AGREE] Final Solution: C", "agreement": True,
                          "solution": "Final Solution: C", "memory_ids": [], "additional_args": {}}
                         for n, a in enumerate(agents)],
    }
    source = tmp_path / "mallm.json"
    source.write_text(json.dumps([record]))
    folder = tmp_path / "imported"
    done = madeval_in_process("import", "mallm", str(source), "--task", "mmlu_pro", "--output-path", str(folder))
    assert done.returncode == 0, done.stderr
    (stored,) = read_records(folder)
    assert stored["wall_s"] == 8417.1  # the import keeps what MALLM recorded
    log = export(folder, tmp_path / "imported.eval")
    (sample,) = log.samples
    assert sample.total_time is None and sample.metadata["imported_wall_s"] == 8417.1
    assert log.eval.model == "llama-3.1-70b"
    assert datetime.datetime.fromisoformat(log.stats.completed_at) >= datetime.datetime.fromisoformat(
        log.stats.started_at)
