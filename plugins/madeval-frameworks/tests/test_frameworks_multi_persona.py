"""Multi-Persona: the authors' prompts and conversations, the moderator's early stop, the fallback judge."""

from __future__ import annotations

import json

import pytest

from madeval.errors import UsageError
from madeval.testing import debate

ITEM = "What is 2 + 2?\nA) 3\nB) 4\nC) 5"
TOPIC = "Answer.\n\n" + ITEM


def verdict(answer=""):
    return json.dumps(
        {
            "Whether there is a preference": "Yes" if answer else "No",
            "Supported Side": "Negative" if answer else "",
            "Reason": "",
            "debate_answer": answer,
        }
    )


def script_for(moderator_answers, judge_final='{"Reason": "r", "debate_answer": "Final Solution: C"}'):
    def script(turn, agent, purpose, messages):
        if purpose == "judge":
            return "A or B" if messages[-1]["content"].endswith("Present them without reasons.") else judge_final
        if agent == 0:
            return verdict(moderator_answers[turn - 1])
        return (
            f"{'Affirmative' if agent == 1 else 'Negative'} round {turn}. Final Solution: {'A' if agent == 1 else 'B'}"
        )

    return script


def run(script, **options):
    return debate(
        script,
        responder="multi_persona",
        paradigm="multi_persona",
        decider="moderator",
        persona="multi_persona",
        agents=3,
        neutral=(0,),
        max_turns=3,
        item_input=ITEM,
        **options,
    )


def test_frameworks_multi_persona_stops_when_the_moderator_answers():
    transcript, llm = run(script_for(["", "Final Solution: B", "x"]))
    decision = transcript.decision
    assert (decision.success, decision.turn, decision.answer, decision.reason) == (
        True,
        2,
        "Final Solution: B",
        "moderator",
    )
    assert decision.details["supported_side"] == "Negative"
    assert [(m.turn, m.agent) for m in transcript.messages] == [(1, 1), (1, 2), (1, 0), (2, 1), (2, 2), (2, 0)]


def test_frameworks_multi_persona_conversations_are_the_authors():
    _, llm = run(script_for(["", "", "Final Solution: A"]))
    meta = (
        "You are a debater. Hello and welcome to the debate. It's not necessary to fully agree with each other's "
        "perspectives, as our objective is to find the correct answer.\nThe debate topic is stated as follows:\n"
        + TOPIC
    )
    affirmative = llm.prompts(1, turn=2)[0]
    assert affirmative == [
        {"role": "system", "content": meta},
        {"role": "user", "content": TOPIC},
        {"role": "assistant", "content": "Affirmative round 1. Final Solution: A"},
        {
            "role": "user",
            "content": "Negative round 1. Final Solution: B\n\n"
            "Do you agree with my perspective? Please provide your reasons and answer.",
        },
    ]
    negative = llm.prompts(2, turn=1)[0]
    assert (
        negative[1]["content"]
        == "Affirmative round 1. Final Solution: A\n\nYou disagree with my answer. Provide your answer and reasons."
    )
    assert llm.prompts(2, turn=2)[0][-1]["content"].startswith("Affirmative round 2.")
    moderator = llm.prompts(0, turn=3)[0]
    assert moderator[0]["content"].startswith(
        "You are a moderator. There will be two debaters involved in a debate. "
        'They will present their answers and discuss their perspectives on the following topic: "Answer.'
    )
    assert moderator[-1]["content"].startswith(
        "Now the third round of debate for both sides has ended.\n\nAffirmative side arguing:\n"
        "Affirmative round 3. Final Solution: A\n\nNegative side arguing: Negative round 3."
    )
    assert moderator[-1]["content"].endswith(
        '{"Whether there is a preference": "Yes or No", "Supported Side": "Affirmative or Negative", '
        '"Reason": "", "debate_answer": ""}'
    )
    assert [m["role"] for m in moderator] == ["system", "user", "assistant", "user", "assistant", "user"]


def test_frameworks_multi_persona_fallback_judge_reads_the_first_round():
    transcript, llm = run(script_for(["", "", ""]))
    decision = transcript.decision
    assert (decision.success, decision.turn, decision.reason, decision.answer) == (
        False,
        3,
        "fallback_judge",
        "Final Solution: C",
    )
    judge = llm.prompts(None)
    assert len(judge) == 2
    assert judge[0][1]["content"] == (
        "Affirmative side arguing: Affirmative round 1. Final Solution: A\n\nNegative side arguing: "
        "Negative round 1. Final Solution: B\n\nNow, what answer candidates do we have? Present them without reasons."
    )
    assert judge[1][-2] == {"role": "assistant", "content": "A or B"}
    assert judge[1][-1]["content"].startswith(
        "Therefore, " + TOPIC + "\nPlease summarize your reasons and give the final answer"
    )
    event = next(e for e in transcript.events if e["kind"] == "fallback_judge")
    assert event["debate_answer"] == "Final Solution: C"


def test_frameworks_multi_persona_reads_python_dict_replies_and_rejects_other_layouts():
    transcript, _ = run(lambda t, a, p, m: "{'debate_answer': 'Final Solution: B'}" if a == 0 else "Final Solution: A")
    assert transcript.decision.answer == "Final Solution: B" and transcript.decision.turn == 1
    with pytest.raises(UsageError, match="needs exactly 1 neutral agent"):
        debate(script_for([""]), responder="multi_persona", paradigm="multi_persona", decider="moderator", agents=3)
