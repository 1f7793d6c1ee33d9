"""The simulator as one serving replica (issue 17): its prefix cache's cached and computed token
counts, its concurrency limit with a queue, and ``GET /stats``, over loopback."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time

import pytest

from madeval.cli.main import main
from madeval.llm.prefix_reuse import prompt_tokens
from madeval.simulator.http import Faults, SimulatorServer, run_in_thread
from madeval.simulator.replica import PrefixCache, block_hashes

KEY = "sk-replica"


def echo(request: dict) -> tuple[str, int, int]:
    """Echo the last message."""
    return "echo: " + request["messages"][-1]["content"], 1, 1


def ask(port: int, method: str, path: str, body: dict | None = None, key: str | None = KEY
        ) -> tuple[int, dict]:
    """One request on a fresh loopback connection: (status, JSON body)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    try:
        connection.request(method, path, body=None if body is None else json.dumps(body), headers=headers)
        response = connection.getresponse()
        return response.status, json.loads(response.read())
    finally:
        connection.close()


def chat(port: int, content: str) -> int:
    """One chat request whose prompt is a single user message; its HTTP status."""
    body = {"model": "m", "messages": [{"role": "user", "content": content}]}
    return ask(port, "POST", "/v1/chat/completions", body)[0]


def wait_until(condition, timeout: float = 5.0) -> None:
    """Poll ``condition`` until it holds; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.005)


# With blocks of 4 tokens, "a b c d e f g" is <user> a b c | d e f g: two full blocks (B1, B2).
P1 = "a b c d e f g"
# <user> a b c | x y z w | v q: B1 again, a new block C2, and a partial block never cached.
P2 = "a b c x y z w v q"


def test_cached_and_computed_tokens_follow_the_blocks_with_one_lru_eviction():
    assert len(prompt_tokens([{"role": "user", "content": P1}])) == 8
    assert len(prompt_tokens([{"role": "user", "content": P2}])) == 10
    # A budget of 8 tokens holds 2 blocks of 4.
    server = SimulatorServer(echo, api_key=KEY, prefix_cache_tokens=8, block_tokens=4)
    steps = [
        (P1, 0, 8),  # empty cache: both blocks computed; cache B1, B2
        (P1, 8, 0),  # both found; B1, B2 used again
        (P2, 4, 6),  # B1 found; C2 and the partial block computed; C2 in, B2 (least recent) out
        (P1, 4, 4),  # B1 found, B2 was evicted: computed again; C2 (least recent) out
    ]
    cached_total = computed_total = 0
    with run_in_thread(server):
        for content, cached, computed in steps:
            assert chat(server.port, content) == 200
            cached_total += cached
            computed_total += computed
            assert (server.stats.prompt_tokens_cached, server.stats.prompt_tokens_computed) == (
                cached_total, computed_total), content
        assert server.stats.cache_blocks == 2
        status, stats = ask(server.port, "GET", "/stats", key=None)
    assert status == 200
    assert (stats["requests"], stats["prompt_tokens_cached"], stats["prompt_tokens_computed"],
            stats["cache_blocks"], stats["in_flight"], stats["queued"]) == (4, 16, 18, 2, 0, 0)


def test_a_block_is_named_by_its_whole_prefix():
    tokens = prompt_tokens([{"role": "user", "content": P1}])
    other_start = ["<system>"] + tokens[1:]  # the same second block after a different first one
    assert block_hashes(tokens, 4)[0] != block_hashes(other_start, 4)[0]
    assert block_hashes(tokens, 4)[1] != block_hashes(other_start, 4)[1]
    cache = PrefixCache(budget_tokens=100, block_tokens=4)
    assert cache.admit(tokens) == 0
    assert cache.admit(other_start) == 0  # the second block's content is cached, but not after <system>
    assert cache.admit(tokens[:7]) == 4  # one full block found; the 3 left form no block
    assert len(cache) == 4


def test_one_slot_queues_the_second_request_behind_the_first():
    # 8 prompt tokens at 25 ms each: 0.2 s of prefill per request, none cached (no cache).
    server = SimulatorServer(echo, api_key=KEY, max_concurrency=1, prefill_s_per_token=0.025)
    finished: dict[str, float] = {}
    samples: list[tuple[int, int]] = []

    def send(name: str, content: str) -> None:
        assert chat(server.port, content) == 200
        finished[name] = time.monotonic()

    with run_in_thread(server):
        start = time.monotonic()
        first = threading.Thread(target=send, args=("first", P1))
        first.start()
        wait_until(lambda: server.stats.running == 1)  # the first holds the slot before the second arrives
        second = threading.Thread(target=send, args=("second", "h i j k l m n"))
        second.start()
        while second.is_alive():
            _, stats = ask(server.port, "GET", "/stats", key=None)
            samples.append((stats["running"], stats["queued"]))
            time.sleep(0.01)
        first.join()
    assert finished["first"] < finished["second"]
    assert finished["second"] - start >= 0.4  # two prefills of 0.2 s, one after the other
    assert max(running for running, _ in samples) == 1
    assert (1, 1) in samples  # the second waited in the queue while the first ran
    assert server.stats.peak_running == 1
    assert server.stats.prompt_tokens_computed == 16 and server.stats.prompt_tokens_cached == 0


def test_two_slots_serve_two_requests_at_once():
    server = SimulatorServer(echo, max_concurrency=2, prefill_s_per_token=0.025)
    with run_in_thread(server):
        threads = [threading.Thread(target=chat, args=(server.port, P1)) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert server.stats.peak_running == 2
    assert server.stats.by_status == {200: 2}


def test_a_hung_answer_is_a_fault_that_skips_the_replica():
    """A timeout fault holds its answer ``hang_s`` outside the replica: it takes no slot from the
    requests behind it and its prompt is neither cached nor counted as computed."""
    server = SimulatorServer(echo, faults=Faults(timeout=1.0, hang_s=0.2), max_concurrency=1,
                             prefix_cache_tokens=1000, block_tokens=4)
    with run_in_thread(server):
        assert chat(server.port, P1) == 200
    stats = server.stats
    assert (stats.peak_running, stats.prompt_tokens_computed, stats.prompt_tokens_cached) == (0, 0, 0)
    assert server.stats.by_status == {200: 1}


def test_stats_answers_without_the_key_while_chat_needs_it():
    server = SimulatorServer(echo, api_key=KEY)
    with run_in_thread(server):
        assert ask(server.port, "POST", "/v1/chat/completions",
                   {"model": "m", "messages": [{"role": "user", "content": "hi"}]}, key=None)[0] == 401
        status, stats = ask(server.port, "GET", "/stats", key=None)
    assert status == 200
    # Off by default: the replica counters stay at zero.
    assert (stats["requests"], stats["prompt_tokens_computed"], stats["cache_blocks"]) == (1, 0, 0)
    assert stats["by_status"] == {"401": 1}


@pytest.mark.parametrize("args", [["--max-concurrency", "0"], ["--block-tokens", "0"],
                                  ["--prefill-ms-per-1k", "-1"], ["--prefix-cache-tokens", "-5"],
                                  ["--hostile", "invalid-json", "--max-concurrency", "2"]])
def test_cli_rejects_a_bad_replica_option_with_one_line_and_status_2(args, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["simulator", "--port", "0", *args])
    assert exit_.value.code == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and args[0] in error, error


def test_a_client_that_leaves_while_queued_frees_its_place_and_counts():
    server = SimulatorServer(echo, max_concurrency=1, prefill_s_per_token=0.05)  # 8 tokens: 0.4 s
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": P1}]}).encode()
    request = (b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
               b"Content-Length: %d\r\n\r\n" % len(body) + body)
    with run_in_thread(server):
        first = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        first.sendall(request)
        wait_until(lambda: server.stats.running == 1)
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as leaving:
            leaving.sendall(request)
            wait_until(lambda: server.stats.queued == 1)
        wait_until(lambda: server.stats.queued == 0)  # the closed connection gives up its place
        assert server.stats.running == 1
        with first:
            assert first.makefile("rb").readline().startswith(b"HTTP/1.1 200")
        wait_until(lambda: server.stats.in_flight == 0)
        assert (server.stats.running, server.stats.queued, server.stats.by_status) == (0, 0, {200: 1})
        assert server.stats.prompt_tokens_computed == 8  # the one that left was never prefilled


def test_content_parts_and_odd_messages_are_counted_and_answered():
    server = SimulatorServer(echo_any, prefix_cache_tokens=64, block_tokens=4)
    parts = [{"role": "user", "content": [{"type": "text", "text": "a b c"}, {"type": "image_url"},
                                          {"type": "text", "text": "d e f g"}]}]
    with run_in_thread(server):
        for messages in (parts, [{"content": "a b c"}], [{"role": "user", "content": None}], ["x"]):
            status, _ = ask(server.port, "POST", "/v1/chat/completions", {"model": "m", "messages": messages})
            assert status == 200, messages
    # The parts read as "a b c d e f g" (8 tokens, P1); then <> a b c (4); <user> (1); nothing (0).
    assert server.stats.prompt_tokens_computed == 8 + 4 + 1
    assert server.stats.by_status == {200: 4}


def echo_any(request: dict) -> tuple[str, int, int]:
    """Answer any request with the same text."""
    return "ok", 1, 1


def test_only_the_tokens_the_cache_did_not_hold_are_prefilled():
    # 8 tokens at 50 ms: 0.4 s the first time; the repeat finds both blocks and skips the prefill.
    server = SimulatorServer(echo, prefix_cache_tokens=64, block_tokens=4, prefill_s_per_token=0.05)
    elapsed = []
    with run_in_thread(server):
        for _ in range(2):
            start = time.monotonic()
            assert chat(server.port, P1) == 200
            elapsed.append(time.monotonic() - start)
    assert elapsed[0] >= 0.4
    assert elapsed[1] < elapsed[0]
    assert (server.stats.prompt_tokens_computed, server.stats.prompt_tokens_cached) == (8, 8)
