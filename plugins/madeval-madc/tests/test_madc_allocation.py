"""MADC's allocation strategies on hand-made rounds, including answers that could not be parsed."""

from __future__ import annotations

import random

import pytest

from madeval.core.plugins import registries
from madeval.errors import UsageError
from madeval.testing import debate
from madeval_madc.allocation import consistency_keys, order_fixed, order_madc, order_random, order_truth

# Peers' answers in agent order; None = the reply could not be parsed.
ROUND = ["A", "B", "A", "C", None]


def test_madc_fixed_keeps_agent_order():
    assert order_fixed(ROUND) == [0, 1, 2, 3, 4]


def test_madc_most_agreed_answer_is_shown_last():
    # counts: A 2, B 1, C 1, (None)5 1 -> the count-1 peers in agent order, then both A's.
    assert order_madc(ROUND) == [1, 3, 4, 0, 2]
    assert order_madc(["B", "A", "A", "A", "B"]) == [0, 4, 1, 2, 3]


def test_madc_parse_failures_are_unique_placeholders_never_dropped():
    answers = [None, "B", None, "B"]
    assert consistency_keys(answers) == ["(None)1", "B", "(None)3", "B"]
    order = order_madc(answers)
    assert order == [0, 2, 1, 3]  # two failures never count as agreeing with each other
    assert sorted(order) == [0, 1, 2, 3]  # nothing dropped: answers stay aligned with solutions


def test_madc_truth_first_and_last_are_stable():
    gold = "A"

    def is_gold(answer):
        return answer == gold

    assert order_truth(ROUND, is_gold, first=True) == [0, 2, 1, 3, 4]
    assert order_truth(ROUND, is_gold, first=False) == [1, 3, 4, 0, 2]
    assert order_truth([None, None], is_gold, first=True) == [0, 1]


def test_madc_random_is_a_seeded_permutation():
    first = order_random(ROUND, random.Random(7))
    assert sorted(first) == [0, 1, 2, 3, 4]
    assert first == order_random(ROUND, random.Random(7))


def _five_agent_script(turn, agent, purpose, messages):
    """Turn 1: A, B, A, C and an unparsable reply; turn 2: everyone keeps its answer."""
    first = ["Final Solution: A", "Final Solution: B", "Final Solution: A", "Final Solution: C", "I am not sure."]
    return first[agent]


def test_madc_paradigm_orders_each_agents_peers_from_that_rounds_answers():
    transcript, llm = debate(_five_agent_script, responder="som", paradigm="som", decider="counting",
                             agents=5, max_turns=2, paradigm_args={"allocation": "madc"})
    events = {e["agent"]: e for e in transcript.events if e["kind"] == "allocation"}
    # Agent 0's peers B, A, C, unparsed: all counts 1 -> agent order.
    assert events[0]["order"] == [1, 2, 3, 4]
    # Agent 1's peers A, A, C, unparsed -> C and the unparsed one first, the two A's last.
    assert events[1]["order"] == [3, 4, 0, 2]
    assert events[1]["answers"] == ["C", None, "A", "A"]
    # Agent 4 (the unparsed one) sees A, B, A, C.
    assert events[4]["order"] == [1, 3, 0, 2]
    prompt = llm.prompts(1, turn=2)[0][-1]["content"]
    assert prompt.count("One agent solution:") == 4
    assert prompt.index("Final Solution: C") < prompt.index("I am not sure.") < prompt.index("Final Solution: A")
    assert not transcript.oracle


def test_madc_truth_last_reads_the_gold_answer_and_marks_an_oracle_run():
    transcript, llm = debate(_five_agent_script, responder="som", paradigm="som", decider="counting",
                             agents=5, max_turns=2, paradigm_args={"allocation": "truth_last"}, gold="A")
    events = {e["agent"]: e for e in transcript.events if e["kind"] == "allocation"}
    assert events[1]["order"] == [3, 4, 0, 2]  # A (gold) last, the rest in agent order
    assert events[3]["order"] == [1, 4, 0, 2]
    assert transcript.oracle is True
    first, _ = debate(_five_agent_script, responder="som", paradigm="som", decider="counting",
                      agents=5, max_turns=2, paradigm_args={"allocation": "truth_first"}, gold="A")
    assert {e["agent"]: e["order"] for e in first.events if e["kind"] == "allocation"}[1] == [0, 2, 3, 4]
    assert first.oracle is True


def test_madc_random_allocation_is_seeded_and_leaves_the_debate_generator_alone():
    def orders(seed):
        transcript, _ = debate(_five_agent_script, responder="som", paradigm="som", decider="counting",
                               agents=5, max_turns=2, paradigm_args={"allocation": "random"}, seed=seed)
        return [e["order"] for e in transcript.events if e["kind"] == "allocation"]

    assert orders(1) == orders(1)
    assert any(orders(1) != orders(seed) for seed in range(2, 6))


def test_madc_unknown_allocation_is_a_usage_error():
    with pytest.raises(UsageError, match="allocation must be one of fixed, random, truth_first, truth_last, madc"):
        registries().paradigms.create("som", {"allocation": "truth_middle"})
