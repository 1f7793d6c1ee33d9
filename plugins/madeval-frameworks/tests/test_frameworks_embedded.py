"""Every preset of the three plugin packages, end to end on the embedded model (a real, tiny LLM).

The simulator speaks every protocol perfectly; SmolLM2-135M does not, so this is where a preset
that raises on a reply it cannot parse would show. Parse failures must end up in the records.

The presets run as ``leaderboards/presets.yaml`` lists them, each with two turns (its first answers,
one round that shows them to the others, and its decision step): every kind of call each preset
makes still meets the model's free text (the simulator's sweep, test_frameworks_presets.py, runs
their full settings). The prompts are the test's time: with the presets' own turns (EoT's six,
AgentVerse's three) the 12 debates made 126 calls in about 290 s of CPU, with two turns 96 calls
(25,400 prompt tokens) in about 185 s as the model was read then (Q4_1, about 100 prompt tokens a
second on one CPU) and 128 s as it is served now (Q8_0: madeval.llm.embedded).
The presets are split in two runs of about equal length, which pytest-xdist's two workers take at
once.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from madeval.records.folder import read_records

SWEEP = Path(__file__).resolve().parents[3] / "leaderboards" / "presets.yaml"
# Two halves of about equal time on the model (AgentVerse's four agents make the most calls; EoT and
# its similarity variant share their identical calls, so they stay in one run).
HALVES = {
    "agentverse+": ["agentverse", "multi_persona", "som", "reconcile"],
    "eot+": ["eot", "eot_similarity", "madc", "freemad_n", "freemad_c", "chateval", "chateval_simultaneous",
             "chateval_summarizer"],
}


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


def test_the_halves_are_every_preset_of_the_sweep_once():
    listed = [run["preset"] for run in yaml.safe_load(SWEEP.read_text())["runs"]]
    halves = [preset for presets in HALVES.values() for preset in presets]
    assert sorted(halves) == sorted(listed) and len(set(halves)) == len(listed) == 12


@pytest.mark.slow  # about 2 minutes each: started first, beside the short tests (tests/conftest.py)
@pytest.mark.parametrize("half", sorted(HALVES))
def test_frameworks_every_preset_runs_on_the_embedded_model(tmp_path, half):
    sweep = yaml.safe_load(SWEEP.read_text())
    sweep["runs"] = [{**run, "max_turns": 2} for run in sweep["runs"] if run["preset"] in HALVES[half]]
    sweep["leaderboard"]["reference"] = HALVES[half][0]  # the board compares with a preset of this run
    config = tmp_path / "presets.yaml"
    config.write_text(yaml.safe_dump(sweep))
    # The three packages through their entry points, as a user who installed them has them.
    env = {**os.environ, "MADEVAL_LOAD_PLUGINS": "madeval-madc,madeval-freemad,madeval-frameworks"}
    # Free text, as the presets publish it (the embedded model's own default asks for JSON): a tiny
    # model's free text is where a preset's parsing meets replies it cannot read.
    done = subprocess.run(
        [sys.executable, "-m", "madeval", "--config", str(config), "--limit", "1", "--max-tokens", "24",
         "--no-structured-answers", "--cache", "off", "--no-progress", "--output-path", str(tmp_path / "run")],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800, preexec_fn=one_cpu_under_xdist(),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    presets = len(HALVES[half])
    assert f"{presets} units run, 0 already done, 0 failed" in done.stdout
    records = list(read_records(tmp_path / "run"))
    assert sorted(r["config_label"] for r in records) == sorted(HALVES[half])
    for record in records:
        calls = record["transcript"]["calls"]
        assert calls and {c["endpoint"] for c in calls} == {"embedded"}
        assert all(c["completion_tokens"] > 0 for c in calls)
        assert max(c["turn"] for c in calls) == 2  # a second turn: a round that shows the first answers to the others
        # A reply the preset could not read is a recorded parse failure, never an exception.
        assert record["parse_failure"] == (record["prediction"] is None)
        assert record["metrics"]["accuracy"] in (0.0, 1.0)
