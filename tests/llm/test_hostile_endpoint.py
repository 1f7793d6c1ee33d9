"""A real madeval run against a hostile endpoint, once per sabotage mode.

Each test serves the simulator's agents from :class:`~madeval.simulator.hostile.HostileServer`
with a share of the chat requests sabotaged by one mode, runs the madeval CLI in a process of its
own against it (forked from one that imported madeval: helpers.MadevalForks), then runs it again
into the same folder. For every mode:

* the run finishes (a hang is killed after RUN_DEADLINE_S) with exit status 1 when units failed
  and 0 otherwise;
* every planned unit is in records.jsonl exactly once or in errors.jsonl, never both;
* every recorded reply is one the server sent in a well-formed response, to a request of the same
  agent in the same unit (so a smuggled or mis-framed reply is never recorded, nor cached against
  another prompt);
* the madeval process's peak RSS stays under 500 MB (it is killed when it passes 500 MB);
* the re-run asks the server only for the failed units' calls, and records or fails each of them
  (a sabotaged request is sabotaged again, so most fail again).

The runs use the default transport; ``MADEVAL_TEST_TRANSPORT=openai pytest ...`` runs them on
another one. ``pytest -s`` prints one line of figures per mode.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

import madeval
from helpers import MadevalForks
from madeval.debate.session import derive_seed
from madeval.simulator.agents import SyntheticAgents
from madeval.simulator.hostile import FILLER, MODES, HostileServer
from madeval.simulator.http import run_in_thread
from madeval.simulator.truth import GoldIndex

LIMIT = 8  # items of arith_mc: one unit each
RUN_SEED = 1234
# The share of chat requests sabotaged, and the seed choosing them: with these, 3 of the 49
# requests of a clean run are hit, in 3 of the 8 units, so a run has recorded and failed units.
RATE = 0.1
SERVER_SEED = 3
#: 10 MB replies make every later prompt of their debate 10 MB longer: one is enough (this rate
#: hits the first of the three requests above only).
RATE_OF = {"10mb-reply": 0.05}
TIMEOUT_S = 0.5  # madeval --timeout: every request's deadline
RUN_DEADLINE_S = 25.0  # a run still going after this is a hang
RSS_LIMIT_MB = 500
#: Modes whose sabotaged request gets no usable reply in time: its unit must fail, not be recorded.
FAILING = set(MODES) - {"smuggled", "10mb-reply", "lying-usage"}
TAG = re.compile(r"\[hostile reply ([\w-]+)\]\s*$")
#: The note madeval puts after the kept prefix of a reply longer than max_tokens allows.
CUT = re.compile(r"\n\[madeval: reply of (\d+) characters cut to its first (\d+): [^\]]*\]$")


@dataclass
class Finished:
    """How a madeval process ended."""

    exit_code: int
    peak_rss_mb: float
    seconds: float
    stdout: str
    stderr: str
    killed_for: str | None  # "time" or "memory" when the test had to kill it


@pytest.fixture(scope="module")
def truth(generated_tasks):
    return GoldIndex.from_tasks([generated_tasks["arith_mc"]])


@pytest.fixture(scope="module")
def planned(generated_tasks):
    """(item, repeat) of every unit the run plans: the first LIMIT items of arith_mc, one repeat."""
    return {(item.id, 0) for item in generated_tasks["arith_mc"].items[:LIMIT]}


@pytest.fixture(scope="module")
def forks():
    """Each run is a process of its own, forked from one that imported madeval (see MadevalForks)."""
    server = MadevalForks()
    yield server
    server.close()


def run_madeval(forks: MadevalForks, base_url: str, folder: Path, timeout_s: float = TIMEOUT_S) -> Finished:
    """Run the madeval CLI in a process of its own against ``base_url`` into ``folder`` (each
    request's deadline ``timeout_s``); watch its time and memory."""
    config = folder.parent / "hostile-run.yaml"
    config.write_text("retry_delay: 0.05\n")
    command = ["--base-url", base_url, "--tasks", "arith_mc", "--limit", str(LIMIT), "--seed", str(RUN_SEED),
               "--timeout", str(timeout_s), "--max-attempts", "2", "--output-path", str(folder),
               "--config", str(config), "--no-progress"]
    if os.environ.get("MADEVAL_TEST_TRANSPORT"):
        command += ["--transport", os.environ["MADEVAL_TEST_TRANSPORT"]]
    out, err = folder.parent / f"{folder.name}.out", folder.parent / f"{folder.name}.err"
    started = time.monotonic()
    killed_for = None
    pid = forks.start(command, out, err)
    # The peak is the child's own high-water mark (VmHWM), read while it runs. A peak within the
    # last poll interval before exit can be missed; the 500 MB kill below still catches runaways.
    peak_mb = 0.0
    while True:
        exit_code = forks.poll(pid)
        if exit_code is not None:
            break
        peak_mb = max(peak_mb, _memory_mb(pid, "VmHWM"))
        if killed_for is None and _memory_mb(pid, "VmRSS") > RSS_LIMIT_MB:
            killed_for = "memory"
        elif killed_for is None and time.monotonic() - started > RUN_DEADLINE_S:
            killed_for = "time"
        if killed_for is not None:
            os.kill(pid, signal.SIGKILL)
            exit_code = forks.poll(pid, block=True)
            break
        time.sleep(0.02)
    return Finished(exit_code, peak_mb, time.monotonic() - started, out.read_text(), err.read_text(), killed_for)


def _memory_mb(pid: int, field: str) -> float:
    """A memory figure of process ``pid`` from /proc (``VmRSS``: now, ``VmHWM``: its peak) in MB
    (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def check_finished(run: Finished, what: str) -> None:
    """The run ended by itself, within the memory bound, with a summary line."""
    assert run.killed_for != "time", f"{what}: still running after {RUN_DEADLINE_S:.0f} s (a hang)"
    assert run.killed_for != "memory", f"{what}: killed at {RSS_LIMIT_MB} MB of RSS"
    assert run.peak_rss_mb < RSS_LIMIT_MB, f"{what}: peak RSS {run.peak_rss_mb:.0f} MB"
    assert run.exit_code in (0, 1), f"{what}: exit {run.exit_code}\n{run.stderr[-2000:]}"
    assert re.search(r"units run, \d+ already done, \d+ failed", run.stdout), run.stderr[-2000:]


def unit_outcomes(folder: Path) -> tuple[Counter, list]:
    """(times each (item, repeat) is recorded, (item, repeat) of each line of errors.jsonl)."""
    recorded = Counter()
    for line in (folder / "records.jsonl").read_text(encoding="utf-8").splitlines():
        unit = json.loads(line)["unit"]
        recorded[(unit["item"], unit["repeat"])] += 1
    errors_file = folder / "errors.jsonl"
    failed = []
    if errors_file.exists():
        for line in errors_file.read_text(encoding="utf-8").splitlines():
            unit = json.loads(line)["unit"]
            failed.append((unit["item"], unit["repeat"]))
    return recorded, failed


def seeds_of(item: str, repeat: int, agent) -> set[int]:
    """The sampling seeds madeval sends for ``agent`` of a unit (nonces 0 to 3)."""
    return {derive_seed(RUN_SEED, item, repeat, agent, nonce) for nonce in range(4)}


def unit_seeds(units) -> set[int]:
    """Every seed any agent (or the judge) of ``units`` may send."""
    return {seed for item, repeat in units for agent in (0, 1, 2, "judge")
            for seed in seeds_of(item, repeat, agent)}


def misrecorded_replies(folder: Path, server: HostileServer) -> list[str]:
    """Recorded replies that the server did not send properly to that agent of that unit."""
    wrong = []
    for line in (folder / "records.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        unit = record["unit"]
        for message in record["transcript"]["messages"]:
            text = message["text"]
            where = f"{unit['item']} agent {message['agent']}: {text[-80:]!r}"
            if cut := CUT.search(text):  # a reply longer than max_tokens allows: its prefix, with a note
                length, kept = int(cut.group(1)), int(cut.group(2))
                seeds = seeds_of(unit["item"], unit["repeat"], message["agent"])
                sent_so = [s for s in server.sent.values() if s.mode == "10mb-reply" and s.proper
                           and s.length == length and s.seed in seeds]
                if not sent_so or text[:cut.start()] != (FILLER * (kept // len(FILLER) + 1))[:kept]:
                    wrong.append(f"a cut reply the server did not send: {where}")
                continue
            tag = TAG.search(text)
            sent = server.sent.get(tag.group(1)) if tag else None
            if sent is None:
                wrong.append(f"never sent: {where}")
            elif not sent.proper:
                wrong.append(f"sent as {sent.mode}, not a proper reply: {where}")
            elif sent.digest != hashlib.sha256(text.strip().encode()).hexdigest():
                wrong.append(f"altered: {where}")
            elif sent.seed not in seeds_of(unit["item"], unit["repeat"], message["agent"]):
                wrong.append(f"the reply to another request: {where}")
    return wrong


@pytest.mark.parametrize("mode", list(MODES))
def test_hostile_endpoint_mode(mode, truth, planned, forks, tmp_path):
    agents = SyntheticAgents(truth, seed=0)
    server = HostileServer(agents, [mode], rate=RATE_OF.get(mode, RATE), seed=SERVER_SEED, interval_s=0.2)
    folder = tmp_path / "run"
    with run_in_thread(server):
        first = run_madeval(forks, server.base_url, folder)
        check_finished(first, f"{mode}: the first run")
        asked_first = server.stats.requests
        sabotaged_first = server.stats.sabotaged.get(mode, 0)
        recorded, failed_lines = unit_outcomes(folder)
        failed = set(failed_lines)
        wrong = misrecorded_replies(folder, server)

        rerun = run_madeval(forks, server.base_url, folder)
        check_finished(rerun, f"{mode}: the re-run")
        rerun_seeds = server.stats.seeds[asked_first:]
        recorded_after, failed_lines_after = unit_outcomes(folder)
    refailed = set(failed_lines_after[len(failed_lines):])  # the re-run's errors.jsonl lines
    rerecorded = set(recorded_after) - set(recorded)

    # One line per mode for the report (shown with pytest -s).
    print(f"\nhostile {mode}: exit {first.exit_code}, {len(recorded)} recorded, {len(failed)} failed, "
          f"{sabotaged_first} sabotaged of {asked_first} requests, peak RSS "
          f"{first.peak_rss_mb:.0f} MB, {first.seconds:.1f} s; re-run: exit {rerun.exit_code}, "
          f"{len(rerun_seeds)} requests, {len(rerecorded)} recorded, {len(refailed)} failed, "
          f"peak RSS {rerun.peak_rss_mb:.0f} MB, {rerun.seconds:.1f} s")
    assert not server.stats.crashes, server.stats.crashes
    assert server.stats.sabotaged.get(mode, 0) > 0, "the mode never struck: choose another seed"
    # Every unit recorded exactly once or failed, never both; the exit status says which.
    assert len(failed_lines) == len(failed), f"units failed twice: {failed_lines}"
    assert set(recorded.values()) <= {1}, f"units recorded twice: {recorded}"
    assert not set(recorded) & failed, f"units both recorded and failed: {set(recorded) & failed}"
    assert set(recorded) | failed == planned
    assert first.exit_code == (1 if failed else 0), first.stderr[-2000:]
    assert f"{len(recorded)} units run, 0 already done, {len(failed)} failed" in first.stdout
    assert not wrong, "\n".join(wrong[:5])
    if mode in FAILING:  # the sabotaged calls failed their units; the others were recorded
        assert failed and recorded, (len(recorded), len(failed))
    # The re-run asks only for the failed units' calls (the failed call itself is never cached),
    # and records or fails each of them once; the recorded units stay as they were.
    if failed:
        assert rerun_seeds and set(rerun_seeds) <= unit_seeds(failed)
    else:
        assert not rerun_seeds, f"{len(rerun_seeds)} requests for a run with nothing to do"
    assert set(recorded_after.values()) <= {1} and recorded_after.keys() >= recorded.keys()
    assert rerecorded | refailed == failed and not rerecorded & refailed
    assert len(failed_lines_after) - len(failed_lines) == len(refailed)
    summary = f"{len(rerecorded)} units run, {len(recorded)} already done, {len(refailed)} failed"
    assert summary in rerun.stdout, rerun.stdout[-300:]
    assert rerun.exit_code == (1 if refailed else 0)
    assert not misrecorded_replies(folder, server)


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(port: int, seconds: float = 20.0) -> None:
    """Return once something accepts connections on ``port``."""
    import socket

    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _exchange(port: int, request: bytes) -> bytes:
    """Send one raw HTTP request and read until the server closes or 2 s pass."""
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=2) as connection:
        connection.sendall(request)
        received = b""
        try:
            while chunk := connection.recv(65536):
                received += chunk
                if received.count(b"\r\n\r\n") and b'"choices"' in received:
                    break
        except TimeoutError:
            pass
    return received


def test_hostile_simulator_cli_serves_sabotaged_and_normal_replies():
    port = _free_port()
    root = str(Path(madeval.__file__).resolve().parents[1])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([root, os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "madeval", "simulator", "--tasks", "arith_mc", "--port", str(port),
               "--hostile", "error-200", "--hostile-rate", "1", "--unknown", "answer"]  # "Hi" quotes no question
    server = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert "serving on" in server.stderr.readline()
        _wait_for_port(port)
        models = _exchange(port, b"GET /v1/models HTTP/1.1\r\nhost: x\r\n\r\n")
        assert models.startswith(b"HTTP/1.1 200 OK") and b'"id": "simulator"' in models
        body = json.dumps({"model": "simulator", "messages": [{"role": "user", "content": "Hi"}]})
        chat = _exchange(port, f"POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-length: "
                               f"{len(body)}\r\n\r\n{body}".encode())
        # Every chat request is sabotaged (rate 1): a 200 carrying an error object, no choices.
        assert chat.startswith(b"HTTP/1.1 200 OK") and b'"error"' in chat and b'"choices"' not in chat
    finally:
        server.terminate()
        server.wait(timeout=10)


@pytest.mark.parametrize("options, message", [
    (["--hostile", "trickle,slowloris"], "--hostile: unknown mode slowloris; choose from trickle, "),
    (["--hostile", "trickle", "--hostile-rate", "1.5"], "--hostile: the rate must be between 0 and 1, got 1.5"),
    (["--hostile", "trickle", "--rate-limit", "0.1"], "--hostile cannot be combined with"),
])
def test_hostile_simulator_cli_refuses_bad_options(options, message, capsys):
    from madeval.cli.main import main

    with pytest.raises(SystemExit) as exited:
        main(["simulator", *options])
    assert exited.value.code == 2
    printed = capsys.readouterr().err
    assert printed.count("\n") == 1 and message in printed
