"""Prompt tokens served from the provider's prompt cache (``usage.prompt_tokens_details.cached_tokens``):
read as untrusted input from every transport, reported by the simulator's prefix cache, and kept per
call in the records."""

from __future__ import annotations

import asyncio
import json

import openai
import pytest

from madeval.llm.client import Endpoint, LLMClient
from madeval.llm.prefix_reuse import prompt_tokens
from madeval.llm.wire import cached_prompt_tokens, read_reply
from madeval.simulator.batches import BatchOptions
from madeval.simulator.http import SimulatorServer, run_in_thread


def body(usage) -> bytes:
    return json.dumps({"choices": [{"message": {"role": "assistant", "content": "hi"}}], "usage": usage}).encode()


@pytest.mark.parametrize(("details", "expected"), [
    ({"cached_tokens": 64}, 64),
    ({"cached_tokens": 0}, 0),          # said: nothing cached
    ({"cached_tokens": 100}, 100),      # the whole prompt
    ({}, None),                         # vLLM without --enable-prompt-tokens-details: unknown, not 0
    (None, None),
    ({"cached_tokens": None}, None),
    ({"cached_tokens": 101}, None),     # more than the prompt: not believed
    ({"cached_tokens": -1}, None),
    ({"cached_tokens": 12.5}, None),
    ({"cached_tokens": 12.0}, None),    # not an integer
    ({"cached_tokens": "64"}, None),
    ({"cached_tokens": True}, None),
    ({"cached_tokens": 10 ** 30}, None),
    ({"cached_tokens": [64]}, None),
    ("cached", None),                   # details that are not an object
])
def test_the_cached_count_is_kept_only_when_it_is_a_count_within_the_prompt(details, expected):
    usage = {"prompt_tokens": 100, "completion_tokens": 7}
    if details is not None:
        usage["prompt_tokens_details"] = details
    reply = read_reply(body(usage))
    assert tuple(reply) == ("hi", 100, 7)  # the call is kept whatever the count says
    assert reply.cached_prompt_tokens == expected


def test_hostile_usage_shapes_never_break_the_reply():
    deep = {"cached_tokens": 1}
    for _ in range(200):
        deep = {"cached_tokens": deep}
    assert read_reply(body({"prompt_tokens": 5, "prompt_tokens_details": deep})).cached_prompt_tokens is None
    assert cached_prompt_tokens("usage", 5) is None and cached_prompt_tokens(None, 5) is None
    assert cached_prompt_tokens({"prompt_tokens_details": {"cached_tokens": 3}}, 2) is None


def words(request: dict) -> tuple[str, int, int]:
    """Reply "ok"; the prompt's tokens as the prefix cache counts them (so its share is exact)."""
    return "ok", len(prompt_tokens(request["messages"])), 1


def doubled(request: dict) -> tuple[str, int, int]:
    """Reply "ok"; twice the prefix cache's count of prompt tokens (another tokenizer)."""
    return "ok", 2 * len(prompt_tokens(request["messages"])), 1


def chat_body(content: str) -> dict:
    return {"model": "m", "messages": [{"role": "user", "content": content}]}


# Blocks of 4 tokens: "<user> a b c | d e f g" is two full blocks; "<user> a b c | x y z w | v q" shares
# the first and adds one full and one partial block (the steps of test_simulator_replica).
P1, P2 = "a b c d e f g", "a b c x y z w v q"


def _cached_counts(server: SimulatorServer, prompts: list[str]) -> list[tuple[int, int | None]]:
    with run_in_thread(server):
        client = openai.OpenAI(base_url=server.base_url, api_key="-", max_retries=0)
        replies = [client.chat.completions.create(**chat_body(p)) for p in prompts]
    return [(r.usage.prompt_tokens, r.usage.prompt_tokens_details and r.usage.prompt_tokens_details.cached_tokens)
            for r in replies]


def test_the_simulator_reports_its_prefix_cache_hits_in_usage():
    server = SimulatorServer(words, prefix_cache_tokens=8, block_tokens=4)
    # 8 tokens (none cached), 8 (both blocks), 10 (first block), 8 (first block; the second was evicted)
    assert _cached_counts(server, [P1, P1, P2, P1]) == [(8, 0), (8, 8), (10, 4), (8, 4)]


def test_the_cached_share_is_scaled_to_the_behaviours_prompt_token_count():
    server = SimulatorServer(doubled, prefix_cache_tokens=8, block_tokens=4)
    assert _cached_counts(server, [P1, P1, P2]) == [(16, 0), (16, 16), (20, 8)]


def test_without_a_prefix_cache_the_simulator_says_nothing_of_cached_tokens():
    server = SimulatorServer(words, max_concurrency=2)
    assert _cached_counts(server, [P1, P1]) == [(8, None), (8, None)]


def test_batch_output_lines_report_the_prefix_cache_too():
    server = SimulatorServer(words, prefix_cache_tokens=8, block_tokens=4,
                             batch_options=BatchOptions(completion_delay_s=0.0))
    lines = [{"custom_id": f"c{i}", "method": "POST", "url": "/v1/chat/completions", "body": chat_body(p)}
             for i, p in enumerate([P1, P1, P2])]
    with run_in_thread(server):
        client = openai.OpenAI(base_url=server.base_url, api_key="-", max_retries=0)
        upload = client.files.create(file=("in.jsonl", "".join(json.dumps(x) + "\n" for x in lines).encode()),
                                     purpose="batch")
        batch = client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                      completion_window="24h")
        for _ in range(500):
            batch = client.batches.retrieve(batch.id)
            if batch.status == "completed":
                break
            asyncio.run(asyncio.sleep(0.01))
        out = [json.loads(x) for x in client.files.content(batch.output_file_id).text.splitlines()]
    usage = {entry["custom_id"]: entry["response"]["body"]["usage"] for entry in out}
    assert [(usage[c]["prompt_tokens"],
             usage[c]["prompt_tokens_details"]["cached_tokens"]) for c in ("c0", "c1", "c2")] \
        == [(8, 0), (8, 8), (10, 4)]
    # each line is also what the batch transport reads: the count arrives with the reply
    assert read_reply(json.dumps(out[2]["response"]["body"]).encode()).cached_prompt_tokens == 4


@pytest.mark.parametrize("transport", ["aiohttp", "openai"])
def test_each_transport_hands_the_cached_count_and_its_name_to_the_call(transport):
    server = SimulatorServer(words, prefix_cache_tokens=64, block_tokens=4)

    async def two_calls():
        client = LLMClient({"sim": Endpoint("sim", server.base_url, transport=transport)})
        try:
            messages = [{"role": "user", "content": P1}]
            first = await client.complete("sim", "m", messages, {}, ("a",))
            second = await client.complete("sim", "m", messages, {}, ("b",))
        finally:
            await client.aclose()
        return first, second

    with run_in_thread(server):
        first, second = asyncio.run(two_calls())
    assert (first.prompt_tokens, first.cached_prompt_tokens, first.transport) == (8, 0, transport)
    assert (second.prompt_tokens, second.cached_prompt_tokens, second.transport) == (8, 8, transport)


def test_lying_cached_counts_from_a_hostile_endpoint_are_ignored_and_every_call_kept(generated_tasks, tmp_path):
    """Every reply of a run says a cached count that is no count within its prompt (each lie of
    LYING_DETAILS): the run records every debate, and no call holds a cached count."""
    from helpers import run_quietly
    from madeval.settings.config import DebateConfig, RunSettings
    from madeval.simulator.agents import SyntheticAgents
    from madeval.simulator.hostile import LYING_DETAILS, HostileServer
    from madeval.simulator.truth import GoldIndex

    server = HostileServer(SyntheticAgents(GoldIndex.from_tasks(generated_tasks.values()), seed=0), ["lying-usage"],
                           rate=1.0, seed=3)
    assert all(read_reply(body({"prompt_tokens": 9, "prompt_tokens_details": lie(9)})).cached_prompt_tokens is None
               for lie in LYING_DETAILS)
    folder = tmp_path / "run"
    with run_in_thread(server):
        result, _ = run_quietly(RunSettings(
            base_url=server.base_url, tasks=["arith_mc"], limit=4, cache="off", output_path=str(folder),
            configurations=[DebateConfig(paradigm="memory", agents=3, max_turns=3, decider="simple_voting")]))
    rows = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]
    assert result.outcome.failed == 0 and len(rows) == 4
    calls = [call for row in rows for call in row["transcript"]["calls"]]
    assert len(calls) == server.stats.sabotaged["lying-usage"]  # every reply lied, none was retried
    assert {call["cached_prompt_tokens"] for call in calls} == {None}
    assert all(call["prompt_tokens"] > 0 and call["attempts"] == 1 for call in calls)


def test_the_file_exchange_stand_in_reports_the_prefix_cache_and_the_reader_keeps_it():
    """The output file the simulator writes for the file-exchange mode (as ``vllm run-batch`` would),
    read by the batch transport's own line reader."""
    from madeval.llm.batch.lines import read_outcomes

    server = SimulatorServer(words, prefix_cache_tokens=64, block_tokens=4)
    lines = [{"custom_id": f"c{i}", "method": "POST", "url": "/v1/chat/completions", "body": chat_body(P1)}
             for i in range(2)]
    content = server.batches.answer_file("".join(json.dumps(x) + "\n" for x in lines).encode())
    outcomes = read_outcomes(content, 1 << 20, "completed")
    assert [(tuple(outcomes[c]), outcomes[c].cached_prompt_tokens) for c in ("c0", "c1")] == \
        [(("ok", 8, 1), 0), (("ok", 8, 1), 8)]
