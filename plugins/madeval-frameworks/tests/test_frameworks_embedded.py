"""Every preset of the three plugin packages, end to end on the embedded model (a real, tiny LLM).

The simulator speaks every protocol perfectly; SmolLM2-135M does not, so this is where a preset
that raises on a reply it cannot parse would show. Parse failures must end up in the records.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from madeval.records.folder import read_records

SWEEP = Path(__file__).resolve().parents[3] / "leaderboards" / "presets.yaml"


def one_cpu_under_xdist():
    """A ``preexec_fn`` that keeps the run (and the llama.cpp server it starts) on one CPU when the
    suite runs on several workers, a different CPU per worker: llama.cpp then uses one thread
    (madeval's free_threads counts the CPUs it may use) instead of fighting the other workers' tests
    for the cores with threads that wait for each other after every layer. ``None`` otherwise."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw") or not hasattr(os, "sched_setaffinity"):
        return None
    cpus = sorted(os.sched_getaffinity(0))
    cpu = cpus[int(worker[2:]) % len(cpus)]
    return lambda: os.sched_setaffinity(0, {cpu})


@pytest.mark.slow  # about 3 minutes: started first, beside the short tests (tests/conftest.py)
def test_frameworks_every_preset_runs_on_the_embedded_model(tmp_path):
    # The three packages through their entry points, as a user who installed them has them.
    env = {**os.environ, "MADEVAL_LOAD_PLUGINS": "madeval-madc,madeval-freemad,madeval-frameworks"}
    # Free text, as the presets publish it (the embedded model's own default asks for JSON): a tiny
    # model's free text is where a preset's parsing meets replies it cannot read.
    done = subprocess.run(
        [sys.executable, "-m", "madeval", "--config", str(SWEEP), "--limit", "1", "--max-tokens", "24",
         "--no-structured-answers", "--cache", "off", "--no-progress", "--output-path", str(tmp_path / "run")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800, preexec_fn=one_cpu_under_xdist(),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "12 units run, 0 already done, 0 failed" in done.stdout
    records = list(read_records(tmp_path / "run"))
    labels = {r["config_label"] for r in records}
    assert len(records) == 12 and len(labels) == 12
    for record in records:
        calls = record["transcript"]["calls"]
        assert calls and {c["endpoint"] for c in calls} == {"embedded"}
        assert all(c["completion_tokens"] > 0 for c in calls)
        # A reply the preset could not read is a recorded parse failure, never an exception.
        assert record["parse_failure"] == (record["prediction"] is None)
        assert record["metrics"]["accuracy"] in (0.0, 1.0)
