"""Concurrency limits of the LLM client: per-endpoint slots are taken before global ones."""

from __future__ import annotations

import asyncio

from madeval.llm.client import Endpoint, LLMClient, RetryPolicy
from madeval.simulator import simulate


def ask(i: int) -> list[dict[str, str]]:
    return [{"role": "user", "content": f"Question {i}: is this a question?"}]


async def slow_and_fast(slow_sim, fast_sim) -> tuple[int, int, int]:
    """Queue three calls on a slow endpoint (one slot), then four on a fast one (two slots),
    with three global slots. Returns (fast calls done, slow calls done, fast requests served)."""
    client = LLMClient(
        {
            "slow": Endpoint("slow", slow_sim.base_url, concurrency=1),
            "fast": Endpoint("fast", fast_sim.base_url, concurrency=2),
        },
        concurrency=3,
        retry=RetryPolicy(max_attempts=1),
    )
    slow = [asyncio.create_task(client.complete("slow", "m", ask(i), {}, ("slow", i))) for i in range(3)]
    fast: list[asyncio.Task] = []
    try:
        # The first slow call is at the server; the other two were started with it and now
        # wait for the slow endpoint's only slot.
        while slow_sim.server.stats.in_flight < 1:
            await asyncio.sleep(0.01)
        fast += [asyncio.create_task(client.complete("fast", "m", ask(i), {}, ("fast", i))) for i in range(4)]
        # Not a speed limit: the slow endpoint answers only after a minute, so if the queued slow
        # calls held the global slots, no fast call could finish before this bound.
        done, _ = await asyncio.wait(fast, timeout=30)
        return len(done), sum(t.done() for t in slow), fast_sim.server.stats.requests
    finally:
        for task in slow + fast:
            task.cancel()
        await asyncio.gather(*slow, *fast, return_exceptions=True)
        await client.aclose()


def test_a_slow_endpoint_does_not_starve_a_fast_one():
    with simulate(latency_s=60.0) as slow_sim, simulate() as fast_sim:
        fast_done, slow_done, fast_requests = asyncio.run(slow_and_fast(slow_sim, fast_sim))
    # Every fast call finished while the first slow call was still at the server.
    assert (fast_done, slow_done, fast_requests) == (4, 0, 4)


def test_per_endpoint_limits_from_settings():
    from madeval.run.engine import endpoints_for
    from madeval.settings.config import RunSettings

    settings = RunSettings(base_url="http://127.0.0.1:9/v1", endpoints={"b": "http://127.0.0.1:9/v1"},
                           concurrency=10, endpoint_concurrency={"b": 2})
    with endpoints_for(settings) as (table, _model):
        assert (table["default"].concurrency, table["b"].concurrency) == (10, 2)
    settings.endpoint_concurrency = 3
    with endpoints_for(settings) as (table, _model):
        assert (table["default"].concurrency, table["b"].concurrency) == (3, 3)
