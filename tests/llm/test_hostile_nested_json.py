"""Deeply nested JSON from the endpoint (issue 25, item 6): 400 KB of ``[[[...]]]``, far under the
size cap, far past a recursive parser's depth. At the start-up check it is one line; as a chat
reply it is a malformed reply, retried; as the body of a 400 it is that 400, not retried."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from helpers import run_quietly, settings_for
from madeval.simulator.agents import SyntheticAgents
from madeval.simulator.hostile import NESTED_JSON, HostileServer
from madeval.simulator.http import run_in_thread
from madeval.simulator.truth import GoldIndex


@pytest.fixture(scope="module")
def agents(generated_tasks):
    return SyntheticAgents(GoldIndex.from_tasks([generated_tasks["arith_mc"]]), seed=0)


def test_hostile_nested_body_is_deeper_than_the_parser_goes():
    assert len(NESTED_JSON) == 400_000
    with pytest.raises(RecursionError):
        json.loads(NESTED_JSON)


@pytest.mark.parametrize("transport", ["aiohttp", "openai"])
def test_hostile_nested_model_list_at_startup_is_one_line(agents, tmp_path, transport):
    server = HostileServer(agents, ["nested-json"], rate=0.0, nested_models=True)
    with run_in_thread(server):
        result = subprocess.run(
            [sys.executable, "-m", "madeval", "--tasks", "arith_mc", "--limit", "1", "--base-url", server.base_url,
             "--transport", transport, "--output-path", "out", "--cache", "off", "--no-progress"],
            cwd=tmp_path, capture_output=True, text=True, timeout=120,
            env={**os.environ, "MADEVAL_LOAD_PLUGINS": ""})
    assert result.returncode == 2, result.stderr[-3000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("madeval: error: "), result.stderr[-3000:]
    assert "serves no listed models; choose one with --model" in lines[0]
    assert not (tmp_path / "out").exists()


def test_hostile_nested_model_list_with_model_given_runs(agents, tmp_path):
    """A model list that cannot be read gets the benefit of the doubt, as one that is missing."""
    server = HostileServer(agents, ["nested-json"], rate=0.0, nested_models=True)
    with run_in_thread(server):
        result, _ = run_quietly(settings_for(server.base_url, tmp_path, limit=2, cache="off", model="simulator"))
    assert (result.outcome.finished, result.outcome.failed) == (2, 0)


@pytest.mark.parametrize("transport", ["aiohttp", "openai"])
def test_hostile_nested_chat_reply_is_a_retried_fault(agents, tmp_path, transport):
    server = HostileServer(agents, ["nested-json"], rate=0.3, seed=3)
    with run_in_thread(server):
        result, _ = run_quietly(settings_for(server.base_url, tmp_path, limit=4, cache="off", model="simulator",
                                             max_attempts=3, retry_delay=0.0, transport=transport))
    sabotaged = server.stats.sabotaged.get("nested-json", 0)
    errors = [json.loads(line)["error"] for line in (tmp_path / "run" / "errors.jsonl").read_text().splitlines()]
    assert sabotaged and result.outcome.failed == len(errors) >= 1
    # a sabotaged request is sabotaged again on every retry: each failed unit tried it 3 times
    assert all("gave up after 3 attempts" in e and "JSON nested too deeply" in e for e in errors), errors
    assert result.outcome.finished + result.outcome.failed == 4


def test_hostile_nested_400_reads_as_the_400_it_is(agents, tmp_path):
    server = HostileServer(agents, ["nested-400"], rate=0.3, seed=3)
    with run_in_thread(server):
        result, _ = run_quietly(settings_for(server.base_url, tmp_path, limit=4, cache="off", model="simulator",
                                             max_attempts=3, retry_delay=0.0))
    errors = [json.loads(line)["error"] for line in (tmp_path / "run" / "errors.jsonl").read_text().splitlines()]
    assert result.outcome.failed == len(errors) >= 1
    assert all("HTTP 400: [[[[" in e and "(not retried)" in e and len(e) < 400 for e in errors), errors
