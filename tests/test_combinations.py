"""Every persona x responder x paradigm x decider on the simulator; consensus vs voting turns."""

from __future__ import annotations

import itertools
import statistics

import pytest

from madeval.config import DebateConfig, RunSettings
from madeval.errors import UsageError
from madeval.plan import PlannedConfig
from madeval.plugins import components
from madeval.simulator import simulate
from helpers import run_quietly

PERSONAS = ["none", "expert", "ipip"]
RESPONDERS = ["simple", "freetext", "critical", "reasoning", "splitfreetext"]
PARADIGMS = ["memory", "relay", "report", "debate", "collective_refinement"]
CONSENSUS = ["majority_consensus", "supermajority_consensus", "unanimity_consensus", "hybrid_consensus"]
VOTING = ["simple_voting", "approval_voting", "ranked_voting", "cumulative_voting", "consensus_voting"]
DECIDERS = CONSENSUS + VOTING + ["judge", "counting"]


def split_valid(configs):
    valid, refused = [], []
    for config in configs:
        try:
            PlannedConfig(config, config.config_id(), [], None).setup(components()).validate()
            valid.append(config)
        except UsageError as error:
            refused.append((config, str(error)))
    return valid, refused


def test_every_combination_runs_and_decides_when_agents_agree(generated_tasks, tmp_path):
    configs = [DebateConfig(persona=p, responder=r, paradigm=pa, decider=d, max_turns=5)
               for p, r, pa, d in itertools.product(PERSONAS, RESPONDERS, PARADIGMS, DECIDERS)]
    valid, refused = split_valid(configs)
    assert len(configs) == 825 and len(valid) == 750
    for config, reason in refused:  # each refusal is a one-line reason naming the clash
        assert "\n" not in reason
        assert (config.paradigm == "collective_refinement" and config.decider in CONSENSUS) or (
            config.responder == "reasoning" and config.decider == "counting")
    with simulate(tasks=generated_tasks.values(), accuracy=0.6, conformity=1.0) as sim:
        settings = RunSettings(tasks=["arith_mc"], configurations=valid, limit=2, base_url=sim.base_url,
                               output_path=str(tmp_path / "sweep"), cache="off", transport="aiohttp")
        result, _ = run_quietly(settings)
    assert result.outcome.failed == 0 and result.outcome.finished == 1500
    assert len(result.rows) == 750
    undecided = [r["label"] for r in result.rows if r["decision_success_rate"] != 1.0]
    assert undecided == []


def test_turns_consensus_vs_voting(generated_tasks, tmp_path):
    """With conforming agents, consensus stops sooner than voting (001 reports 1.42 vs 3.38 rounds)."""
    configs = [DebateConfig(decider=d, max_turns=5) for d in CONSENSUS[:3] + VOTING[:4]]
    with simulate(tasks=generated_tasks.values(), accuracy=0.6, conformity=0.8) as sim:
        settings = RunSettings(tasks=["arith_mc"], configurations=configs, limit=30, base_url=sim.base_url,
                               output_path=str(tmp_path / "turns"), cache="off", transport="aiohttp")
        result, _ = run_quietly(settings)
    turns = {r["config"]: r["mean_turns"] for r in result.rows}
    by_decider = {c.decider: turns[c.config_id()] for c in configs}
    consensus = statistics.fmean(by_decider[d] for d in CONSENSUS[:3])
    voting = statistics.fmean(by_decider[d] for d in VOTING[:4])
    assert consensus < voting
    assert all(by_decider[d] >= 3 for d in VOTING[:4])  # voting cannot end before turn 3
    assert consensus < 2.0


@pytest.mark.parametrize("decider", ["simple_voting", "unanimity_consensus"])
def test_conformity_zero_agents_disagree_and_that_is_recorded(generated_tasks, tmp_path, decider):
    with simulate(tasks=generated_tasks.values(), accuracy=0.3, conformity=0.0) as sim:
        settings = RunSettings(tasks=["arith_mc"], configurations=[DebateConfig(decider=decider, max_turns=4)],
                               limit=20, base_url=sim.base_url, output_path=str(tmp_path / "x"), cache="off")
        result, _ = run_quietly(settings)
    row = result.rows[0]
    assert 0 < row["decision_success_rate"] < 1  # some debates hit max_turns: recorded, not raised
