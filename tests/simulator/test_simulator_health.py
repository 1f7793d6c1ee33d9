"""``GET /health``: what a router (vllm-router polls ``/health`` before it admits a worker) asks the
simulator and the hostile server over loopback, with the API key, faults and sabotage that apply
to chat requests only."""

from __future__ import annotations

import http.client
import json

import pytest

from madeval.simulator.hostile import HostileServer
from madeval.simulator.http import Faults, SimulatorServer, run_in_thread

CHAT = json.dumps({"model": "m", "messages": [{"role": "user", "content": "What is 2+2?"}]})


def echo(request: dict) -> tuple[str, int, int]:
    """Echo the last message."""
    return "echo: " + request["messages"][-1]["content"], 3, 2


def ask(port: int, method: str, path: str, body: str | None = None) -> tuple[int, bytes]:
    """One request on a fresh loopback connection, without any API key: (status, body)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    try:
        connection.request(method, path, body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_simulator_health_answers_200_without_the_key_and_is_no_chat_request():
    # Every chat request would fail with a 500; the key is required everywhere but /health.
    server = SimulatorServer(echo, api_key="sk-secret", faults=Faults(server_error=1.0))
    with run_in_thread(server):
        assert ask(server.port, "GET", "/health") == (200, b'{"status": "ok"}')
        assert ask(server.port, "GET", "/v1/models")[0] == 401
        assert ask(server.port, "POST", "/health", CHAT)[0] == 401  # only GET is the probe
        assert ask(server.port, "GET", "/healthz")[0] == 401
        assert server.stats.requests == 0  # probes are not counted as chat requests
    open_server = SimulatorServer(echo, faults=Faults(server_error=1.0))
    with run_in_thread(open_server):
        assert ask(open_server.port, "GET", "/health")[0] == 200
        assert ask(open_server.port, "POST", "/v1/chat/completions", CHAT)[0] == 500
        assert ask(open_server.port, "GET", "/healthz")[0] == 404
        assert open_server.stats.requests == 1


def test_hostile_server_health_answers_200_while_every_chat_request_is_sabotaged():
    server = HostileServer(echo, ["invalid-json"], rate=1.0)
    with run_in_thread(server):
        assert ask(server.port, "GET", "/health") == (200, b'{"status": "ok"}')
        status, body = ask(server.port, "POST", "/v1/chat/completions", CHAT)
        assert status == 200
        with pytest.raises(json.JSONDecodeError):  # sabotaged: the reply is not JSON
            json.loads(body)
        assert server.stats.sabotaged == {"invalid-json": 1}
