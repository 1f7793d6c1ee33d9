"""ReConcile: the recalibration table, the grouped discussion prompt, consensus stop and weighted vote."""

from __future__ import annotations

import json

import pytest

from madeval.testing import debate
from madeval_frameworks.reconcile import read_confidence, recalibrate

ITEM = "What is 2 + 2?\nA) 3\nB) 4\nC) 5"


def reply(answer, confidence, reasoning="because"):
    return json.dumps({"reasoning": reasoning, "answer": answer, "confidence_level": confidence})


def extract(text):
    return text.split("The answer is ")[1][0] if "The answer is " in (text or "") else None


def run(rounds, max_turns=3):
    def script(turn, agent, purpose, messages):
        return rounds[turn - 1][agent]
    return debate(script, responder="reconcile", paradigm="collective_refinement", decider="reconcile",
                  agents=3, max_turns=max_turns, extract=extract, item_input=ITEM)


@pytest.mark.parametrize("p, f", [(0.0, 0.1), (0.6, 0.1), (0.61, 0.3), (0.79, 0.3), (0.8, 0.5), (0.89, 0.5),
                                  (0.9, 0.8), (0.99, 0.8), (1.0, 1.0)])
def test_frameworks_reconcile_recalibration_table(p, f):
    assert recalibrate(p) == f


def test_frameworks_reconcile_confidence_parsing():
    assert read_confidence("85%") == 0.85 and read_confidence("0.7") == 0.7 and read_confidence(1) == 1.0
    assert read_confidence("high") == 0.0 and read_confidence(None) == 0.0


def test_frameworks_reconcile_weighted_vote_can_beat_the_majority():
    # Last round: A (0.65 -> 0.3), A (0.7 -> 0.3), B (1.0 -> 1.0): B wins 1.0 to 0.6.
    last = [reply("A", 0.65), reply("A", "70%"), reply("B", 1.0)]
    transcript, llm = run([[reply("A", 0.9), reply("B", 0.9), reply("C", 0.5)], last], max_turns=2)
    event = [e for e in transcript.events if e["kind"] == "reconcile_vote"][-1]
    assert event["scores"] == pytest.approx({"A": 0.6,
                                             "B": 1.0}) and event["winner"] == "B" and event["majority"] == "A"
    assert transcript.decision.answer == "The answer is B." and transcript.decision.reason == "weighted_vote"
    prompt = llm.prompts(0, turn=2)[0][0]["content"]
    assert prompt.startswith("Q: What is 2 + 2?\nA) 3\nB) 4\nC) 5 "
                             "Please answer the question with step-by-step reasoning. "
                             "Also, evaluate your confidence level (between 0.0 and 1.0) to indicate the possibility "
                             "of your answer being right.")
    # Three different answers: only the two most common are shown (ReConcile's most_common(2)).
    assert ("\n\nCarefully review the following solutions from other agents as additional information, "
            "and provide your own "
            "answer and step-by-step reasoning to the question. Clearly states that which pointview do you agree or "
            "disagree and why.\n\n "
            "There are 1 agents think the answer is A. One agent solution: I think the answer is A because because "
            "My confidence level is 0.9.\n\n"
            "There are 1 agents think the answer is B. One agent solution: I think the answer is B because because "
            "My confidence level is 0.9.\n\n "
            "Output your answer in json format") in prompt
    assert "think the answer is C" not in prompt


def test_frameworks_reconcile_stops_when_all_agents_agree():
    transcript, llm = run([[reply("B", 0.9), reply("B", 0.5), reply("B", 0.8)]])
    assert (transcript.decision.turn, transcript.decision.reason,
            transcript.decision.answer) == (1, "consensus", "The answer is B.")
    assert len(llm.requests) == 3


def test_frameworks_reconcile_unreadable_reply_is_recorded_not_guessed():
    transcript, _ = run([[reply("A", 0.9), "I think A", reply("B", 0.9)],
                         [reply("A", 0.9), "no idea", reply("A", 0.9)]], max_turns=2)
    assert transcript.messages[1].parse_notes == ("reply is not JSON with an answer",)
    assert transcript.decision.details["scores"] == pytest.approx({"A": 1.6})
