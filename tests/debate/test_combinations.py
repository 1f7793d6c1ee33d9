"""Every persona x responder x paradigm x decider on the simulator; consensus vs voting turns."""

from __future__ import annotations

import itertools
import statistics

import pytest

from helpers import run_quietly
from madeval.builtins.baselines import baseline_cot, baseline_direct, self_consistency
from madeval.core.plugins import registries
from madeval.run.plan import split_valid
from madeval.settings.config import DebateConfig, RunSettings
from madeval.simulator import simulate

PERSONAS = ["none", "expert", "ipip"]
RESPONDERS = ["simple", "freetext", "critical", "reasoning", "splitfreetext"]
PARADIGMS = ["memory", "relay", "report", "debate", "collective_refinement", "collective_improvement"]
CONSENSUS = ["majority_consensus", "supermajority_consensus", "unanimity_consensus", "hybrid_consensus"]
VOTING = ["simple_voting", "approval_voting", "ranked_voting", "cumulative_voting", "consensus_voting"]
DECIDERS = CONSENSUS + VOTING + ["judge", "counting"]


def test_every_combination_runs_and_decides_when_agents_agree(generated_tasks, tmp_path):
    configs = [DebateConfig(persona=p, responder=r, paradigm=pa, decider=d, max_turns=5)
               for p, r, pa, d in itertools.product(PERSONAS, RESPONDERS, PARADIGMS, DECIDERS)]
    valid, refused = split_valid(configs, registries())
    # Refused: consensus on the simultaneous paradigms (3 x 5 x 4 x 2 = 120), Collective Improvement
    # with judge or counting (3 x 5 x 2 = 30) or reasoning and voting (3 x 5 = 15), reasoning with
    # counting elsewhere (3 x 5 = 15): 180 of 990.
    assert len(configs) == 990 and len(valid) == 810
    for config, reason in refused:  # each refusal is a one-line reason naming the clash
        assert "\n" not in reason
        simultaneous = config.paradigm in ("collective_refinement", "collective_improvement")
        assert (simultaneous and config.decider in CONSENSUS) or (
            config.responder == "reasoning" and config.decider == "counting") or (
            config.paradigm == "collective_improvement"
            and (config.decider not in VOTING or config.responder == "reasoning"))
    with simulate(tasks=generated_tasks.values(), accuracy=0.6, conformity=1.0) as sim:
        settings = RunSettings(tasks=["arith_mc"], configurations=valid, limit=2, base_url=sim.base_url,
                               output_path=str(tmp_path / "sweep"), cache="off", transport="direct")
        result, _ = run_quietly(settings)
    assert result.outcome.failed == 0 and result.outcome.finished == 1620
    assert len(result.rows) == 810
    undecided = [r["label"] for r in result.rows if r["decision_success_rate"] != 1.0]
    assert undecided == []


COT = {"responder": "cot", "paradigm": "collective_refinement", "decider": "counting", "max_turns": 1}
NONSENSE = [  # (configuration, the phrase its one-line refusal must contain)
    (DebateConfig(paradigm="debate", agents=1, decider="counting"), "paradigm 'debate' needs at least 3 agents"),
    (DebateConfig(paradigm="debate", agents=2, decider="counting"), "paradigm 'debate' needs at least 3 agents"),
    (DebateConfig(paradigm="relay", agents=1, decider="counting"), "paradigm 'relay' needs at least 3 agents"),
    (DebateConfig(paradigm="relay", agents=2, decider="counting"), "which is memory"),
    (DebateConfig(paradigm="report", agents=1, decider="counting"), "paradigm 'report' needs at least 2 agents"),
    (DebateConfig(agents=1, decider="simple_voting"), "decider 'simple_voting' decides between several agents"),
    (DebateConfig(agents=1, decider="majority_consensus"), "only 1 agent votes"),
    (DebateConfig(agents=1, decider="judge"), "decider 'judge' decides between several agents"),
    (DebateConfig(agents=2, neutral_agents=1, decider="ranked_voting"), "only 1 agent votes (neutral agents do not)"),
    (DebateConfig(agents=3, neutral_agents=3, decider="counting"), "all 3 agents are neutral"),
    (DebateConfig(agents=3, neutral_agents=5, decider="counting"), "all 3 agents are neutral"),
    # the single-model baseline with memory and voting, and its other misuses
    (DebateConfig(**{**baseline_cot(), "paradigm": "memory", "decider": "simple_voting"}),
     "responder 'cot' is a single-model baseline"),
    (DebateConfig(**{**COT, "agents": 1, "decider": "simple_voting", "decider_args": {"vote_after_turns": 1}}),
     "decider 'simple_voting' decides between several agents"),
    (DebateConfig(**{**COT, "agents": 5, "max_turns": 3}), "use max_turns 1, not 3"),
    (DebateConfig(**{**COT, "responder": "direct", "paradigm": "collective_improvement", "decider": "simple_voting"}),
     "not 'collective_improvement'"),
    (DebateConfig(**{**COT, "neutral_agents": 1}), "no discussion for neutral agents"),
    (DebateConfig(paradigm="collective_refinement", decider="counting", paradigm_args={"visible_turns_in_memory": 0}),
     "visible_turns_in_memory 0"),
    (DebateConfig(paradigm="collective_improvement", decider="counting"), "voting deciders only"),
]


@pytest.mark.parametrize("config, phrase", NONSENSE, ids=[phrase for _, phrase in NONSENSE])
def test_nonsense_combination_fails_at_start_with_one_line(config, phrase):
    valid, refused = split_valid([config], registries())
    assert valid == [] and len(refused) == 1
    reason = refused[0][1]
    assert phrase in reason and "\n" not in reason


def test_edge_combinations_that_make_sense_are_accepted():
    configs = [
        DebateConfig(**baseline_cot()), DebateConfig(**baseline_direct()), DebateConfig(**self_consistency()),
        DebateConfig(**{**COT, "agents": 3, "decider": "judge", "decider_args": {"after_turns": 1}}),
        DebateConfig(agents=1, decider="counting"),  # one agent refining its own answer
        DebateConfig(agents=2, decider="simple_voting"),
        DebateConfig(agents=3, neutral_agents=1, decider="majority_consensus"),
        DebateConfig(paradigm="relay", agents=3), DebateConfig(paradigm="report", agents=2),
        DebateConfig(paradigm="debate", agents=3),
        DebateConfig(paradigm="collective_improvement", decider="cumulative_voting"),
    ]
    valid, refused = split_valid(configs, registries())
    assert refused == []


def test_turns_consensus_vs_voting(generated_tasks, tmp_path):
    """With conforming agents, consensus stops sooner than voting (001 reports 1.42 vs 3.38 rounds)."""
    configs = [DebateConfig(decider=d, max_turns=5) for d in CONSENSUS[:3] + VOTING[:4]]
    with simulate(tasks=generated_tasks.values(), accuracy=0.6, conformity=0.8) as sim:
        settings = RunSettings(tasks=["arith_mc"], configurations=configs, limit=30, base_url=sim.base_url,
                               output_path=str(tmp_path / "turns"), cache="off", transport="direct")
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
