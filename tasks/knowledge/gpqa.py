"""GPQA rows as four-option items: the correct answer shuffled in among the three incorrect ones.

The order comes from a seed derived from the row's ``Record ID``, so it is the same for every
configuration, run and machine (Python's ``hash`` is salted per process, so it is not used).
"""

from __future__ import annotations

import hashlib
import random

ANSWER_COLUMNS = ("Correct Answer", "Incorrect Answer 1", "Incorrect Answer 2", "Incorrect Answer 3")


def shuffled_order(record_id: str, count: int = 4) -> list[int]:
    """A permutation of ``range(count)`` determined by ``record_id``."""
    seed = int.from_bytes(hashlib.sha256(f"gpqa-choices\x1f{record_id}".encode()).digest()[:8], "big")
    order = list(range(count))
    random.Random(seed).shuffle(order)
    return order


def with_shuffled_choices(docs):
    """Each doc with ``choices`` (the four answers, shuffled) and ``answer`` (the correct index)."""
    rows = []
    for doc in docs:
        answers = [str(doc[column]).strip() for column in ANSWER_COLUMNS]
        order = shuffled_order(str(doc["Record ID"]))
        rows.append({**doc, "choices": [answers[i] for i in order], "answer": order.index(0)})
    return rows
