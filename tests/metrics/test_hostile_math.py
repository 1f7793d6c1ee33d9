"""Hostile math replies: scoring is bounded in time and memory and never blocks the event loop.

The math checker (:mod:`madeval.metrics.checker`) runs math-verify in a killable worker process;
these tests give it a 1 s deadline. A reply that cannot be decided in time scores 0 and its
record says why (``scoring_errors``); the run, and every other debate in it, goes on.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from helpers import run_quietly, settings_for
from madeval.core.item import Item
from madeval.core.plugins import registries
from madeval.metrics import checker
from madeval.metrics.notes import collecting_scoring_errors
from madeval.settings.config import RunSettings
from madeval.simulator import GoldIndex, SyntheticAgents
from madeval.simulator.http import SimulatorServer, run_in_thread
from madeval.task.definition import load_tasks

DEADLINE_S = 1.0
SLACK_S = 6.0  # a replaced worker's start-up on a loaded 2-core machine, not part of the deadline
SLOW_REPLIES = [  # each kept sympy busy for more than 25 s on the event loop (issue 12)
    ("So the answer is $\\boxed{(x+1)^{9999}}$.", "2"),
    ("So the answer is $\\boxed{\\sum_{n=1}^{10^{6}} n^{n}}$.", "5"),
]
HUGE_REPLIES = ["\\boxed{9^{9^{9^9}}}", "\\boxed{10**10**10}", "\\boxed{10^{10^{10}}}"]


@pytest.fixture
def short_deadline():
    """The checker with a 1 s deadline and one worker; the defaults again afterwards."""
    defaults = checker.configure(deadline_s=DEADLINE_S, workers=1)
    yield
    checker.configure(**defaults)


def _rss_bytes() -> int:
    with open("/proc/self/statm") as handle:
        return int(handle.read().split()[1]) * 4096


@pytest.mark.parametrize(("reply", "gold"), SLOW_REPLIES)
def test_hostile_math_reply_scores_zero_with_a_reason_within_the_deadline(short_deadline, reply, gold):
    extract = registries().extractors.create("boxed")
    metric = registries().metrics.create("math_equivalence")
    started = time.perf_counter()
    with collecting_scoring_errors() as errors:
        score = metric.score(extract(reply, None), Item("m", "q", gold))
    elapsed = time.perf_counter() - started
    assert score == 0.0
    assert len(errors) == 1 and f"exceeded {DEADLINE_S:g} s" in errors[0], errors
    assert elapsed < DEADLINE_S + SLACK_S, elapsed
    started = time.perf_counter()  # the same answer again: known undecidable, no second deadline
    with collecting_scoring_errors() as again:
        assert metric.score(extract(reply, None), Item("m", "q", "7")) == 0.0
    assert time.perf_counter() - started < DEADLINE_S  # no second deadline was paid
    assert len(again) == 1 and f"exceeded {DEADLINE_S:g} s" in again[0] and again[0].endswith("vs '7'")
    assert metric.score("\\frac{1}{2}", Item("m", "q", "0.5")) == 1.0  # a new worker took over


def test_hostile_math_memory_blowup_is_bounded(short_deadline):
    checker.configure(memory_bytes=768 << 20)
    assert checker.worker_status()["memory_limit"] == 768 << 20  # the worker runs under the cap
    before = _rss_bytes()
    extract = registries().extractors.create("boxed")
    for reply in HUGE_REPLIES:
        started = time.perf_counter()
        with collecting_scoring_errors() as errors:
            assert checker.math_equivalent(extract(reply, None), "3") is False
        assert time.perf_counter() - started < DEADLINE_S + SLACK_S
        assert errors and "math check" in errors[0], (reply, errors)
    assert _rss_bytes() - before < 50 << 20  # nothing was computed in this process


class _HostileAgents:
    """The simulator's agents, except that model ``hostile`` always answers a slow math reply."""

    def __init__(self, agents: SyntheticAgents):
        self.agents = agents

    def __call__(self, request):
        if request.get("model") == "hostile":
            return "I computed it.\nFINAL SOLUTION: $\\boxed{(x+1)^{9999}}$", 20, 20
        return self.agents(request)


def test_hostile_math_reply_does_not_block_the_run(short_deadline, tmp_path, monkeypatch):
    """One agent answers hostile math in every debate: the run finishes, the loop keeps ticking
    while the checker works, and every record says which score could not be decided."""
    tasks = load_tasks(RunSettings(tasks=["math500"]), registries())
    agents = SyntheticAgents(GoldIndex.from_tasks(tasks.values()), seed=0)
    gaps: list[float] = []

    import madeval.run.engine as run_module

    real_execute = run_module.execute

    async def execute_with_ticker(*args, **kwargs):
        async def tick():
            loop = asyncio.get_running_loop()
            last = loop.time()
            while True:
                await asyncio.sleep(0.01)
                gaps.append(loop.time() - last)
                last = loop.time()

        ticker = asyncio.create_task(tick())
        try:
            return await real_execute(*args, **kwargs)
        finally:
            ticker.cancel()

    monkeypatch.setattr(run_module, "execute", execute_with_ticker)
    with run_in_thread(SimulatorServer(_HostileAgents(agents), models=["hostile"])) as server:
        settings = settings_for(server.base_url, tmp_path, tasks=["math500"], limit=4, cache="off",
                                agent_models=["hostile", "simulator", "simulator"], max_turns=2)
        started = time.perf_counter()
        result, _ = run_quietly(settings)
        elapsed = time.perf_counter() - started
    records = [json.loads(line) for line in (tmp_path / "run" / "records.jsonl").read_text().splitlines()]
    assert len(records) == 4 and result.outcome.failed == 0
    for record in records:  # the hostile answer is in every debate (entropy, gold likelihood)
        assert any("(x+1)^{9999}" in reason and "exceeded" in reason for reason in record["scoring_errors"])
    # The checker never held the event loop: a check on the loop would stall it for its whole
    # deadline (the old checker: minutes); below that is scheduling noise on a loaded machine.
    assert max(gaps) < DEADLINE_S, max(gaps)
    assert elapsed < 4 * (DEADLINE_S + SLACK_S)  # each hostile answer costs its deadline at most once


def test_hostile_math_extraction_is_linear_in_the_reply_length():
    """A 4 MB reply of repeated "Final Answer:" markers: the math extractors read it on the event
    loop, so they must stay linear (copying the rest of the reply per marker took 24 s)."""
    extract = registries().extractors.create("final_expression")
    reply = "Final Answer: " * (4_000_000 // 14)
    started = time.perf_counter()
    assert extract(reply + "Final Answer: 42", None) == "42"
    assert time.perf_counter() - started < 5.0

