"""Comparing extracted answers by answer type: when two answers count as the same.

Used by the debate metrics (grouping agents' answers into viewpoints, finding the gold one).

| answer type | canonical form | equal when |
|---|---|---|
| choice | the letter, upper case | letters are equal |
| yes_no | "yes" / "no" | equal |
| number | the number, without trailing zeros or separators | numerically equal |
| math | the text without white space | :func:`madeval.metrics.math.math_equal` (math-verify) |
| text | SQuAD's :func:`normalize_answer` | canonical forms are equal |

Math answers are grouped by :func:`answers_match`, not by their canonical form
(:meth:`madeval.metrics.view.DebateView.answer_rounds`): ``\frac12`` and ``0.5`` are one answer.
"""

from __future__ import annotations

import re
import string
from typing import Any

from madeval.metrics.math import math_equal
from madeval.metrics.normal import normal_text

_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """Lower case, no punctuation, no articles, single spaces: the official SQuAD v2 normalisation
    (:mod:`madeval.metrics.squad`), which also makes text answers comparable."""
    text = text.lower()
    text = "".join(char for char in text if char not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _number(text: str) -> float | None:
    try:
        return float(normal_text(str(text)).replace(",", "").replace("$", "").strip())
    except ValueError:
        return None


def canonical_answer(answer_type: str, answer: Any) -> str | None:
    """The form in which equal answers of ``answer_type`` look the same (``None`` stays ``None``)."""
    if answer is None:
        return None
    text = normal_text(str(answer)).strip()
    if answer_type == "choice":
        return text.upper()
    if answer_type == "yes_no":
        return text.lower()
    if answer_type == "number":
        value = _number(text)
        if value is None:
            return text
        return str(int(value)) if value.is_integer() else repr(value)
    if answer_type == "math":
        return "".join(text.split())
    return normalize_answer(text)


def answers_match(answer_type: str, answer: Any, target: Any) -> bool:
    """True when ``answer`` counts as ``target`` (any of them, for a list of targets)."""
    if answer is None or target is None:
        return False
    if isinstance(target, (list, tuple)):
        return any(answers_match(answer_type, answer, t) for t in target)
    if answer_type == "math":
        return math_equal(str(answer), str(target))
    if answer_type == "number":
        left, right = _number(str(answer)), _number(str(target))
        if left is not None and right is not None:
            return abs(left - right) <= 1e-9 * max(1.0, abs(right))
    return canonical_answer(answer_type, answer) == canonical_answer(answer_type, target)
