"""A run killed with SIGKILL mid-way resumes to exactly the records of an uninterrupted run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter

from helpers import madeval_in_process
from madeval.leaderboard.table import TIMING_KEYS
from madeval.records.folder import read_records
from madeval.simulator import simulate

TIMING = set(TIMING_KEYS)  # elapsed and LLM time differ between runs


def command(base_url: str, folder, cache) -> list[str]:
    return [
        sys.executable, "-m", "madeval", "--tasks", "arith_mc", "--limit", "30", "--repeats", "2",
        "--decider", "unanimity", "--concurrency", "4", "--base-url", base_url,
        "--output-path", str(folder), "--cache", str(cache), "--no-progress",
    ]


def summary_without_timing(folder) -> list[dict]:
    rows = json.loads((folder / "leaderboard.json").read_text())["rows"]
    return [{k: v for k, v in row.items() if k not in TIMING} for row in rows]


def test_kill_resume_gives_one_record_per_unit_and_the_same_summary(generated_tasks, tmp_path):
    env = {**os.environ, "MADEVAL_LOAD_PLUGINS": ""}
    killed = tmp_path / "killed"
    with simulate(tasks=generated_tasks.values(), latency_s=0.02) as sim:
        process = subprocess.Popen(command(sim.base_url, killed, tmp_path / "c1.sqlite"), env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        records = killed / "records.jsonl"
        deadline = time.time() + 120
        while time.time() < deadline:
            if records.exists() and records.read_bytes().count(b"\n") >= 12:
                break
            time.sleep(0.01)
        process.send_signal(signal.SIGKILL)
        process.wait()
        done_before = records.read_bytes().count(b"\n")
        assert 12 <= done_before < 60, "the run must be killed mid-way"

        # The kill is the process boundary under test; the resume and the clean run are ordinary runs,
        # asked from this process, and no longer need replies slow enough to kill a run mid-way.
        sim.server.latency_s = 0.0
        resumed = madeval_in_process(*command(sim.base_url, killed, tmp_path / "c1.sqlite")[3:])
        assert resumed.returncode == 0, resumed.stderr
        assert f"{done_before} already done" in resumed.stdout

        clean = tmp_path / "clean"
        uninterrupted = madeval_in_process(*command(sim.base_url, clean, tmp_path / "c2.sqlite")[3:])
        assert uninterrupted.returncode == 0, uninterrupted.stderr

    keys = Counter(r["unit"]["key"] for r in read_records(killed))
    assert len(keys) == 60 and set(keys.values()) == {1}
    assert summary_without_timing(killed) == summary_without_timing(clean)
    by_key = {r["unit"]["key"]: r for r in read_records(clean)}
    for record in read_records(killed):
        twin = by_key[record["unit"]["key"]]
        assert record["prediction"] == twin["prediction"] and record["turns"] == twin["turns"]


def test_resume_cuts_a_partial_last_line(generated_tasks, sim, tmp_path):
    from helpers import run_quietly, settings_for

    settings = settings_for(sim.base_url, tmp_path, limit=4, cache="off")
    first, _ = run_quietly(settings)
    path = first.folder / "records.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:2]) + lines[2][: len(lines[2]) // 2])
    again, _ = run_quietly(settings)
    assert again.outcome.skipped == 2 and again.outcome.finished == 2
    assert len(list(read_records(first.folder))) == 4


def test_resume_refuses_a_different_run(sim, tmp_path):
    import pytest

    from helpers import run_quietly, settings_for
    from madeval.errors import UsageError

    run_quietly(settings_for(sim.base_url, tmp_path, limit=2, cache="off"))
    with pytest.raises(UsageError, match="holds a different run"):
        run_quietly(settings_for(sim.base_url, tmp_path, limit=2, cache="off", decider="unanimity"))


def test_resume_accepts_options_that_cannot_change_results(sim, tmp_path):
    """Limits, transport and routing are declared ``results=False``: a resume may change them."""
    from helpers import run_quietly, settings_for

    run_quietly(settings_for(sim.base_url, tmp_path, limit=2, cache="off"))
    again, _ = run_quietly(settings_for(sim.base_url, tmp_path, limit=2, cache="off", concurrency=3,
                                        transport="openai", routing_header="off", routing_grain="debate"))
    assert (again.outcome.finished, again.outcome.skipped) == (0, 2)
