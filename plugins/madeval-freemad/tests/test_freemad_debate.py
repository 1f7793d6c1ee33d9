"""Free-MAD's debate modes, the communication attack, the token cost and the presets on the simulator."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import pytest

from madeval.config import DebateConfig, RunSettings, debate_config
from madeval.errors import UsageError
from madeval.plugins import components
from madeval.records import read_records
from madeval.run import run
from madeval.simulator import simulate
from madeval.transcript import Call, Transcript
from madeval_freemad.metrics import token_cost
from madeval_freemad.prompts import ANTI_CONFORMITY
from madeval_madc.testing import scripted_debate

ANSWERS = ["Final Solution: A", "Final Solution: B", "Final Solution: C"]


def three(turn, agent, purpose, messages):
    return f"Reasoning of agent {agent}. {ANSWERS[agent % 3]}"


def test_freemad_anti_conformity_replaces_the_conformity_advice():
    _, llm = scripted_debate(three, responder="anti_conformity", paradigm="som", decider="freemad_score", agents=3)
    update = llm.prompts(0, turn=2)[0][-1]["content"]
    assert update.startswith("These are the solutions to the problem from other agents: \n\n One agent solution: ```Reasoning of agent 1.")
    assert ANTI_CONFORMITY in update
    assert "Since some malicious agents may deliberately disseminate incorrect answers" in update
    assert "Using the reasoning from other agents as additional advice" not in update
    assert update.endswith("Answer in the format the task asks for: Answer.")
    _, conforming = scripted_debate(three, responder="conformity", paradigm="som", decider="freemad_score", agents=3)
    assert "Using the reasoning from other agents as additional advice" in conforming.prompts(0, turn=2)[0][-1]["content"]


def test_freemad_attacked_agent_sees_no_peer_but_is_still_seen():
    transcript, llm = scripted_debate(three, responder="conformity", paradigm="communication_attack", decider="counting",
                                      agents=3, max_turns=3, paradigm_args={"paradigm": "som", "targets": "1"})
    assert [e for e in transcript.events if e["kind"] == "communication_attack"] == [
        {"kind": "communication_attack", "attacked": [1], "paradigm": "som"}]
    for turn in (2, 3):
        attacked = llm.prompts(1, turn=turn)[0][-1]["content"]
        assert attacked == "Can you double check that your answer is correct. Answer in the format the task asks for: Answer."
        for agent in (0, 2):
            seen = llm.prompts(agent, turn=turn)[0][-1]["content"]
            assert "Reasoning of agent 1." in seen  # the attacked agent still sends
    # The attacked agent's own conversation is intact: its earlier answers stay in its context.
    assert [m["role"] for m in llm.prompts(1, turn=3)[0]] == ["user", "assistant", "user", "assistant", "user"]


def test_freemad_attack_chooses_a_fraction_of_the_agents():
    def attacked(seed=0, **options):
        transcript, _ = scripted_debate(three, responder="conformity", paradigm="communication_attack",
                                        decider="counting", agents=6, paradigm_args={"paradigm": "som", **options},
                                        seed=seed)
        return next(e["attacked"] for e in transcript.events if e["kind"] == "communication_attack")

    assert attacked(fraction=1 / 3, select="first") == [0, 1]
    assert attacked(fraction=1 / 3, select="last") == [4, 5]
    assert attacked(fraction=0.5, select="first") == [0, 1, 2]
    assert attacked(fraction=0.0) == []
    chosen = [attacked(fraction=1 / 3, seed=seed) for seed in range(8)]
    assert all(len(c) == 2 for c in chosen) and len({tuple(c) for c in chosen}) > 1  # seeded random draws


def test_freemad_attack_bad_options_are_usage_errors():
    paradigms = components().paradigms
    with pytest.raises(UsageError, match="fraction must be between 0 and 1"):
        paradigms.create("communication_attack", {"fraction": 1.5})
    with pytest.raises(UsageError, match="unknown paradigm 'somm'"):
        paradigms.create("communication_attack", {"paradigm": "somm"})
    with pytest.raises(UsageError, match="no agent 7 among 3 agents"):
        scripted_debate(three, responder="conformity", paradigm="communication_attack", decider="counting",
                        paradigm_args={"targets": "7"})


def test_freemad_token_cost_sums_agents_calls_per_round():
    transcript = Transcript(calls=[
        Call("draft", 0, 1, "m", "e", prompt_tokens=100, completion_tokens=20),
        Call("draft", 1, 1, "m", "e", prompt_tokens=110, completion_tokens=30),
        Call("refine", 0, 2, "m", "e", prompt_tokens=300, completion_tokens=25),
        Call("judge", None, 2, "m", "e", prompt_tokens=999, completion_tokens=99),  # no agent: left out
    ])
    assert token_cost(transcript) == {"token_cost": 585.0, "token_cost_prompt": 510.0, "token_cost_completion": 75.0,
                                      "token_cost_turn1": 260.0, "token_cost_turn2": 325.0}


def test_freemad_token_cost_is_reported_as_a_metric_of_a_run(arith_tasks, tmp_path):
    import madeval.tasks

    core = Path(madeval.tasks.__file__).parent / "generated" / "arith_mc.yaml"
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "arith_mc_cost.yaml").write_text(textwrap.dedent(f"""
        task: arith_mc_cost
        include: {core}
        metric_list:
          - metric: accuracy
          - metric: token_cost
    """))
    with simulate(tasks=arith_tasks.values()) as sim:
        settings = RunSettings(tasks=["arith_mc_cost"], include_path=[str(folder)], limit=4, base_url=sim.base_url,
                               configurations=[debate_config({"preset": "freemad_n"})],
                               output_path=str(tmp_path / "run"), cache="off", transport="aiohttp")
        result = run(settings, show_progress=False, out=io.StringIO())
    records = list(read_records(result.folder))
    assert len(records) == 4
    for record in records:
        metrics = record["metrics"]
        assert metrics["token_cost"] == record["tokens"]["total"] > 0  # no judge call in Free-MAD
        assert metrics["token_cost"] == metrics["token_cost_turn1"] + metrics["token_cost_turn2"]
    assert {r["metric"] for r in result.rows} >= {"accuracy", "token_cost"}


def test_freemad_presets_run_on_the_simulator(arith_tasks, tmp_path):
    configs = [debate_config({"preset": "freemad_n"}), debate_config({"preset": "freemad_c"})]
    assert (configs[0].responder, configs[0].paradigm, configs[0].decider, configs[0].agents, configs[0].max_turns) == (
        "anti_conformity", "som", "freemad_score", 4, 2)
    with simulate(tasks=arith_tasks.values(), accuracy=0.6, conformity=0.5) as sim:
        settings = RunSettings(tasks=["arith_mc"], configurations=configs, limit=15, base_url=sim.base_url,
                               output_path=str(tmp_path / "run"), cache="off", transport="aiohttp")
        result = run(settings, show_progress=False, out=io.StringIO())
        kinds = dict(sim.agents.stats.kinds)
    assert result.outcome.finished == 30 and result.outcome.failed == 0
    assert kinds == {"draft": 120, "som_update": 120}
    assert all(r["decision_success_rate"] == 1.0 and r["mean_turns"] == 2.0 for r in result.rows)


def test_freemad_score_holds_under_a_communication_attack_on_the_simulator(arith_tasks, tmp_path):
    """A third of 3 conforming agents attacked in a one-round Society-of-Minds debate (300 items).

    Free-MAD's accuracy under attack stays inside its unattacked 95% interval. The last-round
    majority's figures are kept in the event log of this test (see the package README): with the
    simulator's conformity (adopt the peers' most common answer, blind to the truth) the attack
    does not lower them measurably either.
    """
    def config(decider, attacked):
        paradigm = {"paradigm": "communication_attack", "paradigm_args": {"paradigm": "som", "fraction": 1 / 3}} \
            if attacked else {"paradigm": "som"}
        return DebateConfig(responder="conformity", decider=decider, agents=3, max_turns=2,
                            name=f"{decider}{' attacked' if attacked else ''}", **paradigm)

    configs = [config("counting", False), config("counting", True), config("freemad_score", False),
               config("freemad_score", True)]
    with simulate(tasks=arith_tasks.values(), accuracy=0.6, conformity=0.8) as sim:
        settings = RunSettings(tasks=["arith_mc"], configurations=configs, limit=300, base_url=sim.base_url,
                               output_path=str(tmp_path / "run"), cache="off", transport="aiohttp")
        result = run(settings, show_progress=False, out=io.StringIO())
        kinds = dict(sim.agents.stats.kinds)
    rows = {r["label"]: r for r in result.rows}
    assert kinds["som_double_check"] == 2 * 300  # one attacked agent per attacked debate, both attacked configs
    free, attacked = rows["freemad_score"], rows["freemad_score attacked"]
    assert free["ci_low"] <= attacked["score"] <= free["ci_high"]
    print({label: (round(r["score"], 3), round(r["ci_low"], 3), round(r["ci_high"], 3)) for label, r in rows.items()})
