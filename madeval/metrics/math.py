"""Math answers: ``\\boxed{}`` reading, integer answers, and equivalence through math-verify.

Equivalence is math-verify's (the checker lm-eval's and lighteval's math tasks use): it
normalises LaTeX (``\\dfrac``, ``\\left(``, units, degrees, ``x =``, thousands separators, ``\\%``)
and compares numbers, expressions, tuples, intervals and sets with sympy. It runs in a worker
process with a deadline and a memory cap (:mod:`madeval.metrics.checker`); an answer that cannot
be decided in time is not equal, and the reason goes to the record's ``scoring_errors``.
``bench/math_agreement.py`` compares it with lm-eval's MATH scoring and with the hand-written
checker it replaced.

:func:`last_boxed` stays for the extractors (:mod:`madeval.builtins.extractors`), which return
the content of a box; :func:`integer_value` reads AIME's integer answers with string rules only.
"""

from __future__ import annotations

import re

from madeval.metrics.checker import math_equivalent
from madeval.metrics.normal import normal_text

BOXED_COMMANDS = ("\\boxed", "\\fbox")
BRACE = re.compile(r"[{}]")
MAX_BOXED_CHARS = 10_000  # a longer \boxed{...} is not an answer; stops an endless "{{{{..." scan

_INTEGER = re.compile(r"^[-+]?\d+$")
_THOUSANDS = re.compile(r"^-?\d{1,3}(,\d{3})+(\.\d+)?$")
_INTEGER_NOISE = re.compile(r"\\[!,;: ]|\{,\}|[\s$~]")  # spaces, thin spaces, "$", "{,}"


def last_boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` (or ``\\fbox{...}``), braces balanced; ``\\boxed 5``
    too. ``None`` when its braces do not close within :data:`MAX_BOXED_CHARS` characters."""
    start = max(text.rfind(command) for command in BOXED_COMMANDS)
    if start < 0:
        return None
    command = next(c for c in BOXED_COMMANDS if text.startswith(c, start))
    begin = start + len(command)
    if text.startswith(" ", begin):  # "\boxed 5": up to the next space or "$"
        return re.split(r"[\s$]", text[begin: begin + MAX_BOXED_CHARS].strip(), maxsplit=1)[0] or None
    if not text.startswith("{", begin):
        return None
    depth = 0
    for brace in BRACE.finditer(text, begin, begin + MAX_BOXED_CHARS):
        depth += 1 if brace.group() == "{" else -1
        if depth == 0:
            return text[begin + 1: brace.start()].strip()
    return None  # unbalanced, or too long to be an answer


def integer_value(answer: str | None) -> int | None:
    """The integer an answer states ("025", "\\boxed{25}", "25.0", "1,000", "$25$."), or ``None``."""
    if answer is None:
        return None
    text = normal_text(str(answer))
    boxed = last_boxed(text)
    text = _INTEGER_NOISE.sub("", boxed if boxed is not None else text).rstrip(".")
    if _THOUSANDS.match(text):
        text = text.replace(",", "")
    try:
        if _INTEGER.match(text):
            return int(text)  # more than 4,300 digits raises ValueError (Python's own limit)
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() else None


def math_equal(prediction: str | None, target: str | None) -> bool:
    """True when two math answers are equal for math-verify, decided within the checker's deadline
    (both read in NFKC with ASCII digits first: "１８" and "١٨" are 18, :mod:`madeval.metrics.normal`)."""
    if prediction is None or target is None:
        return False
    prediction, target = normal_text(str(prediction)).strip(), normal_text(str(target)).strip()
    if not prediction or not target:
        return False
    return math_equivalent(prediction, target)
