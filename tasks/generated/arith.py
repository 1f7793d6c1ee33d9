"""Procedurally generated arithmetic items whose answers are computed, so they need no download.

Each question is an expression such as ``17 + 6 * 4 - 3`` over small integers. The same
``(size, seed)`` always gives the same items, and every question text is unique. They are made once
per process and handed out as copies (a process that loads the tasks again, such as a notebook calling
madeval.evaluate or madeval's tests, does not compute them again; a caller may change its copy).
"""

from __future__ import annotations

import functools
import random


def _expression(rng: random.Random) -> tuple[str, int]:
    a, b, c, d = (rng.randint(2, 30) for _ in range(4))
    op1, op2 = rng.choice("+-"), rng.choice("+-")
    text = f"{a} {op1} {b} * {c} {op2} {d}"
    value = a + (b * c if op1 == "+" else -b * c) + (d if op2 == "+" else -d)
    return text, value


def _unique_expressions(size: int, seed: int):
    rng = random.Random(seed)
    seen: set[str] = set()
    while len(seen) < size:
        text, value = _expression(rng)
        if text not in seen:
            seen.add(text)
            yield rng, text, value


def multiple_choice(size: int, seed: int) -> list[dict]:
    """Four-option items: the value of the expression among three nearby wrong values."""
    return [{**row, "choices": list(row["choices"])} for row in _multiple_choice(size, seed)]


def yes_no(size: int, seed: int) -> list[dict]:
    """Two-option items: is the expression's value greater than a threshold? Half are yes."""
    return [dict(row) for row in _yes_no(size, seed)]


@functools.lru_cache(maxsize=8)
def _multiple_choice(size: int, seed: int) -> tuple[dict, ...]:
    rows = []
    for index, (rng, text, value) in enumerate(_unique_expressions(size, seed)):
        wrong = set()
        while len(wrong) < 3:
            candidate = value + rng.choice([-1, 1]) * rng.randint(1, 12)
            if candidate != value:
                wrong.add(candidate)
        options = [value, *sorted(wrong)]
        rng.shuffle(options)
        rows.append(
            {
                "id": f"arith-mc-{index:05d}",
                "question": f"What is {text}?",
                "choices": [str(o) for o in options],
                "answer": options.index(value),
            }
        )
    return tuple(rows)


@functools.lru_cache(maxsize=8)
def _yes_no(size: int, seed: int) -> tuple[dict, ...]:
    rows = []
    for index, (rng, text, value) in enumerate(_unique_expressions(size, seed)):
        answer_yes = index % 2 == 0
        offset = rng.randint(1, 15)
        threshold = value - offset if answer_yes else value + rng.randint(0, 15)
        rows.append(
            {
                "id": f"arith-yn-{index:05d}",
                "question": f"Is {text} greater than {threshold}?",
                "answer": answer_yes,
            }
        )
    return tuple(rows)
