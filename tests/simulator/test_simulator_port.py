"""``madeval simulator --port P`` on an address it cannot listen on is one line and exit status 2
(before: a 40-line traceback, after a "serving on" line that was not true); the line saying where
it serves is printed once it listens, with the real port (``--port 0`` printed port 0)."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import urllib.request

import pytest

COMMAND = [sys.executable, "-m", "madeval", "simulator", "--tasks", "arith_mc"]


@pytest.mark.parametrize("hostile", [[], ["--hostile", "error-200"]])
def test_a_busy_port_is_one_line_and_status_2(hostile):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        ended = subprocess.run([*COMMAND, "--port", str(port), *hostile], capture_output=True, text=True, timeout=120)
    assert ended.returncode == 2, ended.stderr
    assert ended.stderr.splitlines() == [
        f"madeval: error: cannot listen on 127.0.0.1:{port}: Address already in use (choose another --port, "
        "or --port 0 for a free one)"]


def test_port_0_says_the_port_it_serves_on():
    server = subprocess.Popen([*COMMAND, "--port", "0"], stderr=subprocess.PIPE, text=True)
    try:
        line = server.stderr.readline()
        found = re.fullmatch(r"simulator: \d+ questions known; serving on http://127\.0\.0\.1:(\d+)/v1\n", line)
        assert found and int(found.group(1)) > 0, line
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # loopback, never a proxy
        with direct.open(f"http://127.0.0.1:{found.group(1)}/v1/models", timeout=30) as answer:
            assert b'"simulator"' in answer.read()
    finally:
        server.terminate()
        server.wait(timeout=30)
