"""The embedded model never outlives its run (issue 25, item 15): Ctrl-C, SIGTERM or SIGKILL of
madeval in the middle of a generation leaves no llama.cpp server generating 2 s later. Real
processes, real signals, the real model."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_embedded import needs_embedded
from test_embedded_run import alive, ctrl_c_as_at_a_terminal, llama_servers

from madeval.llm.embedded import NO_PROXY_OPENER

pytestmark = [needs_embedded, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and PDEATHSIG")]


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_port(pid: int) -> int:
    """The ``--port`` on the llama.cpp server's command line."""
    arguments = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    return int(arguments[arguments.index(b"--port") + 1])


def wait_until_generating(process: subprocess.Popen, timeout: float = 300) -> int:
    """The pid of ``process``'s llama.cpp server, once it serves and is busy generating: it answers
    ``/v1/models``, and then its CPU time grows (a shared machine may give it a fraction of a core)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        servers = llama_servers(process.pid)
        if servers:
            try:
                with NO_PROXY_OPENER.open(f"http://127.0.0.1:{server_port(servers[0])}/v1/models", timeout=2):
                    pass
            except OSError:
                time.sleep(0.2)
                continue
            time.sleep(1.0)  # madeval's start-up check, then its first chat request
            before = cpu_seconds(servers[0])
            time.sleep(0.5)
            if cpu_seconds(servers[0]) - before > 0.05:
                return servers[0]
        time.sleep(0.1)
    raise AssertionError(f"no generating server (madeval: {process.poll()})")


@pytest.mark.parametrize("sent", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL], ids=["ctrl-c", "sigterm", "sigkill"])
def test_crash_embedded_server_stops_within_2s_of_a_signal_mid_generation(tmp_path, sent):
    process = subprocess.Popen(
        [sys.executable, "-m", "madeval", "--tasks", "arith_mc", "--limit", "20", "--max-tokens", "1024",
         "--output-path", "out", "--cache", "off", "--no-progress"],
        cwd=tmp_path, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, preexec_fn=ctrl_c_as_at_a_terminal,
    )
    try:
        server = wait_until_generating(process)
        sent_at = time.monotonic()
        process.send_signal(sent)
        while alive(server) and time.monotonic() - sent_at < 30:
            time.sleep(0.02)
        server_gone = time.monotonic() - sent_at
        process.wait(timeout=30)
        madeval_gone = time.monotonic() - sent_at
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    print(f"\n{sent.name}: server gone after {server_gone:.2f} s, madeval after {madeval_gone:.2f} s")  # pytest -s
    assert server_gone < 2.0, f"the server generated on for {server_gone:.1f} s after {sent.name}"
    assert madeval_gone < 2.5, f"madeval took {madeval_gone:.1f} s to end after {sent.name}"
    if sent == signal.SIGINT:
        assert process.returncode == 130 and process.stderr.read().strip().endswith("madeval: interrupted")
