"""Shared calls in a run: configurations that differ only in the decider make each identical call once,
and every configuration's records are what they are with sharing off (the simulator is deterministic:
the same request always gets the same reply)."""

from __future__ import annotations

import json

import pytest

from helpers import run_quietly
from madeval.leaderboard.table import TIMING_KEYS
from madeval.records.folder import read_records
from madeval.records.unit import Unit
from madeval.run.sharing import group_of
from madeval.settings.config import DebateConfig, RunSettings
from madeval.simulator import Faults, simulate

DECIDERS = ("majority_consensus", "unanimity_consensus", "simple_voting", "ranked_voting")
PROFILE = {"accuracy": 0.55, "conformity": 0.3, "persuasion": 0.3}  # debates that change their minds
#: What a debate did, as its record says: everything but timing and where its calls' replies came from.
OUTCOME = ("prediction", "metrics", "decision_success", "turns", "calls", "tokens", "parse_failures", "chain")


def sweep(base_url: str, folder, share: bool = True, configs=None, **options) -> RunSettings:
    configs = configs or [DebateConfig(paradigm="memory", agents=3, max_turns=3, decider=d) for d in DECIDERS]
    options = {"tasks": ["arith_mc"], "limit": 8, "repeats": 2, "cache": "off", **options}
    return RunSettings(base_url=base_url, configurations=configs, output_path=str(folder), share_calls=share,
                       **options)


def outcome(record: dict) -> dict:
    transcript = record["transcript"]
    return {**{key: record[key] for key in OUTCOME}, "messages": transcript["messages"],
            "decision": transcript["decision"], "events": transcript["events"]}


def answered(sim) -> int:
    """Chat requests the simulator answered with a reply (not a fault)."""
    return sim.server.stats.requests - sum(sim.server.stats.faults.values())


def by_key(folder) -> dict[str, dict]:
    return {record["unit"]["key"]: record for record in read_records(folder)}


def test_sharing_changes_no_record_and_makes_each_identical_call_once(generated_tasks, tmp_path):
    with simulate(tasks=generated_tasks.values(), **PROFILE) as sim:
        seen = sim.server.behaviour = Recorder(sim.server.behaviour)
        shared, said = run_quietly(sweep(sim.base_url, tmp_path / "shared"))
        made_shared, asked_shared, seen.requests = answered(sim), seen.requests, []
        alone, said_alone = run_quietly(sweep(sim.base_url, tmp_path / "alone", share=False))
        made_alone = answered(sim) - made_shared
    # no identical request made twice, and every distinct request the configurations ask made
    assert len(asked_shared) == len(set(asked_shared)) == made_shared and set(asked_shared) == set(seen.requests)
    on, off = by_key(shared.folder), by_key(alone.folder)
    assert len(on) == 8 * 2 * len(DECIDERS) and on.keys() == off.keys()
    assert {key: outcome(record) for key, record in on.items()} == {key: outcome(record) for key, record in off.items()}
    # the board is the same, cost columns included: a configuration costs what its debates used
    untimed = lambda rows: [{k: v for k, v in row.items() if k not in TIMING_KEYS} for row in rows]  # noqa: E731
    assert untimed(shared.rows) == untimed(alone.rows)

    used = sum(record["calls"] for record in on.values())
    paid = shared.board["paid"]
    assert made_alone == used == alone.board["paid"]["made"] and alone.board["paid"]["shared"] == 0
    assert paid["calls"] == used and paid["made"] == made_shared < used / 2  # the deciders part ways late
    assert paid["shared"] == used - made_shared == sum(record["shared_calls"] for record in on.values())

    # every reused call names the debate that made it: another configuration's, of the same task,
    # item and repeat, whose record holds that very call as made
    reused = 0
    for key, record in on.items():
        for call in record["transcript"]["calls"]:
            if "shared_from" not in call:
                continue
            reused += 1
            maker = json.loads(call["shared_from"])
            assert maker[0] != record["unit"]["config"] and maker[1:] == json.loads(key)[1:]
            twin = [c for c in on[call["shared_from"]]["transcript"]["calls"]
                    if (c["purpose"], c["agent"], c["turn"]) == (call["purpose"], call["agent"], call["turn"])]
            assert any("shared_from" not in c and c["prompt_tokens"] == call["prompt_tokens"] for c in twin)
    assert reused == paid["shared"]
    tokens = sum(record["tokens"]["total"] for record in on.values())
    assert paid["tokens"] == tokens and paid["made_tokens"] == sum(r["made_tokens"] for r in on.values()) < tokens

    # the run says what it paid: last line, run.json, the board and its methods paragraph
    assert (f"{made_shared:,} calls made for the {used:,} the debates used ({used - made_shared:,} shared "
            "between configurations") in said
    assert json.loads((shared.folder / "run.json").read_text())["paid"] == paid
    board = (shared.folder / "leaderboard.md").read_text()
    assert f"The configurations shared identical calls: {used - made_shared:,} of the {used:,} calls" in board
    assert "common random numbers" in board and f"Paid: {made_shared:,} calls made" in board
    assert "calls made for" not in said_alone
    assert "shared identical calls" not in (alone.folder / "leaderboard.md").read_text()
    assert not (shared.folder / "shared.jsonl").exists()  # every unit finished: nothing left to resume


@pytest.mark.parametrize("variant", [
    {"persona": "expert"}, {"responder": "critical"}, {"agent_models": ["other-model"] * 3, "name": "other model"},
], ids=["persona", "responder", "model"])
def test_only_identical_requests_are_shared_when_prompts_differ(generated_tasks, tmp_path, variant):
    """Another persona, responder or model: what the two configurations ask differs (the expert's
    persona in every prompt, the critic's feedback, the model), so only what stays the same may be
    shared (the first draft, which MALLM words the same for every responder; a vote on the same
    solutions). The calls made are exactly the distinct requests the two ask with sharing off."""
    base = {"paradigm": "memory", "agents": 3, "max_turns": 3, "decider": "simple_voting"}
    configs = [DebateConfig(**base), DebateConfig(**{**base, **variant})]
    small = {"limit": 4, "repeats": 1, "model": "simulator"}
    with simulate(tasks=generated_tasks.values(), served=("simulator", "other-model"), **PROFILE) as sim:
        seen = sim.server.behaviour = Recorder(sim.server.behaviour)
        alone, _ = run_quietly(sweep(sim.base_url, tmp_path / "alone", False, configs, **small))
        distinct, seen.requests = set(seen.requests), []
        shared, _ = run_quietly(sweep(sim.base_url, tmp_path / "shared", True, configs, **small))
    assert len(seen.requests) == len(set(seen.requests)) == shared.board["paid"]["made"]  # none made twice
    assert set(seen.requests) == distinct  # and none left out: no reply given to another request
    assert shared.board["paid"]["calls"] == alone.board["paid"]["calls"]
    reused = [call for record in read_records(shared.folder) for call in record["transcript"]["calls"]
              if "shared_from" in call]
    if "responder" in variant:  # the same first drafts
        assert shared.board["paid"]["shared"] == len(reused) > 0
        assert {call["purpose"] for call in reused if call["turn"] == 1} == {"draft"}
    else:  # every prompt of theirs differs: nothing shared
        assert shared.board["paid"]["shared"] == 0 and not reused


class Recorder:
    """The simulator's behaviour, noting every request it answers (the whole body, sorted)."""

    def __init__(self, behaviour):
        self.behaviour = behaviour
        self.requests: list[str] = []

    def __call__(self, request: dict):
        self.requests.append(json.dumps(request, sort_keys=True))
        return self.behaviour(request)

    def __getattr__(self, name: str):
        return getattr(self.behaviour, name)


def test_a_resumed_shared_run_makes_no_call_twice(generated_tasks, tmp_path):
    """The first process fails some units (one attempt per call against a server that fails one
    request in six); the resume reads the replies they and the others made back from shared.jsonl:
    over both processes, each distinct request is answered once, as in a run never interrupted."""
    folder = tmp_path / "resumed"
    with simulate(tasks=generated_tasks.values(), faults=Faults(server_error=1 / 6, seed=3), **PROFILE) as sim:
        first, _ = run_quietly(sweep(sim.base_url, folder, max_attempts=1))
        assert first.outcome.failed > 0 and first.outcome.finished > 0
        # the journal keeps the replies of the groups with a unit to run again, and only those
        failed = {group_of(Unit.of_record(json.loads(line))) for line in (folder / "errors.jsonl").open()}
        kept = {json.loads(line)["group"] for line in (folder / "shared.jsonl").open()}
        assert kept and kept <= failed
        second, said = run_quietly(sweep(sim.base_url, folder, max_attempts=30, retry_delay=0.0))
        over_both = answered(sim)
    assert second.outcome.failed == 0 and second.outcome.skipped == first.outcome.finished
    assert not (folder / "shared.jsonl").exists()
    with simulate(tasks=generated_tasks.values(), **PROFILE) as sim:
        whole, _ = run_quietly(sweep(sim.base_url, tmp_path / "whole"))
        distinct = answered(sim)
    assert distinct == whole.board["paid"]["made"]
    assert over_both == distinct
    resumed, uninterrupted = by_key(folder), by_key(whole.folder)
    assert {k: outcome(r) for k, r in resumed.items()} == {k: outcome(r) for k, r in uninterrupted.items()}
    # the resumed run's records say so too: what they made is every distinct request
    assert second.board["paid"]["made"] == distinct

