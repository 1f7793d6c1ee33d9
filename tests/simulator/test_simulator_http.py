"""The simulator's HTTP transport over loopback, with the openai client and with raw sockets."""

from __future__ import annotations

import asyncio
import json
import math
import signal
import socket
import struct
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import openai
import pytest

from madeval.simulator.http import Faults, SimulatorServer, run_in_thread

KEY = "sk-test-key"
USER = [{"role": "user", "content": "What is 2+2?"}]


def echo(request: dict) -> tuple[str, int, int]:
    """Echo the last message; 'invalid' is a bad request."""
    text = request["messages"][-1]["content"]
    if text == "invalid":
        raise ValueError("the simulator cannot answer 'invalid'")
    return f"echo: {text}", len(text), 2


def client(server: SimulatorServer, **kwargs) -> openai.OpenAI:
    return openai.OpenAI(base_url=server.base_url, api_key=KEY, max_retries=0, **kwargs)


def chat_request(content: str = "hi", model: str = "m", headers: bytes = b"") -> bytes:
    body = json.dumps({"model": model, "messages": [{"role": "user", "content": content}]}).encode()
    return (b"POST /v1/chat/completions HTTP/1.1\r\nHost: localhost\r\n"
            b"Content-Type: application/json\r\n" + headers
            + b"Content-Length: %d\r\n\r\n" % len(body) + body)


def read_response(stream) -> tuple[int, dict[str, str], bytes] | None:
    """One HTTP response from a socket file, or None at end of stream."""
    status_line = stream.readline()
    if not status_line:
        return None
    headers = {}
    while (line := stream.readline()) not in (b"\r\n", b""):
        name, _, value = line.decode().partition(":")
        headers[name.strip().lower()] = value.strip()
    return int(status_line.split()[1]), headers, stream.read(int(headers["content-length"]))


def content(body: bytes) -> str:
    """The reply text of a chat.completion body."""
    return json.loads(body)["choices"][0]["message"]["content"]


def raw_exchange(port: int, *chunks: bytes, expect: int, pause: float = 0.0,
                 closed: bool = False) -> list[tuple[int, dict[str, str], bytes]]:
    """Send ``chunks`` on one connection and read ``expect`` responses (then EOF if ``closed``)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for chunk in chunks:
            sock.sendall(chunk)
            time.sleep(pause)
        stream = sock.makefile("rb")
        responses = [read_response(stream) for _ in range(expect)]
        if closed:
            assert stream.read() == b"", "the server should have closed the connection"
        return responses


def wait_until(condition, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def test_openai_client_gets_text_usage_and_echoed_model():
    with run_in_thread(SimulatorServer(echo, api_key=KEY)) as server:
        reply = client(server).chat.completions.create(model="agent-7", messages=USER)
        assert reply.object == "chat.completion"
        assert reply.model == "agent-7"
        assert reply.choices[0].message.role == "assistant"
        assert reply.choices[0].message.content == "echo: What is 2+2?"
        assert reply.choices[0].finish_reason == "stop"
        assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (12, 2)
        assert reply.usage.total_tokens == 14
        models = {model.id for model in client(server).models.list()}
        assert models == {"simulator", "agent-7"}
        assert server.stats.requests == 1
        assert server.stats.by_status == {200: 2}
        assert server.stats.in_flight == 0


def test_api_key_is_required_and_not_kept():
    with run_in_thread(SimulatorServer(echo, api_key=KEY)) as server:
        wrong = openai.OpenAI(base_url=server.base_url, api_key="wrong", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            wrong.chat.completions.create(model="m", messages=USER)
        with pytest.raises(openai.AuthenticationError):
            wrong.models.list()
        [(status, _, body)] = raw_exchange(server.port, chat_request(), expect=1)
        assert status == 401
        assert json.loads(body)["error"]["code"] == "invalid_api_key"
        assert client(server).chat.completions.create(model="m", messages=USER).choices
        assert KEY not in repr(vars(server))
        assert server.stats.by_status == {401: 3, 200: 1}


def test_unknown_paths_are_404_with_openai_error_shape():
    with run_in_thread(SimulatorServer(echo)) as server:
        responses = raw_exchange(
            server.port,
            b"GET /v1/nothing HTTP/1.1\r\nHost: x\r\n\r\n",
            b"GET /v1/chat/completions HTTP/1.1\r\nHost: x\r\n\r\n",
            expect=2,
        )
        assert [status for status, _, _ in responses] == [404, 404]
        error = json.loads(responses[0][2])["error"]
        assert set(error) >= {"message", "type", "code"}
        assert "/v1/nothing" in error["message"]
        assert server.stats.requests == 0


def test_stream_true_is_a_clear_400():
    with run_in_thread(SimulatorServer(echo)) as server:
        with pytest.raises(openai.BadRequestError, match="Streaming is not supported"):
            client(server).chat.completions.create(model="m", messages=USER, stream=True)


def test_behaviour_value_error_and_bad_json_are_400():
    with run_in_thread(SimulatorServer(echo)) as server:
        with pytest.raises(openai.BadRequestError, match="cannot answer 'invalid'"):
            client(server).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "invalid"}]
            )
        bad = b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 5\r\n\r\n{oops"
        [(status, _, body)] = raw_exchange(server.port, bad, expect=1)
        assert status == 400
        assert json.loads(body)["error"]["type"] == "invalid_request_error"


def test_behaviour_crash_is_500_and_server_keeps_serving():
    def broken(request: dict) -> tuple[str, int, int]:
        raise KeyError("messages")

    with run_in_thread(SimulatorServer(broken)) as server:
        with pytest.raises(openai.InternalServerError, match="KeyError"):
            client(server).chat.completions.create(model="m", messages=USER)
        assert client(server).models.list().data


@pytest.mark.parametrize(
    ("fault", "error"),
    [
        ("rate_limit", openai.RateLimitError),
        ("server_error", openai.InternalServerError),
        # The openai client does not wrap a 200 whose body is not JSON: json.loads raises.
        ("malformed", json.JSONDecodeError),
    ],
)
def test_faults_raise_the_matching_client_error(fault, error):
    with run_in_thread(SimulatorServer(echo, faults=Faults(**{fault: 1.0}))) as server:
        with pytest.raises(error):
            client(server).chat.completions.create(model="m", messages=USER)
        assert server.stats.faults == {fault: 1}


def test_rate_limit_says_retry_after_zero():
    with run_in_thread(SimulatorServer(echo, faults=Faults(rate_limit=1.0))) as server:
        with pytest.raises(openai.RateLimitError) as caught:
            client(server).chat.completions.create(model="m", messages=USER)
        assert caught.value.response.headers["retry-after"] == "0"
        assert caught.value.body["code"] == "rate_limit_exceeded"


def test_empty_fault_gives_empty_content():
    with run_in_thread(SimulatorServer(echo, faults=Faults(empty=1.0))) as server:
        reply = client(server).chat.completions.create(model="m", messages=USER)
        assert reply.choices[0].message.content == ""
        assert reply.model == "m"


def test_timeout_fault_times_the_client_out_and_survives_its_departure():
    faults = Faults(timeout=1.0, hang_s=2.0)
    with run_in_thread(SimulatorServer(echo, faults=faults)) as server:
        with pytest.raises(openai.APITimeoutError):
            client(server, timeout=0.3).chat.completions.create(model="m", messages=USER)
        assert wait_until(lambda: server.stats.in_flight == 0)  # it hung up: nothing owed
        with socket.create_connection(("127.0.0.1", server.port)) as sock:
            sock.sendall(chat_request())
            assert wait_until(lambda: server.stats.in_flight == 1)
            # Reset the connection (RST, not FIN) while the request hangs.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        assert wait_until(lambda: server.stats.in_flight == 0)
        assert server.stats.faults == {"timeout": 2}
        assert 200 not in server.stats.by_status
        assert client(server).models.list().data


def test_timeout_fault_answers_normally_after_hang_s():
    with run_in_thread(SimulatorServer(echo, faults=Faults(timeout=1.0, hang_s=0.3))) as server:
        started = time.monotonic()
        reply = client(server, timeout=10).chat.completions.create(model="m", messages=USER)
        assert time.monotonic() - started >= 0.3
        assert reply.choices[0].message.content == "echo: What is 2+2?"


def test_fault_rates_are_respected_and_seeded():
    rates = {
        "rate_limit": 0.1, "server_error": 0.05, "timeout": 0.1, "empty": 0.15, "malformed": 0.1
    }
    n = 400

    def run() -> tuple[list[int], list[bytes], dict[str, int]]:
        server = SimulatorServer(echo, faults=Faults(**rates, hang_s=0.0, seed=1234))
        with run_in_thread(server):
            pipeline = b"".join(chat_request(str(i)) for i in range(n))
            responses = raw_exchange(server.port, pipeline, expect=n)
        return [r[0] for r in responses], [r[2] for r in responses], server.stats.faults

    statuses, bodies, faults = run()
    assert len(statuses) == n
    for kind, rate in rates.items():
        sigma = math.sqrt(n * rate * (1 - rate))
        assert abs(faults.get(kind, 0) - n * rate) <= 4 * sigma, (kind, faults)
    assert statuses.count(429) == faults["rate_limit"]
    assert statuses.count(500) == faults["server_error"]
    contents = []
    for body in (b for s, b in zip(statuses, bodies, strict=True) if s == 200):
        try:
            contents.append(content(body))
        except json.JSONDecodeError:
            contents.append(None)
    assert contents.count(None) == faults["malformed"]
    assert contents.count("") == faults["empty"]
    assert run()[0] == statuses  # the same seed gives the same faults


def test_invalid_fault_rates_are_rejected():
    with pytest.raises(ValueError):
        Faults(rate_limit=0.7, empty=0.5)
    with pytest.raises(ValueError):
        Faults(server_error=-0.1)


def test_latency_delays_each_request():
    with run_in_thread(SimulatorServer(echo, latency_s=0.2)) as server:
        started = time.monotonic()
        client(server).chat.completions.create(model="m", messages=USER)
        assert time.monotonic() - started >= 0.2


def test_pipelined_requests_are_answered_in_order():
    with run_in_thread(SimulatorServer(echo, latency_s=0.1)) as server:
        pipeline = b"".join([
            chat_request("one"),
            b"GET /v1/models HTTP/1.1\r\nHost: x\r\n\r\n",  # undelayed, must wait its turn
            chat_request("two", model="other"),
            b"GET /v1/missing HTTP/1.1\r\nHost: x\r\n\r\n",
        ])
        responses = raw_exchange(server.port, pipeline, expect=4)
        assert [status for status, _, _ in responses] == [200, 200, 200, 404]
        first, models, second = (json.loads(body) for _, _, body in responses[:3])
        assert first["choices"][0]["message"]["content"] == "echo: one"
        assert models["object"] == "list"
        assert (content(responses[2][2]), second["model"]) == ("echo: two", "other")


def test_requests_split_across_reads_are_parsed():
    with run_in_thread(SimulatorServer(echo)) as server:
        stream = chat_request("split") + chat_request("again")
        cuts = [7, 30, 31, 90, len(stream) - 40, len(stream) - 3]
        chunks = [stream[a:b] for a, b in zip([0, *cuts], [*cuts, len(stream)], strict=True)]
        responses = raw_exchange(server.port, *chunks, expect=2, pause=0.02)
        assert [content(body) for _, _, body in responses] == ["echo: split", "echo: again"]


def test_expect_100_continue_is_honoured():
    with run_in_thread(SimulatorServer(echo)) as server:
        request = chat_request("patient", headers=b"Expect: 100-continue\r\n")
        head, body = request.split(b"\r\n\r\n", 1)
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            sock.sendall(head + b"\r\n\r\n")
            stream = sock.makefile("rb")
            assert stream.readline() == b"HTTP/1.1 100 Continue\r\n"
            assert stream.readline() == b"\r\n"
            sock.sendall(body)
            status, _, reply = read_response(stream)
        assert status == 200
        assert content(reply) == "echo: patient"


def test_connection_close_and_http10_close_after_the_response():
    with run_in_thread(SimulatorServer(echo)) as server:
        last = chat_request("last", headers=b"Connection: close\r\n")
        [(status, headers, _)] = raw_exchange(
            server.port, last + chat_request("ignored"), expect=1, closed=True
        )
        assert (status, headers["connection"]) == (200, "close")
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            sock.sendall(b"GET /v1/models HTTP/1.0\r\n\r\n")  # no shutdown: the server closes
            stream = sock.makefile("rb")
            assert read_response(stream)[0] == 200
            assert stream.read() == b""


def test_garbage_request_line_is_400_and_closes():
    with run_in_thread(SimulatorServer(echo)) as server:
        [(status, headers, _)] = raw_exchange(
            server.port, b"NONSENSE\r\n\r\n" + chat_request(), expect=1, closed=True
        )
        assert (status, headers["connection"]) == (400, "close")


def test_peak_in_flight_reaches_concurrency():
    async def burst(base_url: str) -> float:
        async_client = openai.AsyncOpenAI(base_url=base_url, api_key=KEY, max_retries=0)
        started = time.monotonic()
        replies = await asyncio.gather(
            *(async_client.chat.completions.create(model="m", messages=USER) for _ in range(20))
        )
        assert all(reply.choices[0].message.content for reply in replies)
        await async_client.close()
        return time.monotonic() - started

    with run_in_thread(SimulatorServer(echo, latency_s=0.5)) as server:
        assert asyncio.run(burst(server.base_url)) >= 0.5
        assert server.stats.peak_in_flight == 20
        assert server.stats.in_flight == 0
        assert server.stats.requests == 20


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_serve_forever_stops_cleanly_on_signal(sig):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    script = textwrap.dedent(f"""
        from madeval.simulator.http import SimulatorServer, serve_forever
        serve_forever(SimulatorServer(lambda request: ("ok", 1, 1), port={port}))
        print("stopped")
    """)
    root = Path(__file__).resolve().parents[2]
    process = subprocess.Popen(
        [sys.executable, "-c", script], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    try:
        assert wait_until(lambda: _accepts(port), timeout=10)
        [(status, _, body)] = raw_exchange(port, chat_request(), expect=1)
        assert (status, content(body)) == (200, "ok")
        process.send_signal(sig)
        out, err = process.communicate(timeout=10)
    finally:
        process.kill()
    assert process.returncode == 0, err
    assert out.strip() == b"stopped"


def _accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True
    except OSError:
        return False
