"""Decider replay: ``madeval rescore`` re-decides stored debates without new discussion calls."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess

import pytest

from helpers import ScriptedLLM, debate, madeval_in_process, run_quietly, settings_for
from madeval.core.components import DebateSetup, Decider, TaskPrompt
from madeval.core.plugins import registries
from madeval.core.transcript import Decision
from madeval.debate.replay import ReplayIncomplete, replay
from madeval.records.folder import read_records


def rescore(folder, deciders: str, base_url: str) -> subprocess.CompletedProcess:
    return madeval_in_process("rescore", folder, "--decider", deciders, "--base-url", base_url, "--cache", "off")


@pytest.fixture(scope="module")
def counted_run(sim, tmp_path_factory):
    """Memory debates decided by counting at the last of 4 turns: every debate runs 4 turns."""
    folder = tmp_path_factory.mktemp("rescore") / "run"
    settings = settings_for(sim.base_url, folder.parent, tasks=["arith_mc", "arith_yesno"], limit=12, repeats=2,
                            cache="off", decider="counting", max_turns=4, output_path=str(folder))
    run_quietly(settings)
    return folder


def test_rescore_adds_deciders_with_zero_new_calls(sim, counted_run):
    before = sim.server.stats.requests
    done = rescore(counted_run, "counting:after_turns=1,counting:after_turns=2", sim.base_url)
    assert done.returncode == 0, done.stderr
    assert sim.server.stats.requests == before  # no discussion call, no call at all
    rescored = [json.loads(line) for line in (counted_run / "rescored.jsonl").read_text().splitlines()]
    assert len(rescored) == 2 * 2 * 12 * 2
    assert all(r["new_calls"] == 0 and r["wall_s"] is None for r in rescored)
    # LLM time: the stored discussion calls' latencies up to the decision (no new call here)
    assert all(r["llm_s"] == round(sum(c["latency_s"] for c in r["transcript"]["calls"]), 4) for r in rescored)
    assert {r["turns"] for r in rescored if r["config_label"].endswith("after_turns=1")} == {1}
    assert {r["calls"] for r in rescored if r["config_label"].endswith("after_turns=1")} == {3}
    board = json.loads((counted_run / "leaderboard.json").read_text())
    labels = {r["label"] for r in board["rows"]}
    assert all(r["llm_s_per_item"] > 0 and r["wall_s_per_item"] is None
               for r in board["rows"] if r["source"] == "rescored")
    assert labels == {"none/simple/memory/counting/3a", "none/simple/memory/counting/3a -> counting:after_turns=1",
                      "none/simple/memory/counting/3a -> counting:after_turns=2"}
    assert "-> counting:after_turns=2" in done.stdout and "96 debates rescored" in done.stdout
    again = rescore(counted_run, "counting:after_turns=1", sim.base_url)
    assert again.returncode == 0 and "0 debates rescored" in again.stdout


def test_rescored_decisions_equal_a_live_run_with_that_decider(sim, counted_run, tmp_path):
    rescore(counted_run, "counting:after_turns=2", sim.base_url)
    live = settings_for(sim.base_url, tmp_path, tasks=["arith_mc", "arith_yesno"], limit=12, repeats=2, cache="off",
                        decider="counting", decider_args={"after_turns": 2}, max_turns=4)
    result, _ = run_quietly(live)
    key = lambda r: (r["unit"]["task"], r["unit"]["item"], r["unit"]["repeat"])  # noqa: E731
    expected = {key(r): (r["prediction"], r["turns"], r["calls"]) for r in read_records(result.folder)}
    replayed = {key(r): (r["prediction"], r["turns"], r["calls"])
                for r in map(json.loads, (counted_run / "rescored.jsonl").read_text().splitlines())
                if r["config_label"].endswith("counting:after_turns=2")}
    assert replayed == expected


def test_rescored_records_are_scored_with_the_configurations_extra_metrics(sim, tmp_path):
    """A run that scores answer_entropy gets it on its rescored rows too, over the answers held at
    the replayed decision's turn (entropy in bits by hand: 3 alike 0, 2+1 0.918296, 1+1+1 log2 3)."""
    from collections import Counter

    from madeval.core.transcript import Transcript
    from madeval.settings.config import DebateConfig, RunSettings

    entropy = {(3,): 0.0, (1, 2): 0.9182958340544896, (1, 1, 1): 1.584962500721156}
    folder = tmp_path / "scored"
    run_quietly(RunSettings(tasks=["arith_mc"], limit=8, base_url=sim.base_url, cache="off", output_path=str(folder),
                            configurations=[DebateConfig(decider="counting", max_turns=3, metrics=["answer_entropy"])]))
    done = rescore(folder, "counting:after_turns=2", sim.base_url)
    assert done.returncode == 0, done.stderr
    rescored = [json.loads(line) for line in (folder / "rescored.jsonl").read_text().splitlines()]
    assert len(rescored) == 8
    for record in rescored:
        held = Transcript.from_dict(record["transcript"]).trajectory()[1]  # turn 2
        counts = tuple(sorted(Counter(held).values()))
        assert record["metrics"]["answer_entropy"] == pytest.approx(entropy[counts])
        assert set(record["metrics"]) == {"accuracy", "answer_entropy", "answer_entropy_sum"}
        assert record["parse_failures"] == Transcript.from_dict(record["transcript"]).parse_failures()
    board = json.loads((folder / "leaderboard.json").read_text())
    assert any(r["metric"] == "answer_entropy" and r["source"] == "rescored" for r in board["rows"])


def test_rescore_skips_debates_that_stopped_before_the_decider(sim, tmp_path):
    folder = tmp_path / "consensus"
    run_quietly(settings_for(sim.base_url, tmp_path, limit=10, cache="off", decider="majority_consensus",
                             max_turns=4, output_path=str(folder)))
    done = rescore(folder, "counting:after_turns=4", sim.base_url)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].startswith("madeval: error: nothing could be rescored: the stored debate ended")
    assert not (folder / "rescored.jsonl").exists() or not (folder / "rescored.jsonl").read_text()


def test_rescore_with_voting_makes_only_vote_calls(sim, counted_run):
    before = sim.server.stats.requests
    done = rescore(counted_run, "simple_voting:vote_after_turns=2", sim.base_url)
    assert done.returncode == 0, done.stderr
    rescored = [r for r in map(json.loads, (counted_run / "rescored.jsonl").read_text().splitlines())
                if r["config_label"].endswith("simple_voting:vote_after_turns=2")]
    assert len(rescored) == 48 and all(r["turns"] >= 2 for r in rescored)
    new = [c for r in rescored for c in r["transcript"]["calls"][-r["new_calls"]:]] if rescored else []
    assert new and {c["purpose"] for c in new} == {"vote"}
    assert sim.server.stats.requests - before == sum(r["new_calls"] for r in rescored)
    assert all(r["new_calls"] >= 3 for r in rescored)  # three voters, re-asks only when unreadable


@pytest.mark.parametrize(("deciders", "message"), [
    ("countng", "did you mean counting"),
    ("counting:after_turns", "NAME[:key=value"),
])
def test_rescore_bad_deciders_are_one_line_and_status_2(sim, counted_run, deciders, message):
    done = rescore(counted_run, deciders, sim.base_url)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and message in done.stderr


class AskTheJudge(Decider):
    """A replayable decider that makes its own call: the judge names the answer after turn 2."""

    name = "ask_the_judge"
    transcript_only = True

    async def after_turn(self, state, llm):
        if state.turn < 2:
            return None
        reply = await llm.chat(None, [{"role": "user", "content": "Which answer?"}], purpose="vote")
        return Decision(reply, True, state.turn, self.name, "judge")


def test_replay_api_lets_the_decider_call_and_never_asks_the_agents():
    recorded, live = debate(lambda turn, agent, purpose, messages: "[AGREE] Final Solution: B",
                            decider="counting", max_turns=3)
    assert recorded.turns_used == 3 and len(live.requests) == 9
    built = registries()
    setup = DebateSetup(personas=[built.personas.create("none") for _ in range(3)],
                        responder=built.responders.create("simple"), paradigm=built.paradigms.create("memory"),
                        decider=AskTheJudge(), agents=3, max_turns=3)
    judge = ScriptedLLM(lambda turn, agent, purpose, messages: "Final Solution: A")
    replayed = asyncio.run(replay(setup, recorded, TaskPrompt("Answer.", "What is 2 + 2?"),
                                  lambda transcript: setattr(judge, "transcript", transcript) or judge,
                                  extract=lambda text: text[-1], rng=random.Random(0)))
    assert [(r[0], r[1], r[2]) for r in judge.requests] == [(2, None, "vote")]
    assert replayed.decision.answer == "Final Solution: A" and replayed.turns_used == 2
    assert replayed.messages == recorded.messages[:6] and replayed.decision.decider == "ask_the_judge"
    short = setup.__class__(**{**vars(setup), "max_turns": 4, "decider": built.deciders.create("counting")})
    with pytest.raises(ReplayIncomplete):
        asyncio.run(replay(short, recorded, TaskPrompt("Answer.", "x"), lambda t: judge,
                           extract=lambda text: text[-1], rng=random.Random(0)))


#: Live configurations whose deciders are replayed on their own debates: consensus deciding after a
#: step (memory, relay), votes that make new calls (simultaneous steps, a drafting turn), counting.
SELF_REPLAYED = [
    {"decider": "majority_consensus", "challenge": ["plain"]},
    {"decider": "unanimity_consensus", "paradigm": "relay"},
    {"decider": "simple_voting", "paradigm": "collective_refinement"},
    {"decider": "ranked_voting", "all_agents_draft_first": True},
    {"decider": "counting", "decider_args": {"after_turns": 2}},
]


def test_replaying_each_debate_with_its_own_decider_gives_the_live_decision(sim, tmp_path):
    """Live and replayed debates go through one decide loop: replaying every stored debate with the
    decider that ran it live gives, unit by unit, the live decision (answer, success, turn, reason,
    details), turns and prediction, through every way a decision is reached (after a step, after a
    turn, the max-turns fallback)."""
    from dataclasses import replace

    from madeval.records.unit import Unit
    from madeval.settings.config import DebateConfig, RunSettings

    folder = tmp_path / "run"
    configs = [DebateConfig(max_turns=3, **options) for options in SELF_REPLAYED]
    run_quietly(RunSettings(tasks=["arith_mc", "arith_yesno"], limit=3, base_url=sim.base_url, cache="off",
                            output_path=str(folder), configurations=configs))
    specs = ",".join(c.decider + "".join(f":{k}={v}" for k, v in c.decider_args.items()) for c in configs)
    done = rescore(folder, specs, sim.base_url)
    assert done.returncode == 0, done.stderr
    sources = json.loads((folder / "run.json").read_text())["configurations"]
    live = {r["unit"]["key"]: r for r in read_records(folder)}
    own = {}  # live unit key -> its replay by the same decider with the same options
    for record in map(json.loads, (folder / "rescored.jsonl").read_text().splitlines()):
        source = sources[record["configuration"]["replay_of"]]
        if (record["configuration"]["decider"], record["configuration"]["decider_args"]) == (
                source["decider"], source["decider_args"]):
            own[replace(Unit.of_record(record), config=record["configuration"]["replay_of"]).key()] = record
    assert own.keys() == live.keys() and len(live) == 5 * 6
    # every stored key is the one Unit.key gives (the key a resume and a re-rescore skip by)
    assert all(r["unit"]["key"] == Unit.of_record(r).key() for r in [*live.values(), *own.values()])
    for key, record in live.items():
        replayed = own[key]
        assert replayed["transcript"]["decision"] == record["transcript"]["decision"], key
        assert (replayed["turns"], replayed["prediction"], replayed["decision_success"]) == (
            record["turns"], record["prediction"], record["decision_success"])
    decided = {(r["transcript"]["decision"]["success"], r["turns"]) for r in live.values()}
    assert {success for success, _ in decided} == {True, False}  # decisions and max-turns fallbacks
    assert {turns for _, turns in decided} == {1, 2, 3}
