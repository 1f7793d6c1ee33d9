"""Debates written by hand for the viewer's and the export's tests: records with known answers per
turn (so every figure is computed by hand) and one full of hostile text."""

from __future__ import annotations

import json

HOSTILE = ("</script><script>document.documentElement.setAttribute('data-pwned','script')</script>"
           "<img src=x onerror=\"document.documentElement.setAttribute('data-pwned','img')\"><!-- "
           "\x00\x1b[31m red \u202e reversed \ud800 lone surrogate & &amp; ]]>")
HOSTILE_LABEL = "<b>bold</b><script>alert(1)</script>"
HUGE = "Final Solution: B. " + "x" * 200_000


def agent(index: int, name: str) -> dict:
    return {"index": index, "persona": {"name": name, "description": f"{name}'s description", "generator": "none",
                                        "traits": None}, "model": "hand", "endpoint": "default", "neutral": False}


def message(number: int, turn: int, agent_index: int, text: str, answer: str | None) -> dict:
    return {"id": number, "turn": turn, "step": agent_index, "agent": agent_index, "stage": "draft", "text": text,
            "solution": text, "answer": answer, "agreement": None, "backs": number, "confidence": None,
            "audience": None, "parse_notes": []}


def hand_record(item: str, label: str, answers: list[list[str | None]], prediction: str | None,
                texts: dict[tuple[int, int], str] | None = None, names=("Ada", "Bo", "Cy")) -> dict:
    """A finished debate written by hand: ``answers[t][i]`` is agent i's answer in turn t + 1 (gold B)."""
    texts = texts or {}
    messages, number = [], 0
    for turn, row in enumerate(answers, 1):
        for index, answer in enumerate(row):
            text = texts.get((turn, index), f"I say {answer}. Final Solution: {answer}")
            messages.append(message(number, turn, index, text, answer))
            number += 1
    right = float(prediction == "B")
    return {
        "unit": {"key": json.dumps(["hand", "arith_mc", item, 0]), "config": "hand", "task": "arith_mc",
                 "item": item, "repeat": 0},
        "config_label": label, "input": "What is 2 + 2?\nA) 3\nB) 4", "target": "B", "prediction": prediction,
        "parse_failure": prediction is None, "parse_failures": {}, "metrics": {"accuracy": right},
        "scoring_errors": [], "decision_success": True, "turns": len(answers), "calls": number, "chain": len(answers),
        "tokens": {"prompt": 0, "completion": 0, "total": 0}, "wall_s": 0.1, "llm_s": 0.1, "oracle": False,
        "challenges": [],
        "transcript": {"agents": [agent(i, n) for i, n in enumerate(names)], "messages": messages, "calls": [],
                       "events": [{"kind": "vote", "turn": len(answers), "ballots": [], "note": HOSTILE}],
                       "decision": {"answer": f"Final Solution: {prediction}", "success": True, "turn": len(answers),
                                    "decider": "simple_voting", "reason": "plurality", "details": {"tally": {}}},
                       "turns_used": len(answers), "oracle": False},
    }


#: Right in turn 1 (vote B of B, B, A), wrong at the end (A, A, A): drift, final wrong.
LOST = hand_record("lost-item", "hand", [["B", "B", "A"], ["A", "A", "A"]], "A")
#: Hostile text everywhere a run's text is shown; agent 0's answer unparsed; final right.
HOSTILE_RECORD = hand_record(HOSTILE, HOSTILE_LABEL, [[None, "B", "B"]], "B",
                             texts={(1, 0): HOSTILE, (1, 1): HUGE}, names=(HOSTILE_LABEL, "Bo", "Cy"))
