"""Single flight (madeval.llm.shared): within a run, an identical request is made once, and a failure
is its asker's alone. Against the simulator on a loopback port, whose request counter is the truth."""

from __future__ import annotations

import asyncio

import pytest

from madeval.errors import LLMError
from madeval.llm.client import Endpoint, LLMClient, RetryPolicy
from madeval.llm.shared import Asker, SharedCalls
from madeval.simulator import Faults, simulate

QUESTION = [{"role": "user", "content": "Is the sky blue? Answer yes or no."}]
PARAMS = {"temperature": 1.0, "seed": 17}
SCOPE = ("item-1", 0, 0, 1, "draft", 0)
A, B, C = (Asker('["t", "item-1", 0]', f'["{name}", "t", "item-1", 0]') for name in ("c1", "c2", "c3"))


def client_for(base_url: str, attempts: int = 3) -> LLMClient:
    return LLMClient({"e": Endpoint("e", base_url)}, sharing=SharedCalls(),
                     retry=RetryPolicy(max_attempts=attempts, base_delay_s=0.0))


async def ask(client: LLMClient, asker: Asker, messages=QUESTION, params=PARAMS, model="m", scope=SCOPE):
    return await client.complete("e", model, messages, params, scope, asker=asker)


def against(sim, test, attempts: int = 3):
    """``test(client)`` run with a sharing client of ``sim`` (closed after)."""

    async def body():
        client = client_for(sim.base_url, attempts)
        try:
            return await test(client)
        finally:
            await client.aclose()

    return asyncio.run(body())


def test_an_identical_request_in_flight_is_made_once_and_both_askers_get_its_reply():
    async def both(client):
        return await asyncio.gather(ask(client, A), ask(client, B)), client.stats

    with simulate(latency_s=0.2, unknown="answer") as sim:
        (first, second), stats = against(sim, both)
        assert sim.server.stats.requests == 1
    assert first.text == second.text and first.text
    assert (first.shared_from, second.shared_from) == (None, A.name)
    # the reused call keeps what the call cost: a configuration costs the same shared or not
    assert (second.prompt_tokens, second.completion_tokens) == (first.prompt_tokens, first.completion_tokens) != (0, 0)
    assert (stats.calls, stats.shared) == (1, 1)


def test_a_request_asked_after_its_reply_came_back_is_not_made_again():
    async def one_then_two(client):
        first = await ask(client, A)
        return first, await ask(client, B), await ask(client, C)

    with simulate(unknown="answer") as sim:
        first, second, third = against(sim, one_then_two)
        assert sim.server.stats.requests == 1
    assert first.text == second.text == third.text
    assert second.shared_from == third.shared_from == A.name


@pytest.mark.parametrize("differs", [
    {"messages": [{"role": "user", "content": "Is the sky green? Answer yes or no."}]},
    {"params": {"temperature": 1.0, "seed": 18}},
    {"params": {"temperature": 0.7, "seed": 17}},
    {"params": {**PARAMS, "response_format": {"type": "json_object"}}},
    {"model": "other"},
    {"scope": ("item-1", 0, 0, 2, "draft", 0)},
], ids=["messages", "seed", "temperature", "response-format", "model", "turn"])
def test_a_request_that_differs_in_anything_that_can_change_the_reply_is_made(differs):
    async def two(client):
        return await ask(client, A), await ask(client, B, **differs)

    with simulate(unknown="answer") as sim:
        first, second = against(sim, two)
        assert sim.server.stats.requests == 2
    assert second.shared_from is None


def test_requests_of_another_group_are_not_shared_and_a_forgotten_group_asks_again():
    other_item = Asker('["t", "item-2", 0]', '["c2", "t", "item-2", 0]')

    async def across(client):
        await ask(client, A)
        elsewhere = await ask(client, other_item)
        client.sharing.forget(A.group)
        return elsewhere, await ask(client, B)

    with simulate(unknown="answer") as sim:
        elsewhere, after_forget = against(sim, across)
        assert sim.server.stats.requests == 3
    assert elsewhere.shared_from is None and after_forget.shared_from is None


def test_a_failure_is_not_given_to_the_waiting_asker_it_makes_the_request_itself():
    """The first asker's call fails for good; the second, which waited for it, is not handed that
    failure: it makes the request itself (a second request at the server), as it would alone."""

    async def both(client):
        return await asyncio.gather(ask(client, A), ask(client, B), return_exceptions=True), client.sharing

    with simulate(latency_s=0.1, unknown="answer", faults=Faults(server_error=1.0)) as sim:
        (first, second), sharing = against(sim, both, 1)
        assert sim.server.stats.requests == 2
    assert isinstance(first, LLMError) and isinstance(second, LLMError)
    assert (sharing.made, sharing.reused, sharing.groups()) == (0, 0, 0)  # nothing kept to reuse


def test_when_the_first_askers_debate_is_cancelled_the_waiting_one_gets_its_own_reply():
    async def cancelled_maker(client):
        maker = asyncio.create_task(ask(client, A))
        await asyncio.sleep(0.05)  # the maker's request is in flight
        waiter = asyncio.create_task(ask(client, B))
        await asyncio.sleep(0.05)
        assert client.sharing.waiting == 1
        maker.cancel()
        reply = await waiter
        with pytest.raises(asyncio.CancelledError):
            await maker
        return reply

    with simulate(latency_s=0.3, unknown="answer") as sim:
        reply = against(sim, cancelled_maker)
        assert sim.server.stats.requests == 2
    assert reply.text and reply.shared_from is None  # made for it, not borrowed


def test_a_cancelled_waiter_leaves_the_request_in_flight_for_the_others():
    async def cancelled_waiter(client):
        maker = asyncio.create_task(ask(client, A))
        await asyncio.sleep(0.05)
        waiter, other = asyncio.create_task(ask(client, B)), asyncio.create_task(ask(client, C))
        await asyncio.sleep(0.05)
        waiter.cancel()
        first, third = await maker, await other
        return first, third, client.sharing.waiting

    with simulate(latency_s=0.3, unknown="answer") as sim:
        first, third, waiting = against(sim, cancelled_waiter)
        assert sim.server.stats.requests == 1
    assert third.text == first.text and third.shared_from == A.name and waiting == 0


def test_an_askers_own_earlier_reply_is_its_own_call():
    """A debate asked again after it was cut short (a resumed unit) reads its own reply back: the
    call counts as made for it, not as shared."""

    async def again(client):
        first = await ask(client, A)
        return first, await ask(client, A), client.stats

    with simulate(unknown="answer") as sim:
        first, second, stats = against(sim, again)
        assert sim.server.stats.requests == 1
    assert second.text == first.text and second.shared_from is None and stats.shared == 0


def test_without_an_asker_or_with_sharing_off_every_call_is_made():
    async def plain(client):
        await client.complete("e", "m", QUESTION, PARAMS, SCOPE)
        await client.complete("e", "m", QUESTION, PARAMS, SCOPE)
        client.sharing = None
        await ask(client, A)
        await ask(client, B)

    with simulate(unknown="answer") as sim:
        against(sim, plain)
        assert sim.server.stats.requests == 4
