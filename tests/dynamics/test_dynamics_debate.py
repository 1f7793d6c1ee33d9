"""Per-debate dynamics (madeval.analysis.debate_facts) on debates written by hand, one per branch of the
definitions: votes and ties, unparsed answers, agents that did not speak, moderators, one agent."""

from __future__ import annotations

import json

import pytest

from dynamics_records import debate_record
from madeval.analysis.answer_scoring import answer_scorer, why_no_scorer
from madeval.analysis.debate_facts import MAX_TURNS, TurnAnswers
from madeval.dynamics import debate_facts, turn_answers
from madeval.errors import UsageError


def exact(answer, target):
    """Right when the answer is the gold letter (the tests' stand-in for accuracy)."""
    return 1.0 if answer == target else 0.0


def record(turns, **given):
    """A record as madeval stores it; ``turns`` lists each turn's messages as (agent, answer)."""
    metric = given.pop("metric", "accuracy")
    return debate_record(turns, metrics={metric: given.pop("final", 0.0)}, **given)


def test_votes_drift_oracle_gap_and_transitions_of_a_debate_that_went_wrong():
    # turn 1: A B A -> A (right); turn 2: B B A -> B (wrong); turn 3: B B B -> B, unanimous
    facts = debate_facts(record([[(0, "A"), (1, "B"), (2, "A")], [(0, "B"), (1, "B"), (2, "A")],
                                 [(0, "B"), (1, "B"), (2, "B")]], final=0.0), score=exact)
    assert facts.answers == [["A", "B", "A"], ["B", "B", "A"], ["B", "B", "B"]]
    assert facts.votes == ["A", "B", "B"]
    assert facts.vote_right == [True, False, False]
    assert facts.unanimous == [False, False, True]
    assert facts.first_turn_vote_right is True
    assert (facts.final, facts.final_right) == (0.0, False)
    assert facts.drift is True and facts.recovered is False
    assert facts.oracle_gap is True  # agents 0 and 2 held A; the decision is wrong
    assert facts.transitions == {"correct_to_correct": 0, "correct_to_wrong": 2, "wrong_to_correct": 0,
                                 "wrong_to_wrong": 1}
    assert facts.unparsed == 0 and facts.turns == 3


def test_a_debate_that_drifts_and_recovers():
    # right, wrong, right: drift and recovered; no oracle gap since the decision is right
    facts = debate_facts(record([[(0, "A"), (1, "A"), (2, "C")], [(0, "C"), (1, "C"), (2, "C")],
                                 [(0, "A"), (1, "A"), (2, "C")]], final=1.0), score=exact)
    assert facts.vote_right == [True, False, True]
    assert facts.drift is True and facts.recovered is True
    assert facts.oracle_gap is False
    assert facts.transitions == {"correct_to_correct": 2, "correct_to_wrong": 0, "wrong_to_correct": 0,
                                 "wrong_to_wrong": 1}


def test_wrong_then_right_is_no_drift():
    facts = debate_facts(record([[(0, "B"), (1, "B"), (2, "A")], [(0, "A"), (1, "A"), (2, "A")]], final=1.0),
                         score=exact)
    assert facts.vote_right == [False, True]
    assert (facts.drift, facts.recovered, facts.oracle_gap) == (False, False, False)
    assert facts.transitions["wrong_to_correct"] == 2 and facts.transitions["correct_to_correct"] == 1


def test_a_tie_goes_to_the_answer_given_first_in_message_order():
    # agent 1 speaks before agent 0: their answers tie 1-1 and the first message's answer wins
    first_c = debate_facts(record([[(1, "C"), (0, "A")]], agents=2), score=exact)
    first_a = debate_facts(record([[(0, "A"), (1, "C")]], agents=2), score=exact)
    assert first_c.votes == ["C"] and first_c.vote_right == [False]
    assert first_a.votes == ["A"] and first_a.vote_right == [True]
    assert first_c.answers == [["A", "C"]]  # answers are listed in agent order


def test_an_agents_last_message_of_the_turn_is_its_answer_and_sets_its_place_in_the_order():
    # agent 0 says A, agent 1 says C, then agent 0 changes to D: the tie C-D goes to C (message 1)
    facts = debate_facts(record([[(0, "A"), (1, "C"), (0, "D")]], agents=2, target="C"), score=exact)
    assert facts.answers == [["D", "C"]]
    assert facts.votes == ["C"] and facts.vote_right == [True]


def test_unparsed_answers_do_not_vote_and_a_turn_without_any_votes_wrong():
    facts = debate_facts(record([[(0, None), (1, None), (2, None)], [(0, None), (1, "A"), (2, "B")]], final=1.0),
                         score=exact)
    assert facts.votes == [None, "A"]  # turn 2: A and B tie, A came first
    assert facts.vote_right == [False, True]
    assert facts.first_turn_vote_right is False
    assert facts.unanimous == [False, False]
    assert facts.unparsed == 4
    assert facts.transitions == {"correct_to_correct": 0, "correct_to_wrong": 0, "wrong_to_correct": 1,
                                 "wrong_to_wrong": 2}


def test_unanimity_needs_every_voter_parsed_and_equal():
    facts = debate_facts(record([[(0, "B"), (1, "B"), (2, None)], [(0, "B"), (1, "B"), (2, "B")]]), score=exact)
    assert facts.unanimous == [False, True]


def test_an_agent_that_did_not_speak_keeps_its_answer_of_the_turn_before():
    # the debate was decided after agent 1 spoke in turn 2: agent 2 still holds its turn-1 answer, which
    # also comes first in message order (its message is older), so the B-A tie goes to its A
    facts = debate_facts(record([[(0, "A"), (1, "B"), (2, "A")], [(0, "B"), (1, "A")]], final=1.0), score=exact)
    assert facts.answers == [["A", "B", "A"], ["B", "A", "A"]]
    assert facts.votes == ["A", "A"]
    # an agent with no message yet holds nothing
    late = debate_facts(record([[(0, "A")], [(0, "A"), (1, "A")]], agents=2), score=exact)
    assert late.answers == [["A", None], ["A", "A"]]
    assert late.spoken == [[True, False], [True, True]]
    assert late.unparsed == 0 and late.unanimous == [False, True]  # no answer yet is not an unparsed one
    assert late.transitions == {"correct_to_correct": 1, "correct_to_wrong": 0, "wrong_to_correct": 1,
                                "wrong_to_wrong": 0}


def test_an_agent_that_never_spoke_has_no_transition_and_breaks_unanimity():
    # a consensus reached after two of three agents spoke: the third never spoke
    facts = debate_facts(record([[(0, "A"), (1, "A")]]), score=exact)
    assert facts.answers == [["A", "A", None]] and facts.unanimous == [False]
    assert facts.votes == ["A"] and facts.unparsed == 0
    assert facts.transitions == {"correct_to_correct": 2, "correct_to_wrong": 0, "wrong_to_correct": 0,
                                 "wrong_to_wrong": 0}


def test_neutral_agents_do_not_vote():
    # agent 0 is a moderator: its B would tie the vote of turn 1 and win it (first message)
    facts = debate_facts(record([[(0, "B"), (1, "A"), (2, "B"), (3, "A")]], agents=4, neutral=(0,)), score=exact)
    assert facts.voters == [1, 2, 3]
    assert facts.answers == [["A", "B", "A"]]
    assert facts.votes == ["A"]


def test_a_single_agent_has_transitions_and_its_own_answer_as_the_vote():
    facts = debate_facts(record([[(0, "A")], [(0, "B")]], agents=1), score=exact)
    assert facts.votes == ["A", "B"] and facts.unanimous == [True, True]
    assert facts.transitions == {"correct_to_correct": 0, "correct_to_wrong": 1, "wrong_to_correct": 0,
                                 "wrong_to_wrong": 0}
    assert facts.drift is True and facts.oracle_gap is True


def test_the_compact_form_the_leaderboard_keeps_gives_the_same_facts():
    full = record([[(0, "A"), (1, "B"), (2, "A")], [(0, "B"), (1, "A")]], final=1.0)
    compact = {key: value for key, value in full.items() if key != "transcript"}
    compact["turn_answers"] = json.loads(json.dumps(turn_answers(full).to_dict()))
    assert debate_facts(compact, score=exact) == debate_facts(full, score=exact)
    assert TurnAnswers.from_dict(compact["turn_answers"]) == turn_answers(full)


def test_each_distinct_answer_is_scored_once():
    calls = []

    def counting(answer, target):
        calls.append(answer)
        return exact(answer, target)

    debate_facts(record([[(0, "A"), (1, "B"), (2, "A")], [(0, "A"), (1, "A"), (2, "A")]]), score=counting)
    assert sorted(calls) == ["A", "B"]
    # the decision's own answer takes the record's score (here 1: as the record says, not as exact would)
    calls.clear()
    decided = record([[(0, "A"), (1, "B"), (2, "C")]], final=1.0)
    decided["prediction"] = "C"
    facts = debate_facts(decided, score=counting)
    assert sorted(calls) == ["A", "B"] and facts.answer_right == [[True, False, True]]


def test_to_dict_is_dataclasses_asdict_with_the_turn_count():
    import dataclasses

    facts = debate_facts(record([[(0, "A"), (1, "B"), (2, "A")], [(0, "B"), (1, "A")]], final=1.0), score=exact)
    assert facts.to_dict() == {**dataclasses.asdict(facts), "turns": 2}  # asdict: the reference it replaces
    shown = facts.to_dict()
    shown["answers"][0][0] = "changed"
    shown["transitions"]["wrong_to_wrong"] = 99
    assert facts.answers[0][0] == "A" and facts.transitions["wrong_to_wrong"] == 0  # a copy, as asdict's


def test_hostile_answers_are_text():
    huge = "<script>" + "x" * 100_000
    facts = debate_facts(record([[(0, huge), (1, huge), (2, "\x00\x1b[31m")]]), score=exact)
    assert facts.votes == [huge] and facts.vote_right == [False]


def test_a_record_without_the_metric_is_one_line():
    with pytest.raises(UsageError, match="no score for metric exact_match"):
        debate_facts(record([[(0, "A")]], agents=1), "exact_match", score=exact)


def test_registered_metrics_score_one_answer_and_debate_metrics_say_why_not(madeval_isolated):
    accuracy = answer_scorer("accuracy")
    assert accuracy("B", "B") == 1.0 and accuracy("b", "B") == 1.0 and accuracy("C", "B") == 0.0
    assert answer_scorer("acc")("42.0", "42") == 1.0
    assert debate_facts(record([[(0, "b"), (1, "C"), (2, "b")]], target="B"), "accuracy").vote_right == [True]
    assert why_no_scorer("answer_entropy") == "metric answer_entropy scores the whole debate, not one answer"
    assert "not a registered metric" in why_no_scorer("HasAns_exact")
    assert why_no_scorer("math_equivalence") is None


def test_a_huge_stored_turn_count_is_bounded():
    hostile = record([[(0, "A")]], agents=1)
    hostile["transcript"]["turns_used"] = 10**12
    hostile["transcript"]["messages"][0]["turn"] = "not a number"
    facts = debate_facts(hostile, score=exact)
    assert facts.turns == MAX_TURNS and facts.answers[0] == [None] and facts.unparsed == 0


def test_a_plugins_metric_scores_answers_while_it_is_registered():
    import types

    from madeval.core.hookspecs import hookimpl
    from madeval.metrics.base import Metric
    from madeval.testing import registered

    class FirstLetter(Metric):
        """Right when the answer starts with the target's first letter."""

        def score(self, prediction, item):
            return float(bool(prediction) and prediction[0] == str(item.target)[0])

    plugin = types.ModuleType("first_letter_plugin")
    plugin.register_metrics = hookimpl(lambda register: register("first_letter", FirstLetter))
    assert "not a registered metric" in why_no_scorer("first_letter")
    with registered(plugin):
        facts = debate_facts(record([[(0, "Apple"), (1, "Avocado"), (2, "Banana")]], target="Apricot",
                                    metric="first_letter"), "first_letter")
        assert facts.answer_right == [[True, True, False]] and facts.vote_right == [True]
    assert "not a registered metric" in why_no_scorer("first_letter")
