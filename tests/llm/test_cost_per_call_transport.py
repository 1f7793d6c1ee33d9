"""A run started through the ordinary transport, killed, and resumed with ``--transport batch``: each
call is priced at its own transport's prices (not the whole run at run.json's last one), and the prompt
tokens the simulator's prefix cache served are priced at ``cached_input``. Priced by hand from the
records' own numbers, on loopback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from helpers import run_quietly
from madeval.leaderboard import LeaderboardOptions, build_leaderboard
from madeval.leaderboard.render import markdown
from madeval.settings.config import DebateConfig, RunSettings
from madeval.simulator.agents import AgentProfile, SyntheticAgents
from madeval.simulator.batches import BatchOptions
from madeval.simulator.http import SimulatorServer, run_in_thread
from madeval.simulator.truth import GoldIndex

# dollars per million tokens; batch calls at half price
INPUT, CACHED, OUTPUT, DISCOUNT = 2.0, 0.5, 8.0, 0.5
PRICES = f"simulator: {{input: {INPUT}, output: {OUTPUT}, cached_input: {CACHED}, batch_discount: {DISCOUNT}}}\n"
MEMORY = DebateConfig(paradigm="memory", agents=3, max_turns=3, decider="simple_voting")


def by_hand(call: dict) -> float:
    """One call's dollars: uncached prompt, cached prompt and completion tokens at their prices, halved
    when it went through the batch API; a response-cache hit is free."""
    if call["cached"]:
        return 0.0
    cached = call["cached_prompt_tokens"] or 0
    dollars = ((call["prompt_tokens"] - cached) * INPUT + cached * CACHED + call["completion_tokens"] * OUTPUT) / 1e6
    return dollars * (1 - DISCOUNT) if call["transport"] == "batch" else dollars


@pytest.fixture
def slow_sim(generated_tasks):
    """A simulator with a prefix cache, chat replies 40 ms late (so a run can be killed midway), and
    batches done 50 ms after they are created."""
    agents = SyntheticAgents(GoldIndex.from_tasks(generated_tasks.values()), default=AgentProfile(0.6, 0.3, 0.0, 0.0),
                             seed=0)
    with run_in_thread(SimulatorServer(agents, latency_s=0.04, prefix_cache_tokens=1_000_000,
                                       batch_options=BatchOptions(completion_delay_s=0.05))) as server:
        yield server


def kill_after_records(command: list[str], records, count: int) -> None:
    """Start ``command`` and SIGKILL it once ``records`` holds ``count`` lines (within 60 s)."""
    process = subprocess.Popen(command, env={**os.environ, "MADEVAL_LOAD_PLUGINS": ""},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and process.poll() is None:
        if records.exists() and records.read_text().count("\n") >= count:
            break
        time.sleep(0.02)
    process.kill()
    process.wait()


def test_a_run_resumed_under_the_batch_transport_prices_each_call_at_its_own(slow_sim, tmp_path):
    folder = tmp_path / "run"
    command = [sys.executable, "-m", "madeval", "--tasks", "arith_mc", "--limit", "6", "--cache", "off",
               "--base-url", slow_sim.base_url, "--paradigm", "memory", "--max-turns", "3",
               "--decider", "simple_voting", "--concurrency", "1", "--output-path", str(folder)]
    kill_after_records(command, folder / "records.jsonl", 2)
    before = (folder / "records.jsonl").read_text().count("\n")
    assert 2 <= before < 6, "the first run was not killed midway"
    run_quietly(RunSettings(base_url=slow_sim.base_url, configurations=[MEMORY], output_path=str(folder),
                            tasks=["arith_mc"], limit=6, cache="off", transport="batch",
                            batch_options={"flush_s": 0.05, "poll_s": 0.02}))
    rows = [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]
    calls = [call for row in rows for call in row["transcript"]["calls"]]
    assert len(rows) == 6
    transports = {call["transport"] for call in calls}
    assert transports == {"aiohttp", "batch"}
    # the prefix cache answered part of most prompts (every later turn repeats the debate so far), in
    # both transports, and never more than the prompt
    assert all(call["cached_prompt_tokens"] is not None for call in calls)
    assert all(0 <= call["cached_prompt_tokens"] <= call["prompt_tokens"] for call in calls)
    assert {call["transport"] for call in calls if call["cached_prompt_tokens"]} == {"aiohttp", "batch"}

    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    board = build_leaderboard(folder, LeaderboardOptions(prices=str(prices)))
    (row,) = board["rows"]
    total = sum(by_hand(call) for call in calls)
    assert row["cost_total"] == pytest.approx(total, rel=1e-12)
    # what pricing the whole run at one transport would have said (run.json keeps the first run's)
    assert sum(by_hand({**call, "transport": "batch"}) for call in calls) < total
    assert sum(by_hand({**call, "transport": "aiohttp"}) for call in calls) > total
    assert board["prices"]["at"] == "list and batch" and board["prices"]["cached_at_input"] == []
    assert board["prices"]["cached_unreported"] == []  # the prefix cache said, in both transports
    assert "batch prices for the calls that went through --transport batch" in markdown(board)


def test_without_a_cached_input_price_cached_tokens_are_at_input_and_the_note_says_so(slow_sim, tmp_path):
    folder = tmp_path / "run"
    run_quietly(RunSettings(base_url=slow_sim.base_url, configurations=[MEMORY], output_path=str(folder),
                            tasks=["arith_mc"], limit=2, cache="off", concurrency=256))
    calls = [call for line in (folder / "records.jsonl").read_text().splitlines()
             for call in json.loads(line)["transcript"]["calls"]]
    assert sum(call["cached_prompt_tokens"] for call in calls) > 0
    prices = tmp_path / "prices.yaml"
    prices.write_text(f"simulator: {{input: {INPUT}, output: {OUTPUT}}}\n")
    board = build_leaderboard(folder, LeaderboardOptions(prices=str(prices)))
    (row,) = board["rows"]
    # every prompt token at the input price, as if nothing were cached
    assert row["cost_total"] == pytest.approx(
        sum(call["prompt_tokens"] * INPUT + call["completion_tokens"] * OUTPUT for call in calls) / 1e6, rel=1e-12)
    assert board["prices"]["cached_at_input"] == ["simulator"]
    assert "Cached input was not priced separately for simulator" in markdown(board)


def test_a_provider_that_never_says_its_cached_tokens_is_named_once_under_the_board(generated_tasks, tmp_path):
    """A simulator without a prefix cache sends no prompt_tokens_details (as vLLM without
    --enable-prompt-tokens-details): every call records None, the model is priced with a cached_input,
    so the board's note names it once and every prompt token is at the input price."""
    agents = SyntheticAgents(GoldIndex.from_tasks(generated_tasks.values()), default=AgentProfile(0.6, 0.3, 0.0, 0.0),
                             seed=0)
    folder = tmp_path / "run"
    with run_in_thread(SimulatorServer(agents)) as server:
        run_quietly(RunSettings(base_url=server.base_url, configurations=[MEMORY], output_path=str(folder),
                                tasks=["arith_mc"], limit=2, cache="off", concurrency=256))
    calls = [call for line in (folder / "records.jsonl").read_text().splitlines()
             for call in json.loads(line)["transcript"]["calls"]]
    assert calls and all(call["cached_prompt_tokens"] is None for call in calls)
    prices = tmp_path / "prices.yaml"
    prices.write_text(PRICES)
    board = build_leaderboard(folder, LeaderboardOptions(prices=str(prices)))
    (row,) = board["rows"]
    assert row["cost_total"] == pytest.approx(
        sum(call["prompt_tokens"] * INPUT + call["completion_tokens"] * OUTPUT for call in calls) / 1e6, rel=1e-12)
    assert board["prices"]["cached_unreported"] == ["simulator"] and board["prices"]["cached_at_input"] == []
    assert markdown(board).count("The provider never said how many prompt tokens it served from its cache "
                                 "for simulator") == 1
