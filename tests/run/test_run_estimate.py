"""A run that cannot finish soon is estimated and asked about before its first debate (issue 24, item 4)."""

from __future__ import annotations

import asyncio
import re
import subprocess
import sys
from types import SimpleNamespace

import pytest

from madeval import UsageError
from madeval.debate.session import ModelRef
from madeval.llm.client import Endpoint, LLMClient
from madeval.llm.probe import Speed
from madeval.records.unit import Unit
from madeval.settings.config import build_settings
from madeval.simulator import simulate


def test_a_long_run_without_a_terminal_or_yes_is_refused_in_one_line(generated_tasks, tmp_path):
    """10 items x 300 repeats x 3 agents: at least 9,000 calls, one at a time, each 0.05 s and 2 ms for
    each of its up to 1,024 reply tokens (2.1 s): over 5 hours. Before, the probe's reply of one token
    said 0.05 s a call, 8 minutes in all, and the run started."""
    with simulate(tasks=generated_tasks.values(), latency_s=0.05, decode_s_per_token=0.002) as sim:
        # a process of its own: the probes' timing, shared with this process's simulator thread, would be noisier
        ended = subprocess.run(
            [sys.executable, "-m", "madeval", "--tasks", "arith_mc", "--limit", "10", "--repeats", "300",
             "--concurrency", "1", "--base-url", sim.base_url, "-o", "out", "--no-progress"],
            cwd=tmp_path, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
        requests = sim.server.stats.requests
    assert ended.returncode == 2, ended.stderr
    (line,) = ended.stderr.strip().splitlines()
    # 9,000 calls at the probes' measured seconds a call, one in flight: the hours follow from the
    # seconds the line reports
    found = re.match(r"madeval: error: this run makes at least 9,000 calls \(up to 102,000\) and takes (\d+\.\d) "
                     r"hours or more when replies run to max_tokens \((\d+\.\d\d) s a call of 1024 reply tokens: "
                     r"(\d+\.\d\d) s plus (\d+\.\d) ms a token, measured by probe calls; 1 in flight at once\)",
                     line)
    assert found, line
    hours, per_call, before, per_token = (float(found.group(i)) for i in range(1, 5))
    # 0.05 s + 1,024 x 2 ms = 2.098 s; the machine's own delays move the two probes by milliseconds
    assert 1.5 < per_call < 3 and per_token == pytest.approx(2.0, abs=0.5) and before < 0.2, line
    assert abs(hours - 9000 * per_call / 3600) <= 0.05 + 9000 * 0.005 / 3600, line
    assert "limit it with --limit N or --sample N, or pass --yes (yes: true in a config file)" in line
    assert requests == 3 and not (tmp_path / "out").exists()  # three probe calls, nothing written


def plan_of(items: int, repeats: int, agents: int = 3, max_turns: int = 10, endpoint: str = "e"):
    """The parts of a plan the estimate reads (its calls depend on nothing else), with the units
    a resumed folder's keys are looked up in."""
    config = SimpleNamespace(agents=agents, max_turns=max_turns)
    model = ModelRef("simulator", endpoint)
    planned = SimpleNamespace(config=config, agent_models=[model] * agents, judge_model=model)
    units = [Unit("c", "t", str(item), repeat) for item in range(items) for repeat in range(repeats)]
    return SimpleNamespace(settings=SimpleNamespace(repeats=repeats), items={"t": [None] * items},
                           configs={"c": planned}, units=lambda: iter(units))


def estimate(sim, plan, concurrency=1, yes=False, ask=None, done=(), max_tokens=1024, always=False):
    from madeval.run.estimate import confirm_long_run

    async def main():
        client = LLMClient({"e": Endpoint("e", sim.base_url, concurrency=concurrency, always_estimated=always)})
        try:
            return await confirm_long_run(plan, client, client.endpoints,
                                          SimpleNamespace(calls_in_flight=lambda: concurrency, yes=yes,
                                                          generation=lambda: {"max_tokens": max_tokens}),
                                          ask=ask, done=done)
        finally:
            await client.aclose()

    return asyncio.run(main())


def test_yes_or_a_yes_answer_starts_it_and_a_short_run_is_never_probed(generated_tasks, capsys):
    from madeval.run.estimate import LONG_RUN_S, run_size

    long_plan = plan_of(items=10, repeats=300)
    # Computed by hand: low 10*300*3 = 9,000 calls; high 10*300*(3*(10+1)+1) = 102,000.
    size = run_size(long_plan, {"e": Endpoint("e", "http://x/v1", concurrency=4)}, concurrency=2)
    assert (size.low, size.high, size.parallel) == (9000, 102000, 2)
    # 0.05 s and 4 ms a token: 4.1 s a call of 1,024 tokens, measured by probes of 1 and 32 tokens (0.2 s)
    with simulate(tasks=generated_tasks.values(), latency_s=0.05, decode_s_per_token=0.004) as sim:
        record = estimate(sim, long_plan, yes=True)
        assert (record["calls_low"], record["calls_high"], record["units"], record["units_done_before"]) == \
            (9000, 102000, 3000, 0)
        # the least time is the calls at the probes' measured seconds a call, one in flight
        assert record["seconds_per_call"] >= 0.5 and record["in_flight"] == 1 and record["max_tokens"] == 1024
        per_call = record["seconds_before_reply"] + 1024 * record["seconds_per_token"]
        assert record["seconds_per_call"] == pytest.approx(per_call, abs=0.001)
        assert abs(record["expected_s_at_least"] - 9000 * record["seconds_per_call"]) <= 0.1 + 9000 * 0.00005
        assert "starting it (--yes)" in capsys.readouterr().err
        asked = []
        assert estimate(sim, long_plan, ask=lambda q: asked.append(q) or True)
        assert asked and asked[0].endswith("Start it? [y/N] ")
        with pytest.raises(UsageError, match="or pass --yes"):
            estimate(sim, long_plan, ask=lambda q: False)
        assert sim.server.stats.requests == 9  # three probe calls each
        # 9,000 calls in flight 64 at a time at 4.1 s: about 10 minutes, so it starts without asking.
        assert estimate(sim, long_plan, concurrency=64, ask=lambda q: False) is None
        # 20 calls could not take an hour even at 30 s each: no probe at all.
        assert estimate(sim, plan_of(items=5, repeats=1, agents=4), ask=lambda q: False) is None
        assert sim.server.stats.requests == 12
    assert LONG_RUN_S == 3600.0


def test_yes_is_a_config_key():
    assert build_settings({"tasks": "arith_mc", "yes": True}).yes is True
    assert build_settings({"tasks": "arith_mc"}).yes is False


def test_yes_in_a_config_file_is_the_yes_option(tmp_path):
    """YAML 1.1 reads a bare ``yes:`` key as the boolean true; the documented ``yes: true`` still works."""
    from madeval.settings.config import read_config_file

    path = tmp_path / "run.yaml"
    path.write_text("tasks: arith_mc\nyes: true\n", encoding="utf-8")
    assert build_settings(read_config_file(path)).yes is True


def test_resume_a_long_run_estimates_only_the_units_left(generated_tasks):
    """A folder that holds 2,990 of 3,000 units (9,000 calls) has 30 calls left: too few to need
    a probe or a question. Before, the resume was estimated as the whole run and asked again."""
    long_plan = plan_of(items=10, repeats=300)
    done = {unit.key() for unit in long_plan.units()}
    left = [Unit("c", "t", "3", 7), Unit("c", "t", "9", 299)] + [Unit("c", "t", "0", r) for r in range(8)]
    done -= {unit.key() for unit in left}
    with simulate(tasks=generated_tasks.values(), latency_s=0.05, decode_s_per_token=0.004) as sim:
        assert estimate(sim, long_plan, ask=lambda q: False, done=done) is None
        assert sim.server.stats.requests == 0
        # a sixth of it done: 7,500 calls at 4.1 s or so, one at a time, still over an hour: said so
        sixth = {unit.key() for unit in list(long_plan.units())[:500]}
        with pytest.raises(UsageError) as refused:
            estimate(sim, long_plan, ask=lambda q: False, done=sixth)
        assert "at least 7,500 calls (up to 85,000) for the 2,500 of its 3,000 units not done yet" in str(refused.value)


def test_the_estimate_is_kept_in_run_json_and_a_resume_asks_only_about_what_is_left(
        generated_tasks, tmp_path, monkeypatch, capsys):
    """With the bound at 0.2 s: 10 units (30 calls at least) at 0.02 s a call, 2 in flight, is long
    (0.3 s or more); 8 left is too (0.24 s); 1 left (3 calls) is not, so it starts without a yes.
    Replies of at most 64 tokens: the probes' timing noise, times the tokens a call may write, stays
    far below the 0.13 s a call that would make 1 unit left long."""
    import json

    from helpers import run_quietly, settings_for

    monkeypatch.setattr("madeval.run.estimate.LONG_RUN_S", 0.2)
    with simulate(tasks=generated_tasks.values(), latency_s=0.02) as sim:
        settings = settings_for(sim.base_url, tmp_path, limit=10, concurrency=2, max_tokens=64, cache="off", yes=True)
        first, _ = run_quietly(settings)
        run_file, records = first.folder / "run.json", first.folder / "records.jsonl"
        kept = json.loads(run_file.read_text())["estimate"]
        assert (kept["calls_low"], kept["units"], kept["units_done_before"], kept["in_flight"]) == (30, 10, 0, 2)
        assert kept["calls_high"] == 10 * (3 * (settings.configurations[0].max_turns + 1) + 1)
        assert kept["seconds_per_call"] >= 0.02 and kept["max_tokens"] == settings.max_tokens
        assert abs(kept["expected_s_at_least"] - 30 * kept["seconds_per_call"] / 2) <= 0.05 + 30 * 0.00005 / 2
        lines = records.read_text().splitlines(keepends=True)

        records.write_text("".join(lines[:2]))  # interrupted after 2 units: 8 left, still long
        again, _ = run_quietly(settings)
        assert (again.outcome.finished, again.outcome.skipped) == (8, 2)
        said = capsys.readouterr().err
        assert "at least 24 calls" in said and "for the 8 of its 10 units not done yet" in said
        kept = json.loads(run_file.read_text())["estimate"]
        assert (kept["calls_low"], kept["units"], kept["units_done_before"]) == (24, 10, 2)

        records.write_text("".join(lines[:9]))  # 1 unit left: no question, no --yes needed
        last, _ = run_quietly(settings_for(sim.base_url, tmp_path, limit=10, concurrency=2, max_tokens=64, cache="off"))
        assert (last.outcome.finished, last.outcome.skipped) == (1, 9)


def test_the_speed_of_two_calls_by_hand():
    """A reply of 32 tokens in 1.0 s and one of 1 token in 0.38 s: 20 ms a token, 0.36 s before it."""
    speed = Speed.measured((1.0, 32), (0.38, 1))
    assert speed.per_token_s == pytest.approx(0.02) and speed.overhead_s == pytest.approx(0.36)
    assert speed.call_s(128) == pytest.approx(0.36 + 128 * 0.02)
    # the long reply no slower (its tokens cost nothing measurable): every call takes the short one's time
    assert Speed.measured((0.5, 32), (0.51, 1)) == Speed(0.51, 0.0)
    # a long reply that stopped early: its time over its tokens, never too short
    assert Speed.measured((0.9, 1), (0.3, 1)) == Speed(0.0, 0.9)


def test_an_always_estimated_model_says_its_speed_and_a_debate_that_takes_long(generated_tasks, monkeypatch, capsys):
    """The embedded model's endpoint is always measured, however short the run: 3 items, 3 agents,
    at most 10 turns (34 calls a debate at most) at 0.05 s and 2 ms a token. With the bound at 30 s,
    replies of 1,024 tokens (2.1 s a call) make a debate up to 71 s: said, with what shortens it;
    replies of 128 tokens (0.31 s) and 3 turns (13 calls, 4 s) only say the speed."""
    monkeypatch.setattr("madeval.run.estimate.LONG_DEBATE_S", 30.0)
    with simulate(tasks=generated_tasks.values(), latency_s=0.05, decode_s_per_token=0.002) as sim:
        assert estimate(sim, plan_of(items=3, repeats=1), always=True) is None  # 9 calls: not a long run
        said = capsys.readouterr().err.strip()
        found = re.fullmatch(r"madeval: simulator answers at (\d+\.\d) tokens a second here \((\d+\.\d\d) s a call "
                             r"of 1024 reply tokens: .*\): a debate's replies take up to (\d+) s \(34 calls one after "
                             r"another; reading long prompts adds to that\), this run's (\d+) s or more \(9 calls at "
                             r"least\); --max-tokens and --max-turns make a debate shorter", said)
        assert found, said
        rate, per_call, debate, run = (float(found.group(i)) for i in range(1, 5))
        assert rate == pytest.approx(500, rel=0.25) and 1.5 < per_call < 3
        assert debate == pytest.approx(34 * per_call, abs=1) and run == pytest.approx(9 * per_call, abs=1)
        assert estimate(sim, plan_of(items=3, repeats=1, max_turns=3), always=True, max_tokens=128) is None
        said = capsys.readouterr().err
        assert "reply tokens" in said and "(13 calls one after another;" in said and "shorter" not in said
        assert sim.server.stats.requests == 6  # three probe calls for each client
        # not always estimated, and the run cannot take an hour: nothing measured, nothing said
        assert estimate(sim, plan_of(items=3, repeats=1)) is None
        assert capsys.readouterr().err == "" and sim.server.stats.requests == 6


def test_one_slot_runs_one_debate_at_a_time(generated_tasks, tmp_path):
    """With one call in flight, debates taking turns on the slot each finish later and none sooner:
    they run one after another, the first recorded after its own calls only. With more slots, many
    debates share them (calls in flight and a few more)."""
    import json

    from helpers import run_quietly, settings_for
    from madeval.run.scheduler import debates_at_once

    with simulate(tasks=generated_tasks.values(), latency_s=0.02) as sim:
        result, _ = run_quietly(settings_for(sim.base_url, tmp_path, limit=4, concurrency=1, cache="off",
                                             max_turns=2))
    records = [json.loads(line) for line in (result.folder / "records.jsonl").read_text().splitlines()]
    # debates one after another: their times add up to no more than the run's (taking turns on the
    # slot, four debates of about the same length would each last about as long as the run)
    assert len(records) == 4 and sum(r["wall_s"] for r in records) <= result.outcome.wall_s

    def plan(in_flight, units):
        return SimpleNamespace(settings=SimpleNamespace(calls_in_flight=lambda: in_flight), size=lambda: units)

    def client(*slots):
        return SimpleNamespace(endpoints={str(i): SimpleNamespace(concurrency=n) for i, n in enumerate(slots)})

    assert debates_at_once(plan(64, 100), client(1)) == 1  # the embedded model: one slot
    assert debates_at_once(plan(1, 100), client(64)) == 1  # --concurrency 1
    assert debates_at_once(plan(64, 100), client(1, 1)) == 72 and debates_at_once(plan(64, 5), client(64)) == 5
