"""The debate loop with hand-computed outcomes: consensus counting, turns, visibility, fallback."""

from __future__ import annotations

import pytest

from helpers import debate

B = "My answer. Final Solution: B"
C = "Another view. Final Solution: C"
AGREE = "[AGREE] Fine by me."


def test_decider_majority_decides_when_the_second_agent_agrees():
    transcript, llm = debate({(1, 0): B, (1, 1): AGREE, (1, 2): AGREE})
    decision = transcript.decision
    assert (decision.success, decision.turn, decision.reason) == (True, 1, "consensus")
    assert decision.answer == B and decision.details["backers"] == [0, 1]
    assert len(transcript.messages) == 2 and transcript.turns_used == 1
    assert [r[2] for r in llm.requests] == ["draft", "improve"]


def test_decider_unanimity_with_three_agreeing_agents_decides_in_turn_one():
    transcript, _ = debate({(1, 0): B, (1, 1): AGREE, (1, 2): AGREE}, decider="unanimity")
    assert transcript.decision.success and transcript.decision.turn == 1
    assert transcript.decision.details["backers"] == [0, 1, 2]
    assert transcript.decision.details["share"] == 1.0


def test_decider_consensus_agreement_counts_for_the_draft_that_was_current():
    # Turn 1: agent 1 drafts B, agent 2 disagrees with C (a new draft), agent 3 agrees with C.
    # Backers of C: agents 2 and 3 -> 2/3, not unanimous. Turn 2: agent 1 agrees -> 3/3 on C.
    script = {(1, 0): B, (1, 1): "[DISAGREE] " + C, (1, 2): AGREE, (2, 0): AGREE}
    transcript, _ = debate(script, decider="unanimity")
    decision = transcript.decision
    assert decision.success and decision.turn == 2
    assert decision.answer == C and decision.details["draft"] == 1
    assert len(transcript.messages) == 4


@pytest.mark.parametrize(
    ("decider", "messages_needed"),
    [("majority_consensus", 2), ("supermajority_consensus", 2), ("unanimity_consensus", 3), ("hybrid_consensus", 3)],
)
def test_decider_consensus_thresholds_with_three_agents(decider, messages_needed):
    transcript, _ = debate({(1, 0): B, (1, 1): AGREE, (1, 2): AGREE}, decider=decider)
    assert len(transcript.messages) == messages_needed and transcript.decision.success


def test_decider_supermajority_with_four_agents_needs_three():
    script = {(1, 0): B, (1, 1): AGREE, (1, 2): "[DISAGREE] " + C, (1, 3): "[AGREE]", (2, 0): "[DISAGREE] " + B}
    # After turn 1: C backed by agents 3 and 4 (2/4). Turn 2: agent 1 re-drafts B (1/4) ...
    script.update({(2, 1): AGREE, (2, 2): AGREE})
    transcript, _ = debate(script, decider="supermajority", agents=4)
    # Turn 2: agent 1 drafts B, agents 2 and 3 agree -> 3/4 >= 2/3 after the third message of turn 2.
    assert transcript.decision.success and transcript.decision.turn == 2
    assert transcript.decision.details["backers"] == [0, 1, 2]
    assert len(transcript.messages) == 7


def test_decider_consensus_neutral_agents_do_not_count():
    # Agent 3 is neutral: agents 1 and 2 agreeing is unanimity among the voters.
    transcript, _ = debate({(1, 0): B, (1, 1): AGREE, (1, 2): C}, decider="unanimity", neutral=(2,))
    assert transcript.decision.success and transcript.decision.details["backers"] == [0, 1]
    assert len(transcript.messages) == 2


def test_decider_consensus_max_turns_fallback_is_recorded_as_failure():
    transcript, _ = debate(lambda turn, agent, purpose, messages: "[DISAGREE] " + (B if agent % 2 else C),
                           decider="unanimity", max_turns=3)
    decision = transcript.decision
    assert not decision.success and decision.turn == 3 and transcript.turns_used == 3
    assert decision.reason == "max_turns_fallback_current_draft"
    assert decision.answer == "Another view. Final Solution: C"  # the last message, by agent 3
    assert len(transcript.messages) == 9


def test_visible_turns_limits_what_agents_see():
    seen = {}

    def script(turn, agent, purpose, messages):
        seen[(turn, agent)] = messages[0]["content"]
        return f"[DISAGREE] turn{turn}-agent{agent} Final Solution: {'BC'[(turn + agent) % 2]}"

    debate(script, decider="unanimity", max_turns=4, paradigm_args={"visible_turns_in_memory": 1})
    prompt = seen[(4, 0)]
    assert "turn3-agent2" in prompt and "turn3-agent0" in prompt
    assert "turn2-agent2" not in prompt and "turn1-agent0" not in prompt
    assert "turn4-agent0" not in prompt
    assert "turn4-agent0" in seen[(4, 1)]


def test_first_message_says_nobody_proposed_a_solution():
    _, llm = debate({(1, 0): B, (1, 1): AGREE})
    system = llm.requests[0][3][0]["content"]
    assert "Nobody proposed a solution yet. Please provide the first one." in system
    assert "Current Solution:" not in system
    assert llm.requests[1][3][0]["content"].count("Current Solution: My answer. Final Solution: B") == 1


def test_collective_refinement_is_simultaneous_and_counting_decides():
    prompts = {}

    def script(turn, agent, purpose, messages):
        prompts[(turn, agent)] = messages[0]["content"]
        answer = {(1, 0): "B", (1, 1): "C", (1, 2): "C", (2, 0): "C", (2, 1): "C", (2, 2): "B"}[(turn, agent)]
        return f"t{turn}a{agent} Final Solution: {answer}"

    transcript, llm = debate(script, decider="counting", paradigm="collective_refinement", max_turns=2)
    assert all(prompts[(1, a)].count("Nobody proposed a solution yet") == 1 for a in range(3))
    for agent in range(3):
        assert all(f"t1a{other}" in prompts[(2, agent)] for other in range(3))
        assert not any(f"t2a{other}" in prompts[(2, agent)] for other in range(3))
    assert {m.step for m in transcript.messages} == {0}
    decision = transcript.decision
    assert decision.answer == "C" and decision.details["tally"] == {"C": 2, "B": 1}
    assert transcript.trajectory() == [["B", "C", "C"], ["C", "C", "B"]]


@pytest.mark.parametrize("visible, shown_turns", [({}, [2]), ({"visible_turns_in_memory": 2}, [1, 2])])
def test_collective_refinement_honours_visible_turns_in_memory(visible, shown_turns):
    prompts = {}

    def script(turn, agent, purpose, messages):
        prompts[(turn, agent)] = messages[0]["content"]
        return f"t{turn}a{agent} Final Solution: {'BC'[agent % 2]}"

    debate(script, decider="counting", paradigm="collective_refinement", max_turns=3, paradigm_args=visible)
    for agent in range(3):  # in turn 3: the last turn by default (1), the last two with 2
        shown = sorted({(t, a) for t in (1, 2, 3) for a in range(3) if f"t{t}a{a} " in prompts[(3, agent)]})
        assert shown == [(t, a) for t in shown_turns for a in range(3)]


def test_collective_refinement_refuses_zero_visible_turns():
    from madeval.errors import UsageError

    with pytest.raises(UsageError, match="visible_turns_in_memory 0 shows agents no answer"):
        debate({}, decider="counting", paradigm="collective_refinement", paradigm_args={"visible_turns_in_memory": 0})


def test_decider_counting_tie_goes_to_the_earliest_agent_and_is_recorded():
    script = {(1, 0): "Final Solution: C", (1, 1): "Final Solution: B"}
    transcript, _ = debate(script, decider="counting", paradigm="collective_refinement", agents=2, max_turns=1)
    assert transcript.decision.answer == "C" and transcript.decision.details["tie"] is True


def test_decider_consensus_cannot_run_on_a_simultaneous_paradigm():
    from madeval.errors import UsageError

    with pytest.raises(UsageError, match="counts agreement"):
        debate({}, decider="majority", paradigm="collective_refinement")


def _answer_letter(text):
    import re

    found = re.findall(r"Final Solution:\s*([A-Z])", text)
    return found[-1] if found else None


def _disagreeing(turn, agent, purpose, messages):
    """Every agent drafts its own answer (B or C) each turn; a ballot names solution 2."""
    return "2" if purpose == "vote" else "[DISAGREE] " + (B if (turn + agent) % 2 else C)


@pytest.mark.parametrize(("how", "script", "options", "decided", "votes"), [
    # (success, turn) by hand: B then two agreements is a majority at the second message of turn 1;
    # the unanimity of the turn-2 script is reached at turn 2's first message; agents that always
    # disagree reach no unanimity in 3 turns; counting decides after the last turn; all three
    # ballots name solution 2 at the first vote (turn 2), three vote calls.
    ("after a step, turn 1", {(1, 0): B, (1, 1): AGREE, (1, 2): AGREE}, {}, (True, 1), 0),
    ("after a step, turn 2", {(1, 0): B, (1, 1): "[DISAGREE] " + C, (1, 2): AGREE, (2, 0): AGREE},
     {"decider": "unanimity_consensus"}, (True, 2), 0),
    ("max-turns fallback", _disagreeing, {"decider": "unanimity_consensus"}, (False, 3), 0),
    ("after a turn, simultaneous steps", _disagreeing, {"decider": "counting", "paradigm": "collective_refinement"},
     (True, 3), 0),
    ("a vote after turn 2", _disagreeing, {"decider": "simple_voting", "decider_args": {"vote_after_turns": 2}},
     (True, 2), 3),
])
def test_a_replay_with_the_live_decider_goes_through_the_same_decide_loop(how, script, options, decided, votes):
    """Replaying a debate with the decider that ran it live stops where the live debate stopped
    and gives its decision and decider events (votes asked again of the same script)."""
    import asyncio
    import random

    from helpers import ScriptedLLM
    from madeval.core.components import TaskPrompt
    from madeval.core.plugins import registries
    from madeval.debate.replay import replay
    from madeval.run.plan import debate_setup
    from madeval.settings.config import DebateConfig

    config = DebateConfig(max_turns=3, **options)
    live, _ = debate(script, decider=config.decider, paradigm=config.paradigm, max_turns=config.max_turns,
                     decider_args=config.decider_args)
    again = ScriptedLLM(script)
    replayed = asyncio.run(replay(debate_setup(config, registries()), live, TaskPrompt("Answer.", "What is 2 + 2?"),
                                  lambda transcript: setattr(again, "transcript", transcript) or again,
                                  extract=_answer_letter, rng=random.Random(0)))
    assert (live.decision.success, live.decision.turn) == decided
    assert replayed.decision == live.decision, how
    assert (replayed.turns_used, replayed.messages, replayed.events) == (live.turns_used, live.messages, live.events)
    assert [r[2] for r in again.requests] == ["vote"] * votes  # the decider's own calls; no agent spoke again


def test_a_replay_refuses_recorded_steps_that_the_paradigm_does_not_yield():
    """The recorded steps are checked against the paradigm's: other speakers in a step, or a turn
    with recorded steps left over, is a ReplayMismatch naming the turn (and the step)."""
    import asyncio
    import random

    from madeval.core.components import Paradigm, Speaker, TaskPrompt
    from madeval.core.plugins import registries
    from madeval.debate.replay import ReplayMismatch, replay
    from madeval.run.plan import debate_setup
    from madeval.settings.config import DebateConfig

    class FirstTwoOnly(Paradigm):
        """Agents 1 and 2 speak in turn; agent 3 never does."""

        def turn(self, state):
            yield [Speaker(0)]
            yield [Speaker(1)]

    live, _ = debate(_disagreeing, decider="counting", max_turns=2)  # memory: agents 1, 2, 3 in turn
    assert [[m.agent for m in live.messages_in_turn(t)] for t in (1, 2)] == [[0, 1, 2], [0, 1, 2]]

    def replayed(paradigm):
        setup = debate_setup(DebateConfig(decider="counting", max_turns=2), registries())
        setup.paradigm = paradigm
        return asyncio.run(replay(setup, live, TaskPrompt("Answer.", "x"), lambda transcript: None,
                                  extract=_answer_letter, rng=random.Random(0)))

    with pytest.raises(ReplayMismatch, match="turn 1 step 1: stored speakers differ"):
        replayed(registries().paradigms.create("collective_refinement"))  # all three in one step
    with pytest.raises(ReplayMismatch, match="turn 1 has more stored steps than the paradigm yields"):
        replayed(FirstTwoOnly())
