"""Paradigms, responders, personas, answer-diversity options and the challenge round."""

from __future__ import annotations

import json

import pytest

from helpers import debate
from madeval.debate.prompts import madeval as own
from madeval.debate.prompts import mallm
from madeval.errors import UsageError
from madeval.settings.config import build_settings


def recorder(reply):
    """A script that records what each (turn, agent) saw and replies with ``reply(turn, agent)``."""
    seen = {}

    def script(turn, agent, purpose, messages):
        seen.setdefault((turn, agent), []).append((purpose, messages))
        return reply(turn, agent, purpose)

    return script, seen


def disagreeing(turn, agent, purpose):
    return f"[DISAGREE] t{turn}a{agent} Final Solution: {'ABCD'[(turn + agent) % 4]}"


def test_relay_shows_a_message_to_its_author_and_the_next_agent_only():
    script, seen = recorder(disagreeing)
    transcript, _ = debate(script, paradigm="relay", decider="unanimity", max_turns=2, agents=3)
    assert [m.audience for m in transcript.messages[:3]] == [(0, 1), (1, 2), (0, 2)]
    system = lambda t, a: seen[(t, a)][0][1][0]["content"]  # noqa: E731
    assert "t1a0" in system(1, 1) and "t1a0" not in system(1, 2) and "t1a1" in system(1, 2)
    assert "t1a2" in system(2, 0) and "t1a1" not in system(2, 0)


def test_relay_agreement_carries_the_draft_to_the_next_agent():
    script = {(1, 0): "Final Solution: B", (1, 1): "[AGREE]", (1, 2): "[AGREE]"}
    transcript, llm = debate(script, paradigm="relay", decider="unanimity")
    # Agent 3 cannot see agent 1's draft, but agent 2's agreement carries it.
    assert "Current Solution: Final Solution: B" in llm.requests[2][3][0]["content"]
    assert transcript.decision.success and transcript.decision.details["backers"] == [0, 1, 2]


def test_report_central_agent_drafts_every_turn_and_others_report_to_it():
    script, seen = recorder(disagreeing)
    transcript, _ = debate(script, paradigm="report", decider="unanimity", max_turns=2, agents=3)
    stages = [(m.turn, m.agent, m.stage, m.audience) for m in transcript.messages]
    assert stages[:3] == [(1, 0, "draft", None), (1, 1, "improve", (0, 1)), (1, 2, "improve", (0, 2))]
    assert stages[3] == (2, 0, "draft", None)
    assert seen[(2, 0)][0][1][1]["content"] == mallm.SIMPLE_DRAFT  # re-draft from the feedback
    assert "t1a1" not in seen[(1, 2)][0][1][0]["content"]


def test_debate_rounds_among_panelists_before_the_central_agent():
    script, _ = recorder(disagreeing)
    transcript, _ = debate(script, paradigm="debate", decider="unanimity", max_turns=1, agents=4,
                           paradigm_args={"debate_rounds": 2})
    speakers = [m.agent for m in transcript.messages]
    assert speakers == [0, 1, 2, 3, 1, 2, 3]
    assert [m.audience for m in transcript.messages[1:4]] == [(0, 1, 2), (0, 2, 3), (0, 1, 3)]


def test_all_agents_draft_first_gives_independent_first_drafts():
    script, seen = recorder(lambda t, a, p: f"Final Solution: {'AB'[a % 2]}")
    transcript, _ = debate(script, paradigm="memory", decider="counting", max_turns=2, all_agents_draft_first=True)
    first_turn = [m for m in transcript.messages if m.turn == 1]
    assert {m.step for m in first_turn} == {0} and [m.stage for m in first_turn] == ["draft"] * 3
    for agent in range(3):
        assert mallm.NO_SOLUTION_YET in seen[(1, agent)][0][1][0]["content"]
    assert [m.step for m in transcript.messages if m.turn == 2] == [0, 1, 2]


def test_reasoning_responder_asks_for_final_solutions_when_voting():
    def reply(turn, agent, purpose):
        if purpose == "final_solution":
            return f"Final Solution: {'ABB'[agent]}"
        if purpose == "vote":
            return "2"
        return "[DISAGREE] step 1, step 2"

    script, seen = recorder(reply)
    transcript, llm = debate(script, responder="reasoning", decider="simple_voting",
                             decider_args={"vote_after_turns": 1}, max_turns=1)
    assert sorted(r[1] for r in llm.requests if r[2] == "final_solution") == [0, 1, 2]
    assert transcript.decision.answer == "B"
    assert seen[(1, 1)][0][1][1]["content"] == mallm.REASONING_IMPROVE


def test_split_freetext_asks_agreement_first_and_skips_the_second_call_when_agreeing():
    def reply(turn, agent, purpose):
        if purpose == "agreement":
            return "[AGREE]" if agent == 1 else "[DISAGREE]"
        return f"My take. Final Solution: {'ABC'[agent]}"

    transcript, llm = debate(recorder(reply)[0], responder="splitfreetext", decider="unanimity", max_turns=1)
    purposes = [(r[1], r[2]) for r in llm.requests]
    assert purposes == [(0, "draft"), (1, "agreement"), (2, "agreement"), (2, "improve")]
    assert [m.agreement for m in transcript.messages] == [None, True, False]


def test_critical_responder_uses_figure_19_verbatim():
    transcript, llm = debate({(1, 0): "Final Solution: B", (1, 1): "[AGREE]"}, responder="critical")
    assert llm.requests[1][3][1]["content"] == mallm.CRITICAL_IMPROVE
    assert transcript.decision.success


def test_expert_personas_complement_the_ones_before():
    def reply(turn, agent, purpose):
        if purpose == "persona":
            return f'Sure! {{"role": "Expert {agent}", "description": "Knows topic {agent}."}}'
        return "Final Solution: B" if agent == 0 else "[AGREE]"

    script, seen = recorder(reply)
    transcript, _ = debate(script, persona="expert", decider="unanimity")
    assert [a.persona.name for a in transcript.agents] == ["Expert 0", "Expert 1", "Expert 2"]
    third = seen[(0, 2)][0][1]
    assert [m["role"] for m in third] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert json.loads(third[2]["content"]) == {"role": "Expert 0", "description": "Knows topic 0."}
    assert "Your role: Expert 1 (Knows topic 1.)" in seen[(1, 1)][0][1][0]["content"]


def test_expert_persona_reasks_then_falls_back():
    attempts = []

    def reply(turn, agent, purpose):
        if purpose == "persona":
            attempts.append(agent)
            return "I would rather not." if agent == 0 else '{"role": "R", "description": "D"}'
        return "Final Solution: B" if agent == 0 else "[AGREE]"

    transcript, _ = debate(recorder(reply)[0], persona="expert", decider="unanimity")
    assert attempts.count(0) == 3
    fallback = transcript.agents[0].persona
    assert fallback.name == "Participant 1" and fallback.traits["fallback"] is True
    assert fallback.traits["problems"] == ["no JSON object"] * 3


def test_ipip_personas_are_validated_and_described_from_facets():
    good = {"role": "Analyst", "extraversion": "low", "agreeableness": "high", "conscientiousness": "high",
            "neuroticism": "low", "openness": "high", "experience": "senior", "gender": "female"}
    replies = iter([json.dumps({**good, "openness": "medium"}), json.dumps(good)] + [json.dumps(good)] * 4)

    def reply(turn, agent, purpose):
        if purpose == "persona":
            return next(replies)
        return "Final Solution: B" if agent == 0 else "[AGREE]"

    transcript, _ = debate(recorder(reply)[0], persona="ipip", decider="unanimity")
    persona = transcript.agents[0].persona
    assert persona.traits == {k: v for k, v in good.items() if k != "role"}
    assert persona.description.startswith("A senior female participant with low extraversion (reserved")
    assert "high openness (imaginative" in persona.description


def test_neutral_agents_are_moderators_that_draft_and_do_not_count():
    script, seen = recorder(lambda t, a, p: "Final Solution: B" if a == 0 else "[AGREE]")
    transcript, llm = debate(script, decider="unanimity", neutral=(0,), agents=3)
    assert transcript.agents[0].persona.name == "Moderator"
    assert not any(r[2] == "persona" for r in llm.requests)
    assert transcript.decision.details["backers"] == [1, 2]


def test_decider_hybrid_consensus_needs_unanimity_early_and_three_quarters_later():
    # Five agents: agent 5 always disagrees. Unanimity is impossible, so hybrid waits for turn 5.
    def reply(turn, agent, purpose):
        return "[DISAGREE] Final Solution: C" if agent == 4 else ("Final Solution: B" if agent == 0 else "[AGREE]")

    transcript, _ = debate(recorder(reply)[0], decider="hybrid", agents=5, max_turns=6)
    assert transcript.decision.success and transcript.decision.turn == 5
    assert transcript.decision.details["threshold"] == 0.75


def test_challenge_round_records_who_challenged_and_the_new_answers():
    def reply(turn, agent, purpose):
        if purpose == "challenge":
            return "AGREE" if agent == 0 else "DISAGREE"
        if purpose == "challenge_answer":
            return "Final Solution: A"
        if purpose == "challenge_wrong":
            return "Final Solution: D"
        return "Final Solution: B" if agent == 0 else "[AGREE]"

    transcript, llm = debate(recorder(reply)[0], decider="unanimity", challenges=("plain", "wrong"))
    plain, wrong = [e for e in transcript.events if e["kind"] == "challenge"]
    assert plain["final_answer"] == "Final Solution: B" and wrong["final_answer"] == "Final Solution: D"
    assert [r["agrees"] for r in plain["results"]] == [True, False, False]
    assert [r["new_answer"] for r in plain["results"]] == [None, "A", "A"]
    assert transcript.decision.answer == "Final Solution: B"  # the decision itself is unchanged
    challenge_prompt = next(r for r in llm.requests if r[2] == "challenge")[3][1]["content"]
    assert "respond with the exact word 'AGREE' to confirm" in challenge_prompt


def test_presets_and_collective_improvement_options():
    settings = build_settings({"tasks": "arith_mc", "preset": "self_consistency"})
    config = settings.configurations[0]
    assert (config.responder, config.paradigm, config.decider, config.agents, config.max_turns) == (
        "cot", "collective_refinement", "counting", 5, 1)
    assert config.label() == "self_consistency"
    assert build_settings({"tasks": "x", "preset": "self_consistency", "agents": 9}).configurations[0].agents == 9
    improved = build_settings({"tasks": "x", "collective_improvement": True, "decider": "simple_voting"})
    assert improved.configurations[0].paradigm == "collective_improvement"
    # the flag and the paradigm name are one configuration: same id, so same cache and same row
    named = build_settings({"tasks": "x", "paradigm": "collective_improvement", "decider": "simple_voting"})
    assert improved.configurations[0].config_id() == named.configurations[0].config_id()
    with pytest.raises(UsageError, match="collective improvement replaces the paradigm"):
        build_settings({"tasks": "x", "collective_improvement": True, "paradigm": "collective_refinement"})
    with pytest.raises(UsageError, match="collective improvement replaces the paradigm"):
        build_settings({"tasks": "x", "collective_improvement": True, "paradigm": "relay"})
    with pytest.raises(UsageError, match="unknown preset 'self_consistancy'; did you mean self_consistency"):
        build_settings({"tasks": "x", "preset": "self_consistancy"})


def test_cot_baseline_prompt_is_figure_24():
    transcript, llm = debate({(1, 0): "Final Solution: B"}, responder="cot", paradigm="collective_refinement",
                             decider="counting", agents=1, max_turns=1)
    system, user = llm.requests[0][3]
    assert system["content"].startswith("Solve the provided task. Do not ask back questions.")
    assert user["content"] == "Let's think step-by-step."
    assert transcript.decision.answer == "B"


QUESTION = "Task: Answer.\nInput: What is 2 + 2?\nA) 3\nB) 4\n"


def test_collective_improvement_shows_only_the_previous_turns_solutions():
    answers = {(1, 0): "B", (1, 1): "C", (1, 2): "C", (2, 0): "C", (2, 1): "C", (2, 2): "B"}

    def reply(turn, agent, purpose):
        if purpose == "vote":
            return "2"
        return f"Reasoning t{turn}a{agent}. Final Solution: {answers[(turn, agent)]}"

    script, seen = recorder(reply)
    transcript, _ = debate(script, paradigm="collective_improvement", decider="simple_voting",
                           decider_args={"vote_after_turns": 2}, max_turns=2)
    system, user = seen[(2, 0)][0][1]
    assert system["content"] == (
        "You take part in a discussion to solve a task.\n\nYour role: Participant 1\n" + QUESTION
        + "Current Solution: B\nDiscussion so far: \nParticipant 1: B\nParticipant 2: C\nParticipant 3: C"
    )
    assert user["content"] == own.REFINE
    assert [m.stage for m in transcript.messages] == ["draft"] * 3 + ["refine"] * 3
    assert "Reasoning" in transcript.messages[0].text  # the record keeps the full message
    # Every vote names Solution 2, agent 2's turn-2 solution.
    assert transcript.decision.answer == "C" and transcript.decision.success


def test_collective_improvement_is_refused_with_non_voting_deciders_and_reasoning():
    for decider in ("majority_consensus", "judge", "counting"):
        with pytest.raises(UsageError, match=f"works with voting deciders only .*not '{decider}'"):
            debate({}, paradigm="collective_improvement", decider=decider)
    with pytest.raises(UsageError, match="responder 'reasoning' shares no solutions"):
        debate({}, paradigm="collective_improvement", decider="simple_voting", responder="reasoning")


def test_reasoning_agents_in_collective_refinement_are_never_asked_for_a_solution():
    def reply(turn, agent, purpose):
        if purpose == "final_solution":
            return "Final Solution: B"
        if purpose == "vote":
            return "1"
        return f"Step t{turn}a{agent}: 2 + 2 is 4."

    script, seen = recorder(reply)
    transcript, _ = debate(script, paradigm="collective_refinement", responder="reasoning",
                           decider="simple_voting", decider_args={"vote_after_turns": 2}, max_turns=2)
    # Each agent's first call of a turn is its message; final solutions and votes follow in turn 2.
    discussion = {key: calls[0] for key, calls in seen.items()}
    assert sorted((key, purpose) for key, (purpose, _) in discussion.items()) == [
        ((t, a), "draft" if t == 1 else "refine") for t in (1, 2) for a in range(3)]
    for (turn, _agent), (_purpose, (system, user)) in discussion.items():
        assert user["content"] == (mallm.REASONING_FIRST_DRAFT if turn == 1 else mallm.REASONING_IMPROVE)
        for asks in ("Propose a solution", "provide your improved solution", "Provide a revised solution",
                     "Please provide the first one"):
            assert asks not in system["content"] + user["content"]
    first = seen[(1, 0)][0][1][0]["content"]
    assert first == "You take part in a discussion to solve a task.\n\nYour role: Participant 1\n" + QUESTION
    assert "Current Solution: Step t1a1: 2 + 2 is 4." in seen[(2, 1)][0][1][0]["content"]
    assert transcript.decision.answer == "B"  # solutions only from the final_solution calls


def test_a_decider_declares_how_many_voting_agents_it_needs():
    """min_voters is the decider's own: a plugin decider that needs three voters is refused with two
    agents and accepted with three; built-in counting accepts even a lone agent."""
    from madeval.core.components import Decider
    from madeval.core.plugins import registries
    from madeval.core.registry import Registry
    from madeval.run.plan import debate_setup
    from madeval.settings.config import DebateConfig

    class ThreeWay(Decider):
        min_voters = 3

    plugin_deciders = Registry("decider")
    plugin_deciders.add("three_way", ThreeWay, plugin="test")
    setup = debate_setup(DebateConfig(agents=2, decider="counting"), registries())
    setup.validate()
    setup.decider = plugin_deciders.create("three_way")
    with pytest.raises(UsageError, match="^decider 'three_way' decides between several agents, but only 2 agent "
                                         r"votes \(neutral agents do not\): use at least 3 non-neutral agents$"):
        setup.validate()
    three = debate_setup(DebateConfig(agents=3, decider="counting"), registries())
    three.decider = plugin_deciders.create("three_way")
    three.validate()
    lone = debate_setup(DebateConfig(agents=1, decider="counting", paradigm="memory"), registries())
    lone.validate()
