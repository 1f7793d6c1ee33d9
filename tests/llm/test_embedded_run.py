"""The default endpoint: madeval starts the embedded model, debates on it, and always stops it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from madeval.records.folder import read_records


def llama_servers(parent: int) -> list[int]:
    """Pids of llama.cpp servers whose parent is ``parent``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        if ppid == parent and b"llama_cpp.server" in cmdline:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"


def test_default_run_uses_the_embedded_model_and_stops_it(tmp_path):
    process = subprocess.Popen(
        [sys.executable, "-m", "madeval", "--tasks", "arith_mc", "--limit", "1", "--max-turns", "1",
         "--max-tokens", "24", "--output-path", "out", "--cache", "off", "--no-progress"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    servers = []
    while process.poll() is None and not servers:
        servers = llama_servers(process.pid)
        time.sleep(0.1)
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err
    assert servers, "an embedded server was started"
    assert not any(alive(pid) for pid in servers)
    records = list(read_records(tmp_path / "out"))
    assert len(records) == 1
    calls = records[0]["transcript"]["calls"]
    assert calls and all(c["model"] == "smollm2-135m-instruct" and c["endpoint"] == "embedded" for c in calls)
    assert all(c["completion_tokens"] > 0 for c in calls)
    assert "| arith_mc |" in out


def test_ctrl_c_stops_the_embedded_model(tmp_path):
    process = subprocess.Popen(
        [sys.executable, "-m", "madeval", "--tasks", "arith_mc", "--limit", "50", "--output-path", "out",
         "--cache", "off", "--no-progress"],
        cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        deadline = time.time() + 120
        servers = []
        while time.time() < deadline and not servers:
            servers = llama_servers(process.pid)
            time.sleep(0.1)
        assert servers
        time.sleep(3)
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    finally:  # a run that did not stop must not debate on for its 50 items after the test failed
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130 and err.strip().endswith("madeval: interrupted")
    time.sleep(0.5)
    assert not any(alive(pid) for pid in servers)


def test_one_configuration_per_paradigm_on_the_embedded_model(tmp_path):
    from helpers import run_quietly
    from madeval.settings.config import DebateConfig, RunSettings

    configs = [
        DebateConfig(paradigm="memory", decider="majority_consensus", max_turns=1),
        DebateConfig(paradigm="relay", decider="unanimity_consensus", max_turns=1),
        DebateConfig(paradigm="report", decider="simple_voting", decider_args={"vote_after_turns": 1}, max_turns=1),
        DebateConfig(paradigm="debate", decider="judge", decider_args={"after_turns": 1},
                     paradigm_args={"debate_rounds": 1}, max_turns=1),
        DebateConfig(paradigm="collective_refinement", decider="counting", max_turns=1),
    ]
    settings = RunSettings(tasks=["arith_mc"], configurations=configs, limit=1, max_tokens=24,
                           output_path=str(tmp_path / "run"), cache="off")
    result, printed = run_quietly(settings)
    assert result.outcome.failed == 0 and len(result.rows) == 5
    records = list(read_records(result.folder))
    assert {r["transcript"]["agents"][0]["endpoint"] for r in records} == {"embedded"}
    for record in records:
        # A tiny model rarely follows the answer format: that is a parse failure in the record.
        assert record["parse_failure"] == (record["prediction"] is None)
        assert record["metrics"]["accuracy"] in (0.0, 1.0)
    purposes = {c["purpose"] for r in records for c in r["transcript"]["calls"]}
    assert {"draft", "improve", "vote", "judge"} <= purposes
