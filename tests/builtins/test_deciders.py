"""Deciders with hand-computed outcomes: winners, ties, abstentions, unparseable votes, fallback."""

from __future__ import annotations

import pytest

from helpers import debate
from madeval.builtins.voting import ZERO_BASED, RankedVoting
from madeval.core.transcript import Transcript
from madeval.errors import UsageError

# Turn-1 positions in every voting test: agent 1 says A, agents 2 and 3 say B.
POSITIONS = {0: "I think A. Final Solution: A", 1: "[DISAGREE] Final Solution: B",
             2: "[DISAGREE] It is B. Final Solution: B"}


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
    ballots = {(1, 0): "1", (1, 1): "2", (1, 2): ["no idea"] * 3, (2, 0): "3", (2, 1): "3", (2, 2): "1"}
    # Turn 1: A one vote, B one vote, one abstention -> a tie between different answers.
    transcript, _ = run_vote("simple_voting", ballots, max_turns=3)
    first, second = votes(transcript)
    assert first["tie"] is True and first["winner"] is None and first["turn"] == 1
    assert first["answer_totals"] == {"a": 1.0, "b": 1.0}
    # Turn 2: solution 3 (B) two votes, solution 1 (A) one: B wins, as its first solution (2).
    assert second["totals"] == {"1": 1.0, "2": 0.0, "3": 2.0} and second["turn"] == 2
    assert second["answer_totals"] == {"a": 1.0, "b": 2.0} and second["winner"] == 2
    assert transcript.decision.turn == 2 and transcript.decision.answer == "B"


def test_decider_simple_voting_votes_split_between_same_answer_solutions_still_win():
    # Solutions A, B, B. Agents 2 and 3 each vote for their own B solution, agent 1 for A:
    # per solution 1 : 1 : 1, per answer A 1, B 2 -> B wins in turn 1 (no tie).
    transcript, _ = run_vote("simple_voting", {(1, 0): "1", (1, 1): "2", (1, 2): "3"})
    event = votes(transcript)[0]
    assert event["totals"] == {"1": 1.0, "2": 1.0, "3": 1.0} and event["answer_totals"] == {"a": 1.0, "b": 2.0}
    assert event["winner"] == 2 and not event["tie"]
    assert (transcript.decision.turn, transcript.decision.answer) == (1, "B")


def test_decider_tie_between_solutions_with_the_same_answer_is_no_tie():
    ballots = {(1, 0): "2", (1, 1): "3", (1, 2): ["no idea"] * 3}
    transcript, _ = run_vote("simple_voting", ballots)
    event = votes(transcript)[0]
    assert event["totals"] == {"1": 0.0, "2": 1.0, "3": 1.0}
    assert event["winner"] == 2 and transcript.decision.answer == "B"


@pytest.mark.parametrize(("unreadable", "reread", "others"), [
    ("I like the last two", 3, ("3", "1")),
    ("2.5", 2, ("1", "2")),  # a decimal is no solution number
])
def test_decider_unparseable_vote_is_reasked_then_counted(unreadable, reread, others):
    ballots = {(1, 0): [unreadable, str(reread)], (1, 1): others[0], (1, 2): others[1]}
    transcript, llm = run_vote("simple_voting", ballots)
    ballot = votes(transcript)[0]["ballots"][0]
    assert ballot["replies"] == [unreadable, str(reread)] and ballot["ballot"] == reread
    assert ballot["problems"] == ["expected one solution number between 1 and 3"]
    reask = [r for r in llm.requests if r[1] == 0 and r[2] == "vote"][1][3]
    assert reask[-2]["content"] == unreadable and "could not be read" in reask[-1]["content"]
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
    # N = 3: first place 3 points, second 2, third 1. "0 2 3" names 3 = N, so it is not a 0-based
    # ranking: "0" is not a solution and is ignored.
    transcript, _ = run_vote("ranked_voting", {(1, 0): "1 2 3", (1, 1): "0 2 3", (1, 2): "3 2 1"})
    event = votes(transcript)[0]
    assert [b["ballot"] for b in event["ballots"]] == [[1, 2, 3], [2, 3], [3, 2, 1]]
    # 1: 3 + 0 + 1 = 4; 2: 2 + 3 + 2 = 7; 3: 1 + 2 + 3 = 6
    assert event["totals"] == {"1": 4.0, "2": 7.0, "3": 6.0} and event["winner"] == 2


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


@pytest.mark.parametrize(("decider", "args", "message"), [
    ("simple_voting", {}, "decider 'simple_voting' votes after 3 turns, but max_turns is 2: it would never vote"),
    ("judge", {}, "decider 'judge' decides after 3 turns, but max_turns is 2: it would never decide"),
    ("judge", {"after_turns": 0}, "decider 'judge': after_turns must be at least 1"),
])
def test_decider_vote_after_more_turns_than_max_turns_fails_at_start(decider, args, message):
    with pytest.raises(UsageError, match=message):
        debate({}, decider=decider, decider_args=args, max_turns=2)


def test_decider_llm_extraction_asks_each_agent():
    ballots = {(1, a): "1" for a in range(3)}

    def script(turn, agent, purpose, messages):
        if purpose == "extraction":
            assert "Extract the final solution to the task" in messages[1]["content"]
            return f"extracted-{agent}"
        return voting_script(ballots)(turn, agent, purpose, messages)

    transcript, llm = debate(script, decider="simple_voting", decider_args={"vote_after_turns": 1}, max_turns=1,
                             extract_mode="llm")
    assert sorted(r[1] for r in llm.requests if r[2] == "extraction") == [0, 1, 2]
    assert transcript.decision.answer == "extracted-0"


def test_decider_counting_ignores_neutral_agents():
    script = {(1, 0): "Final Solution: C", (1, 1): "Final Solution: B", (1, 2): "Final Solution: B"}
    transcript, _ = debate(script, decider="counting", paradigm="collective_refinement", max_turns=1, neutral=(1,))
    assert transcript.decision.details["answers"] == ["C", "B"] and transcript.decision.details["tie"]
    assert transcript.decision.answer == "C"


def vote_calls(llm):
    return [(r[0], r[1]) for r in llm.requests if r[2] == "vote"]


EVERY_AGENT_TWICE = [(1, 0), (1, 1), (1, 2), (2, 0), (2, 1), (2, 2)]


# --- numbers followed by a full stop; 0-based rankings ---------------------------------------------


@pytest.mark.parametrize("reply", ["2.", "Solution 2.", "I vote for Solution 2.", "**2**"])
def test_decider_simple_voting_reads_a_number_followed_by_a_full_stop(reply):
    transcript, llm = run_vote("simple_voting", {(1, a): reply for a in range(3)})
    event = votes(transcript)[0]
    assert [b["ballot"] for b in event["ballots"]] == [2, 2, 2]
    assert [b["replies"] for b in event["ballots"]] == [[reply]] * 3  # read at once, no re-ask
    assert event["totals"] == {"1": 0.0, "2": 3.0, "3": 0.0} and transcript.decision.answer == "B"
    assert len(vote_calls(llm)) == 3


def test_decider_approval_voting_reads_numbers_followed_by_a_full_stop():
    transcript, _ = run_vote("approval_voting", {(1, 0): "1, 2.", (1, 1): "1 and 3.", (1, 2): "1."})
    event = votes(transcript)[0]
    assert [b["ballot"] for b in event["ballots"]] == [[1, 2], [1, 3], [1]]
    assert event["totals"] == {"1": 3.0, "2": 1.0, "3": 1.0} and transcript.decision.answer == "A"


def test_decider_ranked_voting_reads_a_trailing_full_stop_and_a_numbered_list():
    ballots = {(1, 0): "3 1 2.", (1, 1): "1. Solution 3\n2. Solution 2\n3. Solution 1", (1, 2): "1 3 2"}
    transcript, _ = run_vote("ranked_voting", ballots)
    event = votes(transcript)[0]
    assert [b["ballot"] for b in event["ballots"]] == [[3, 1, 2], [3, 2, 1], [1, 3, 2]]
    # 1: 2 + 1 + 3 = 6; 2: 1 + 2 + 1 = 4; 3: 3 + 3 + 2 = 8
    assert event["totals"] == {"1": 6.0, "2": 4.0, "3": 8.0} and transcript.decision.answer == "B"


def test_decider_ranked_voting_shifts_a_zero_based_ranking_and_records_it():
    # "0 2 1" copies the prompt's 0-based example: a permutation of 0..2 -> [1, 3, 2].
    ballots = {(1, 0): "0 2 1", (1, 1): "2 3 1", (1, 2): "0 2 3"}
    transcript, llm = run_vote("ranked_voting", ballots)
    event = votes(transcript)[0]
    assert [b["ballot"] for b in event["ballots"]] == [[1, 3, 2], [2, 3, 1], [2, 3]]
    assert [b["note"] for b in event["ballots"]] == [ZERO_BASED, None, None]
    # 1: 3 + 1 + 0 = 4; 2: 1 + 3 + 3 = 7; 3: 2 + 2 + 2 = 6
    assert event["totals"] == {"1": 4.0, "2": 7.0, "3": 6.0} and event["winner"] == 2
    prompt = next(r for r in llm.requests if r[2] == "vote")[3][1]["content"]
    assert "Example: '0 2 1' if you prefer Solution 0 the most" in prompt  # the prompt stays verbatim


@pytest.mark.parametrize(
    ("reply", "count", "expected"),
    [
        ("0 2 1", 3, ([1, 3, 2], ZERO_BASED)),
        ("0 4 2 1 3 5 6", 7, ([1, 5, 3, 2, 4], ZERO_BASED)),  # shifted, then the first 5 count
        ("0 4 2 1 3", 7, ([1, 5, 3, 2, 4], ZERO_BASED)),  # the 5 rankings the prompt asks for
        ("0 2", 3, ([2], None)),  # incomplete: not read as 0-based, 0 is ignored
        ("0 2 3", 3, ([2, 3], None)),  # 3 = N cannot be 0-based
        ("2 3 1", 3, ([2, 3, 1], None)),
    ],
)
def test_decider_ranked_voting_zero_based_rule(reply, count, expected):
    assert RankedVoting().read_ballot(reply, count) == expected


# --- ties: one more turn and a new vote ------------------------------------------------------------


@pytest.mark.parametrize(("decider", "ballots", "first_totals", "second_totals", "answer_totals"), [
    pytest.param("approval_voting",
                 {(1, 0): "1", (1, 1): "2", (1, 2): "1, 2",  # 1 (A): 2, 2 (B): 2 -> tie
                  (2, 0): "1", (2, 1): "2, 3", (2, 2): "2"},  # 1: 1, 2: 2, 3: 1 -> 2 wins
                 {"1": 2.0, "2": 2.0, "3": 0.0}, {"1": 1.0, "2": 2.0, "3": 1.0},
                 ({"a": 2.0, "b": 2.0}, {"a": 1.0, "b": 3.0}), id="approval"),
    # Borda with 3 solutions: first place 3 points, second 2, third 1. Solutions: 1 = A, 2 and 3 = B.
    pytest.param("ranked_voting",
                 {(1, 0): "1 2 3", (1, 1): "1 3 2", (1, 2): "1 2 3",  # 1: 9, 2: 2+1+2, 3: 1+2+1 -> A 9, B 9
                  (2, 0): "1 2 3", (2, 1): "2 3 1", (2, 2): "3 2 1"},  # 1: 3+1+1, 2: 2+3+2, 3: 1+2+3 -> A 5, B 13
                 {"1": 9.0, "2": 5.0, "3": 4.0}, {"1": 5.0, "2": 7.0, "3": 6.0},
                 ({"a": 9.0, "b": 9.0}, {"a": 5.0, "b": 13.0}), id="ranked"),
    pytest.param("cumulative_voting",
                 {(1, 0): '{"1": 10}', (1, 1): '{"2": 10}', (1, 2): '{"1": 5, "2": 5}',  # 15 : 15 : 0
                  (2, 0): '{"1": 10}', (2, 1): '{"2": 6, "3": 4}', (2, 2): '{"3": 10}'},  # 10 : 6 : 14
                 {"1": 15.0, "2": 15.0, "3": 0.0}, {"1": 10.0, "2": 6.0, "3": 14.0},
                 ({"a": 15.0, "b": 15.0}, {"a": 10.0, "b": 20.0}), id="cumulative"),
])
def test_decider_tie_means_another_turn_then_a_new_vote(decider, ballots, first_totals, second_totals,
                                                         answer_totals):
    transcript, llm = run_vote(decider, ballots, max_turns=3)
    first, second = votes(transcript)
    assert first["totals"] == first_totals and first["answer_totals"] == answer_totals[0]
    assert first["tie"] and first["winner"] is None
    assert second["totals"] == second_totals and second["answer_totals"] == answer_totals[1]
    assert second["winner"] == 2
    assert transcript.turns_used == 2 and transcript.decision.turn == 2
    # Turn 2: B wins, returned as its first solution (2, agent 2's)
    assert transcript.decision.answer == "B" and transcript.decision.details["agents"] == [1]
    assert sorted(vote_calls(llm)) == EVERY_AGENT_TWICE


def test_decider_consensus_voting_tie_means_another_turn_then_a_new_vote():
    positions = {0: "Final Solution: A", 1: "[DISAGREE] Final Solution: B", 2: "[DISAGREE] Final Solution: C"}
    ballots = {(1, 0): "1", (1, 1): "2", (1, 2): "3",  # one vote each for A, B, C
               (2, 0): "2", (2, 1): "2", (2, 2): "3"}
    transcript, llm = debate(voting_script(ballots, positions), decider="consensus_voting", max_turns=3)
    first, second = votes(transcript)
    assert [s["text"] for s in first["solutions"]] == ["A", "B", "C"]
    assert first["totals"] == {"1": 1.0, "2": 1.0, "3": 1.0} and first["tie"] and first["winner"] is None
    assert second["totals"] == {"1": 0.0, "2": 2.0, "3": 1.0} and second["winner"] == 2
    assert transcript.turns_used == 2 and transcript.decision.turn == 2 and transcript.decision.answer == "B"
    assert sorted(vote_calls(llm)) == EVERY_AGENT_TWICE


# --- max-turns fallbacks --------------------------------------------------------------------------

# Agent 1 votes for solution 1 (A), agent 2 for solution 2 (B), agent 3's ballot is unreadable:
# a tie between different answers in every turn.
TIED = {
    "simple_voting": ("1", "2"),
    "approval_voting": ("1", "2"),
    "ranked_voting": ("1", "2"),  # partial rankings: 3 points each
    "cumulative_voting": ('{"1": 10}', '{"2": 10}'),
    "consensus_voting": ("1", "2"),  # the ballot lists A and B (agents 2 and 3 merged)
}


@pytest.mark.parametrize("decider", sorted(TIED))
def test_decider_voting_max_turns_fallback_after_ties_is_the_first_agents_solution(decider):
    first, second = TIED[decider]
    ballots = {(turn, agent): reply for turn in (1, 2) for agent, reply in enumerate((first, second, "?"))}
    transcript, llm = run_vote(decider, ballots, max_turns=2, max_reasks=0)
    decision = transcript.decision
    assert (decision.success, decision.turn, decision.decider) == (False, 2, decider)
    assert decision.reason == "max_turns_fallback_first_agent" and decision.details == {"agent": 0}
    assert decision.answer == "I think A. Final Solution: A"
    assert [(e["turn"], e["tie"], e["winner"]) for e in votes(transcript)] == [(1, True, None), (2, True, None)]
    assert sorted(vote_calls(llm)) == EVERY_AGENT_TWICE


def never_agreeing(turn, agent, purpose, messages):
    return "Final Solution: A" if agent == 0 else f"[DISAGREE] Final Solution: {'BC'[agent - 1]}"


@pytest.mark.parametrize("decider", ["majority_consensus", "supermajority_consensus", "hybrid_consensus"])
def test_decider_consensus_max_turns_fallback_is_the_current_draft(decider):
    # Every draft is backed by its author alone (1/3): no threshold is met in 2 turns. The
    # fallback is the current draft (agent 3's last message), as documented, not agent 1's.
    transcript, _ = debate(never_agreeing, decider=decider, max_turns=2)
    decision = transcript.decision
    assert (decision.success, decision.turn, decision.decider) == (False, 2, decider)
    assert decision.reason == "max_turns_fallback_current_draft" and decision.details == {"draft": 5}
    assert decision.answer == "Final Solution: C"
    checks = [e for e in transcript.events if e["kind"] == "consensus_check"]
    assert len(checks) == 6 and not any(c["reached"] for c in checks)
    assert {c["share"] for c in checks} == {1 / 3}


def test_decider_judge_max_turns_fallback_is_the_first_agents_solution():
    ballots = {(1, None): "", (2, None): "   \n"}
    transcript, llm = debate(voting_script(ballots), decider="judge", decider_args={"after_turns": 1}, max_turns=2)
    decision = transcript.decision
    assert (decision.success, decision.turn, decision.reason) == (False, 2, "max_turns_fallback_first_agent")
    assert decision.answer == "I think A. Final Solution: A"
    assert [(r[0], r[1]) for r in llm.requests if r[2] == "judge"] == [(1, None), (2, None)]
    assert [e["verdict"] for e in transcript.events if e["kind"] == "judge"] == ["", "   \n"]


def test_decider_judge_empty_reply_means_one_more_turn():
    ballots = {(1, None): "", (2, None): "Final Solution: B"}
    transcript, llm = debate(voting_script(ballots), decider="judge", decider_args={"after_turns": 1}, max_turns=3)
    decision = transcript.decision
    assert (decision.success, decision.turn, decision.answer) == (True, 2, "Final Solution: B")
    assert transcript.turns_used == 2
    assert [r[0] for r in llm.requests if r[2] == "judge"] == [1, 2]


def test_decider_counting_with_no_extractable_answer_fails():
    transcript, llm = debate(lambda turn, agent, purpose, messages: "I am not sure.", decider="counting", max_turns=1)
    decision = transcript.decision
    assert (decision.answer, decision.success, decision.reason) == (None, False, "no_answers")
    assert decision.details == {"answers": [None, None, None], "tally": {}, "tie": False}
    assert [r[2] for r in llm.requests] == ["draft", "improve", "improve"]  # no call of its own


# --- parse failures per debate ----------------------------------------------------------------------


def test_decider_parse_failures_are_counted_per_debate():
    expert = '{"role": "Mathematician", "description": "Checks arithmetic."}'
    replies = {0: "I think A. Final Solution: A", 1: "Maybe B?", 2: "[DISAGREE] Final Solution: B"}
    ballots = {0: "1", 1: "?", 2: "3"}

    def script(turn, agent, purpose, messages):
        if purpose == "persona":
            return "no JSON here" if agent == 1 else expert
        if purpose == "vote":
            return ballots[agent]
        if purpose == "challenge":
            return "Hmm." if agent == 2 else "AGREE"
        return replies[agent]

    transcript, _ = debate(script, decider="simple_voting", decider_args={"vote_after_turns": 1, "max_reasks": 1},
                           max_turns=1, persona="expert", challenges=("plain",))
    expected = {
        "vote_abstentions": 1,  # agent 2's ballot, asked twice
        "unreadable_agreements": 2,  # agent 2's "Maybe B?" and agent 3's challenge reply "Hmm."
        "unparseable_solutions": 1,  # "Maybe B?" proposes a solution with no answer in it
        "persona_fallbacks": 1,  # agent 2's persona
    }
    assert transcript.parse_failures() == expected
    assert Transcript.from_dict(transcript.to_dict()).parse_failures() == expected


def test_decider_parse_failures_of_a_clean_debate_are_zero():
    transcript, _ = run_vote("simple_voting", {(1, 0): "2", (1, 1): "2", (1, 2): "1"})
    assert transcript.parse_failures() == {
        "vote_abstentions": 0, "unreadable_agreements": 0, "unparseable_solutions": 0, "persona_fallbacks": 0,
    }
