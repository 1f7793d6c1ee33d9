"""The ``metrics`` configuration option: extra metrics scored on every debate and shown as rows."""

from __future__ import annotations

import subprocess
from collections import Counter

import pytest

from helpers import madeval_in_process, run_quietly
from madeval.core.transcript import Transcript
from madeval.errors import UsageError
from madeval.records.folder import read_records
from madeval.settings.config import DebateConfig, RunSettings, build_settings

# Entropy in bits of the last turn's three answers, by hand: all equal 0; two and one
# -(2/3 log2 2/3 + 1/3 log2 1/3) = 0.918296; all different log2 3 = 1.584963.
ENTROPY = {(3,): 0.0, (1, 2): 0.9182958340544896, (1, 1, 1): 1.584962500721156}


def madeval(*args: str, cwd) -> subprocess.CompletedProcess:
    return madeval_in_process(*args, cwd=cwd)


def test_extra_metrics_leave_the_ids_of_other_configurations_alone():
    plain = DebateConfig()
    assert "metrics" not in plain.identity()
    extra = DebateConfig(metrics=["answer_entropy"])
    assert extra.identity()["metrics"] == ["answer_entropy"]
    assert extra.config_id() != plain.config_id()


def test_metrics_option_is_read_from_files_and_checked_by_name():
    settings = build_settings({"tasks": "arith_mc", "metrics": "answer_entropy, gold_likelihood"})
    assert settings.configurations[0].metrics == ["answer_entropy", "gold_likelihood"]
    with pytest.raises(UsageError, match=r"^metrics must name registered metrics: unknown metric 'answer_entropi'; "
                                         r"did you mean answer_entropy"):
        build_settings({"tasks": "arith_mc", "metrics": ["answer_entropi"]})
    with pytest.raises(UsageError, match="metrics must be a name, names separated by commas or a list of names"):
        build_settings({"tasks": "arith_mc", "metrics": [3]})


@pytest.mark.parametrize("text", [
    "tasks: arith_mc\nmetrics: [answer_entropi]\n",
    "tasks: arith_mc\nruns:\n  - {name: a, metrics: [answer_entropi]}\n",
])
def test_unknown_extra_metric_is_one_line_and_status_2(tmp_path, text):
    (tmp_path / "run.yaml").write_text(text)
    result = madeval("--config", "run.yaml", "--base-url", "http://127.0.0.1:9/v1", "--output-path", "out",
                     "--cache", "off", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("madeval: error: config run.yaml: ")
    assert ("metrics must name registered metrics: unknown metric 'answer_entropi'; "
            "did you mean answer_entropy" in lines[0])
    assert not (tmp_path / "out").exists() and result.stdout == ""


def test_extra_debate_metric_is_scored_with_the_transcript_and_shown_as_rows(sim, tmp_path):
    """One configuration scores answer_entropy besides the task's accuracy, the other does not: the
    first gets the entropy of its last turn's answers in every record and a leaderboard row, the
    second neither."""
    refine = {"paradigm": "collective_refinement", "decider": "simple_voting", "decider_args": {"vote_after_turns": 2},
              "max_turns": 2}
    settings = RunSettings(tasks=["arith_mc"], limit=6, base_url=sim.base_url, cache="off",
                           output_path=str(tmp_path / "run"),
                           configurations=[DebateConfig(**refine, metrics=["answer_entropy", "accuracy"],
                                                        name="scored"),
                                           DebateConfig(**refine, name="plain")])
    result, _ = run_quietly(settings)
    records = [r for r in read_records(result.folder) if r["config_label"] == "scored"]
    assert len(records) == 6
    for record in records:
        last = Transcript.from_dict(record["transcript"]).trajectory()[-1]
        metrics = record["metrics"]
        assert metrics["answer_entropy"] == pytest.approx(ENTROPY[tuple(sorted(Counter(last).values()))])
        assert set(metrics) == {"accuracy", "answer_entropy", "answer_entropy_sum"}  # accuracy once: the task's
    assert all(set(r["metrics"]) == {"accuracy"} for r in read_records(result.folder) if r["config_label"] == "plain")
    rows = {(r["label"], r["metric"]): r for r in result.rows}
    assert rows[("scored", "answer_entropy")]["score"] == pytest.approx(
        sum(r["metrics"]["answer_entropy"] for r in records) / 6)
    assert ("scored", "answer_entropy_sum") in rows and ("plain", "answer_entropy") not in rows
    assert {("scored", "accuracy"), ("plain", "accuracy")} <= set(rows)
    assert "| scored | arith_mc | answer_entropy |" in (result.folder / "leaderboard.md").read_text()
