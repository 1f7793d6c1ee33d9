"""Faults at the endpoint are retried within bounds and never lose or duplicate a unit."""

from __future__ import annotations

from collections import Counter

import pytest

from helpers import run_quietly, settings_for
from madeval.records.folder import read_records
from madeval.simulator import Faults, simulate


@pytest.mark.parametrize("transport", ["aiohttp", "openai"])
def test_faults_every_unit_recorded_exactly_once(generated_tasks, tmp_path, transport):
    faults = Faults(rate_limit=0.10, server_error=0.10, timeout=0.05, hang_s=5.0, seed=7)
    with simulate(tasks=generated_tasks.values(), faults=faults) as sim:
        settings = settings_for(
            sim.base_url, tmp_path, limit=30, repeats=2, timeout=0.1, max_attempts=10,
            transport=transport, cache="off", retry_delay=0.01,
        )
        result, _ = run_quietly(settings)
        injected = sim.server.stats.faults
    assert result.outcome.failed == 0
    records = list(read_records(result.folder))
    keys = Counter(r["unit"]["key"] for r in records)
    assert len(keys) == 60 and set(keys.values()) == {1}
    # The faults really happened and were retried: the calls record their failed attempts.
    assert injected.get("rate_limit", 0) > 0 and injected.get("server_error", 0) > 0 and injected.get("timeout", 0) > 0
    attempts = [c for r in records for c in r["transcript"]["calls"]]
    retried = [c for c in attempts if c["attempts"] > 1]
    assert retried and all(len(c["errors"]) == c["attempts"] - 1 for c in retried)
    reasons = {e.split(":")[0] for c in retried for e in c["errors"]}
    assert {"HTTP 429", "HTTP 500", "timeout"} <= reasons


def test_faults_garbage_replies_are_retried_then_recorded(generated_tasks, tmp_path):
    faults = Faults(empty=0.2, malformed=0.2, seed=3)
    # 40% garbage: with 16 attempts a call fails for good with probability 0.4**16 (4e-7), so a
    # lost unit here is a bug, not bad luck (8 attempts gave 7e-4 per call: flaky under load).
    with simulate(tasks=generated_tasks.values(), faults=faults) as sim:
        settings = settings_for(sim.base_url, tmp_path, limit=20, cache="off", retry_delay=0.01, max_attempts=16)
        result, _ = run_quietly(settings)
    records = list(read_records(result.folder))
    assert len(records) == 20 and result.outcome.failed == 0
    errors = {e for r in records for c in r["transcript"]["calls"] for e in c["errors"]}
    assert "empty reply" in errors and any(e.startswith("malformed reply") for e in errors)


def test_faults_exhausted_retries_fail_the_unit_not_the_run(generated_tasks, tmp_path):
    with simulate(tasks=generated_tasks.values(), faults=Faults(server_error=1.0)) as sim:
        settings = settings_for(sim.base_url, tmp_path, limit=3, max_attempts=2, cache="off", retry_delay=0.01)
        result, printed = run_quietly(settings)
    assert result.outcome.failed == 3 and result.outcome.finished == 0
    lines = (result.folder / "errors.jsonl").read_text().splitlines()
    assert len(lines) == 3 and "gave up after 2 attempts (HTTP 500, HTTP 500)" in lines[0]
    assert "3 failed" in printed


def test_faults_empty_last_reply_is_not_cached(tmp_path):
    import asyncio

    from madeval.llm.cache import ResponseCache
    from madeval.llm.client import Endpoint, LLMClient, RetryPolicy

    messages = [{"role": "user", "content": "Is the sky blue?"}]

    async def twice(base_url, cache):
        client = LLMClient({"e": Endpoint("e", base_url)}, cache=cache,
                           retry=RetryPolicy(max_attempts=2, base_delay_s=0.0))
        try:
            return [await client.complete("e", "m", messages, {}, ("unit", 0)) for _ in range(2)]
        finally:
            await client.aclose()

    cache = ResponseCache(tmp_path / "responses.sqlite")
    with simulate(faults=Faults(empty=1.0)) as sim:
        first, second = asyncio.run(twice(sim.base_url, cache))
        asked = sim.server.stats.requests
    # The last attempt's empty reply is returned (and recorded) but not stored: asked again, it is retried.
    assert first.text == "" and first.errors == ["empty reply", "empty reply"]
    assert not second.cached and asked == 4 and len(cache) == 0
    with simulate() as sim:
        first, second = asyncio.run(twice(sim.base_url, cache))
    assert first.text and not first.cached and second.cached and len(cache) == 1
    cache.close()


def test_hostile_url_credentials_are_used_and_never_written_or_printed(generated_tasks, tmp_path, capsys):
    """``http://user:pw@host/v1?api-key=...`` works (Basic auth from the user info, the query on
    every request) and neither secret reaches the run folder, the cache or the terminal, even
    with faults recorded on the way."""
    url_secrets = ("hunter2-pw", "sekret-query")
    with simulate(tasks=generated_tasks.values(), faults=Faults(server_error=0.2, seed=5)) as sim:
        port = sim.base_url.split(":")[2].split("/")[0]
        url = f"http://alice:{url_secrets[0]}@127.0.0.1:{port}/v1?api-key={url_secrets[1]}"
        cache = tmp_path / "cache.sqlite"
        settings = settings_for(url, tmp_path, limit=4, cache=str(cache), retry_delay=0.01, max_attempts=10)
        result, printed = run_quietly(settings)
    assert result.outcome.failed == 0 and result.outcome.finished == 4
    records = list(read_records(result.folder))
    # every call went through on the first attempt or after a 500: none for a client-side error
    reasons = {e for r in records for c in r["transcript"]["calls"] for e in c["errors"]}
    assert reasons <= {"HTTP 500"}
    import json

    run_json = json.loads((result.folder / "run.json").read_text())
    assert run_json["settings"]["base_url"] == f"http://127.0.0.1:{port}/v1"
    shown = printed + "".join(capsys.readouterr())
    files = [p for p in [*result.folder.rglob("*"), *tmp_path.glob("cache.sqlite*")] if p.is_file()]
    assert len(files) > 3
    for secret in url_secrets:
        assert secret not in shown
        for path in files:
            assert secret.encode() not in path.read_bytes(), path


def test_hostile_client_side_error_fails_the_call_once_not_eight_times():
    """A request the HTTP client refuses to send cannot change on retry: one attempt, no request."""
    import asyncio

    from madeval.errors import LLMError
    from madeval.llm.client import Endpoint, LLMClient, RetryPolicy

    async def ask(base_url):
        client = LLMClient({"e": Endpoint("e", base_url, api_key="sk-abcd\nX-Injected: yes")},
                           retry=RetryPolicy(max_attempts=8, base_delay_s=0.0))
        try:
            await client.complete("e", "m", [{"role": "user", "content": "hi"}], {}, ("unit", 0))
        finally:
            await client.aclose()

    with simulate() as sim:
        with pytest.raises(LLMError, match=r"^e: invalid request: .*\(not retried\)$"):
            asyncio.run(ask(sim.base_url))
        assert sim.server.stats.requests == 0
