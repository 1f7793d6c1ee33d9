"""WinoGrande rows: two options, and the answer "1"/"2" as an option index."""

from __future__ import annotations


def options(doc):
    """The two candidate fillers of the blank."""
    return [doc["option1"], doc["option2"]]


def answer_index(doc):
    """The index of the correct option (the hub's answer is the string "1" or "2")."""
    return int(doc["answer"]) - 1
