"""Deciders with hand-computed outcomes: winners, ties, abstentions, unparseable votes, fallback."""

from __future__ import annotations

import pytest

from madeval.errors import UsageError
from helpers import debate

# Turn-1 positions in every voting test: agent 1 says A, agents 2 and 3 say B.
POSITIONS = {0: "I think A. Final Solution: A", 1: "[DISAGREE] Final Solution: B", 2: "[DISAGREE] It is B. Final Solution: B"}


def voting_script(ballots, positions=POSITIONS):
    """Replies: ``positions`` for debate turns; ``ballots[(turn, agent)]`` (a list for re-asks) for votes."""
    asked = {}

    def script(turn, agent, purpose, messages):
        if purpose in ("vote", "judge"):
            replies = ballots[(turn, agent)]
            if isinstance(replies, str):
                return replies
            count = asked.get((turn, agent), 0)
            asked[(turn, agent)] = count + 1
            return replies[min(count, len(replies) - 1)]
        return positions[agent] if not isinstance(positions, dict) or agent in positions else ""

    return script


def run_vote(decider, ballots, max_turns=1, **options):
    args = {"vote_after_turns": 1, **options}
    return debate(voting_script(ballots), decider=decider, decider_args=args, max_turns=max_turns)


def votes(transcript):
    return [e for e in transcript.events if e["kind"] == "vote"]


def test_decider_simple_voting_clear_winner():
    transcript, llm = run_vote("simple_voting", {(1, 0): "2", (1, 1): "2", (1, 2): "1"})
    decision = transcript.decision
    assert (decision.success, decision.turn, decision.answer) == (True, 1, "B")
    event = votes(transcript)[0]
    assert [s["text"] for s in event["solutions"]] == ["A", "B", "B"]
    assert event["totals"] == {"1": 1.0, "2": 2.0, "3": 0.0} and event["winner"] == 2
    assert [b["ballot"] for b in event["ballots"]] == [2, 2, 1]
    assert sum(1 for r in llm.requests if r[2] == "vote") == 3


def test_decider_simple_voting_tie_means_another_turn_then_a_new_vote():
    ballots = {(1, 0): "1", (1, 1): "2", (2, 0): "3", (2, 1): "3", (2, 2): "1", (1, 2): "3"}
    # Turn 1: A, B and B get one vote each -> a tie between different answers.
    transcript, _ = run_vote("simple_voting", ballots, max_turns=3)
    first, second = votes(transcript)
    assert first["tie"] is True and first["winner"] is None and first["turn"] == 1
    assert second["totals"] == {"1": 1.0, "2": 0.0, "3": 2.0} and second["turn"] == 2
    assert transcript.decision.turn == 2 and transcript.decision.answer == "B"


def test_decider_tie_between_solutions_with_the_same_answer_is_no_tie():
    ballots = {(1, 0): "2", (1, 1): "3", (1, 2): ["no idea"] * 3}
    transcript, _ = run_vote("simple_voting", ballots)
    event = votes(transcript)[0]
    assert event["totals"] == {"1": 0.0, "2": 1.0, "3": 1.0}
    assert event["winner"] == 2 and transcript.decision.answer == "B"


def test_decider_unparseable_vote_is_reasked_then_counted():
    ballots = {(1, 0): ["I like the last two", "3"], (1, 1): "3", (1, 2): "1"}
    transcript, llm = run_vote("simple_voting", ballots)
    ballot = votes(transcript)[0]["ballots"][0]
    assert ballot["replies"] == ["I like the last two", "3"] and ballot["ballot"] == 3
    assert ballot["problems"] == ["expected one solution number between 1 and 3"]
    reask = [r for r in llm.requests if r[1] == 0 and r[2] == "vote"][1][3]
    assert reask[-2]["content"] == "I like the last two" and "could not be read" in reask[-1]["content"]
    assert transcript.decision.answer == "B"


def test_decider_abstention_after_bounded_reasks():
    ballots = {(1, 0): ["pass"] * 9, (1, 1): "1", (1, 2): "1"}
    transcript, llm = run_vote("simple_voting", ballots, max_reasks=2)
    ballot = votes(transcript)[0]["ballots"][0]
    assert ballot["abstained"] is True and ballot["ballot"] is None and len(ballot["replies"]) == 3
    assert sum(1 for r in llm.requests if r[1] == 0 and r[2] == "vote") == 3
    assert transcript.decision.answer == "A"


def test_decider_max_turns_fallback_is_the_first_agents_solution():
    ballots = {(turn, agent): ["?"] for turn in (1, 2) for agent in range(3)}
    transcript, _ = run_vote("simple_voting", ballots, max_turns=2, max_reasks=0)
    decision = transcript.decision
    assert decision.success is False and decision.reason == "max_turns_fallback_first_agent"
    assert decision.answer == "I think A. Final Solution: A" and decision.turn == 2
    assert [e["winner"] for e in votes(transcript)] == [None, None]


def test_decider_voting_starts_after_three_turns_by_default():
    ballots = {(3, a): "2" for a in range(3)}
    transcript, _ = debate(voting_script(ballots), decider="simple_voting", max_turns=5)
    assert [e["turn"] for e in votes(transcript)] == [3]
    assert transcript.decision.turn == 3 and transcript.turns_used == 3


def test_decider_approval_voting():
    transcript, _ = run_vote("approval_voting", {(1, 0): "1, 2", (1, 1): "2", (1, 2): "2,3"})
    assert votes(transcript)[0]["totals"] == {"1": 1.0, "2": 3.0, "3": 1.0}
    assert transcript.decision.details["winner"] == 2


def test_decider_ranked_voting_borda():
    # N = 3: first place 3 points, second 2, third 1. "0" is not a solution and is ignored.
    transcript, _ = run_vote("ranked_voting", {(1, 0): "1 2 3", (1, 1): "0 2 1", (1, 2): "3 2 1"})
    event = votes(transcript)[0]
    assert [b["ballot"] for b in event["ballots"]] == [[1, 2, 3], [2, 1], [3, 2, 1]]
    assert event["totals"] == {"1": 6.0, "2": 7.0, "3": 4.0} and event["winner"] == 2


def test_decider_cumulative_voting_default_budget_is_ten():
    ballots = {(1, 0): ['{"1": 6, "2": 4}'], (1, 1): ['{"1": 8, "2": 7}', '{"2": 10}'], (1, 2): '{"3": 5, "1": 5}'}
    transcript, _ = run_vote("cumulative_voting", ballots)
    event = votes(transcript)[0]
    assert event["ballots"][1]["problems"] == ["the points must add up to at most 10 (got 15)"]
    assert event["totals"] == {"1": 11.0, "2": 14.0, "3": 5.0} and event["winner"] == 2


def test_decider_cumulative_voting_budget_option():
    ballots = {(1, 0): '{"1": 25}', (1, 1): '{"3": 20, "2": 5}', (1, 2): '{"4": 1}'}
    transcript, llm = run_vote("cumulative_voting", ballots, points=25, max_reasks=0)
    event = votes(transcript)[0]
    assert event["ballots"][2]["abstained"] and event["ballots"][2]["problems"] == ["solution 4 does not exist"]
    assert event["totals"] == {"1": 25.0, "2": 5.0, "3": 20.0}
    assert "distributing 25 points" in [r for r in llm.requests if r[2] == "vote"][0][3][1]["content"]


def test_decider_consensus_voting_merges_equal_answers():
    transcript, _ = run_vote("consensus_voting", {(1, 0): "2", (1, 1): "2", (1, 2): "1"})
    event = votes(transcript)[0]
    assert [(s["agents"], s["text"]) for s in event["solutions"]] == [([0], "A"), ([1, 2], "B")]
    assert transcript.decision.answer == "B" and transcript.decision.details["agents"] == [1, 2]


def test_decider_judge_reviews_final_solutions():
    transcript, llm = debate(voting_script({(1, None): "Combining them: Final Solution: B"}), decider="judge",
                             decider_args={"after_turns": 1}, max_turns=1)
    judge = [r for r in llm.requests if r[2] == "judge"]
    assert len(judge) == 1 and judge[0][1] is None
    assert "Solution 1: A\nSolution 2: B\nSolution 3: B" in judge[0][3][0]["content"]
    assert transcript.decision.answer == "Combining them: Final Solution: B" and transcript.decision.success


def test_decider_vote_after_more_turns_than_max_turns_fails_at_start():
    with pytest.raises(UsageError, match="votes after 3 turns, but max_turns is 2: it would never vote"):
        debate({}, decider="simple_voting", max_turns=2)


def test_decider_llm_extraction_asks_each_agent():
    ballots = {(1, a): "1" for a in range(3)}

    def script(turn, agent, purpose, messages):
        if purpose == "extraction":
            assert "Extract the final solution to the task" in messages[1]["content"]
            return f"extracted-{agent}"
        return voting_script(ballots)(turn, agent, purpose, messages)

    transcript, llm = debate(script, decider="simple_voting", decider_args={"vote_after_turns": 1}, max_turns=1,
                             extract="llm")
    assert sorted(r[1] for r in llm.requests if r[2] == "extraction") == [0, 1, 2]
    assert transcript.decision.answer == "extracted-0"


def test_decider_counting_ignores_neutral_agents():
    script = {(1, 0): "Final Solution: C", (1, 1): "Final Solution: B", (1, 2): "Final Solution: B"}
    transcript, _ = debate(script, decider="counting", paradigm="collective_refinement", max_turns=1, neutral=(1,))
    assert transcript.decision.details["answers"] == ["C", "B"] and transcript.decision.details["tie"]
    assert transcript.decision.answer == "C"
