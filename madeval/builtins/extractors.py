"""Built-in answer extractors, chained in a task's ``answer_extraction`` list.

Each extractor is a factory (its keyword arguments are the YAML options) returning a function
``(text, item) -> answer | None``. The chain tries extractors in order and keeps the first answer.
Multiple-choice letters are limited to the item's options (A..D for four choices), and lower case
is read correctly: ``"final solution: b"`` is ``B``.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from .. import hookimpl

Extractor = Callable[[str, Any], "str | None"]

MARKDOWN = re.compile(r"[*_`#]+")
FINAL_MARKER = re.compile(r"final\s+(?:solution|answer)\s*[:：]\s*", re.IGNORECASE)
ANSWER_IS = re.compile(
    r"answer(?:\s+is|\s+would\s+be|\s*:)\s*:?\s*(?:option\s+)?(\(?)([A-Za-z])(\)?)(?![A-Za-z])", re.IGNORECASE
)
LEADING_LETTER = re.compile(r"\s*(?:option\s+)?\(?([A-Za-z])\)?\s*(?:[).:\],;]|$)", re.IGNORECASE)
PAREN_LETTER = re.compile(r"\(([A-Z])\)")
STANDALONE_UPPER = re.compile(r"(?<![A-Za-z])([A-Z])(?![A-Za-z'])")
YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")


def valid_letters(item: Any) -> str:
    """The option letters of ``item`` (``"ABCD"`` for four choices; A to J when unknown)."""
    choices = getattr(item, "choices", None)
    count = len(choices) if choices else 10
    return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:count]


def _plain(text: str) -> str:
    return MARKDOWN.sub("", text)


def final_segments(text: str) -> list[str]:
    """The text after each "Final Solution:" marker up to the next marker or line end, last first."""
    segments = []
    for marker in FINAL_MARKER.finditer(text):
        rest = text[marker.end():]
        following = FINAL_MARKER.search(rest)
        segments.append((rest[: following.start()] if following else rest).split("\n")[0].strip())
    return segments[::-1]


def letter_in(segment: str, letters: str) -> str | None:
    """The option letter a short answer segment names, or ``None`` when absent or ambiguous."""
    match = LEADING_LETTER.match(segment)
    if match and match.group(1).upper() in letters:
        return match.group(1).upper()
    said = answer_is_letter(segment, letters)
    if said:
        return said
    found = {m.group(1) for m in STANDALONE_UPPER.finditer(segment) if m.group(1) in letters}
    return found.pop() if len(found) == 1 else None


def answer_is_letter(text: str, letters: str) -> str | None:
    """The letter after the last "answer is"; a lower-case letter counts only in parentheses."""
    for match in reversed(list(ANSWER_IS.finditer(_plain(text)))):
        letter = match.group(2)
        bracketed = match.group(1) and match.group(3)
        if letter.upper() in letters and (letter.isupper() or bracketed):
            return letter.upper()
    return None


def final_solution(**_: Any) -> Extractor:
    """The option letter after the last "Final Solution:" (markdown and case handled)."""

    def extract(text: str, item: Any = None) -> str | None:
        letters = valid_letters(item)
        for segment in final_segments(_plain(text)):
            letter = letter_in(segment, letters)
            if letter:
                return letter
        return None

    return extract


def answer_is(**_: Any) -> Extractor:
    """The option letter in the last "the answer is (X)"."""
    return lambda text, item=None: answer_is_letter(text, valid_letters(item))


def last_paren_letter(**_: Any) -> Extractor:
    """The last parenthesised capital letter "(X)" that is a valid option."""

    def extract(text: str, item: Any = None) -> str | None:
        letters = valid_letters(item)
        found = [m.group(1) for m in PAREN_LETTER.finditer(_plain(text)) if m.group(1) in letters]
        return found[-1] if found else None

    return extract


def lone_letter(**_: Any) -> Extractor:
    """A reply that is nothing but one option letter: "B", "b.", "(B)", "**B**"."""

    def extract(text: str, item: Any = None) -> str | None:
        stripped = _plain(text).strip().strip(".:)(][ ")
        if len(stripped) == 1 and stripped.upper() in valid_letters(item):
            return stripped.upper()
        return None

    return extract


def yes_no(**_: Any) -> Extractor:
    """"yes" or "no": after the last "Final Solution:", else the last yes/no word in the text."""

    def extract(text: str, item: Any = None) -> str | None:
        for segment in final_segments(_plain(text)):
            words = YES_NO.findall(segment)
            if words:
                return words[0].lower()
        words = YES_NO.findall(_plain(text))
        return words[-1].lower() if words else None

    return extract


def last_number(**_: Any) -> Extractor:
    """The number after the last "Final Solution:", else the last number in the text."""

    def extract(text: str, item: Any = None) -> str | None:
        for segment in final_segments(_plain(text)):
            numbers = NUMBER.findall(segment)
            if numbers:
                return numbers[0].replace(",", "")
        numbers = NUMBER.findall(_plain(text))
        return numbers[-1].replace(",", "") if numbers else None

    return extract


def final_text(**_: Any) -> Extractor:
    """Free text: what follows the last "Final Solution:", else the whole reply, stripped."""

    def extract(text: str, item: Any = None) -> str | None:
        markers = list(FINAL_MARKER.finditer(text))
        answer = text[markers[-1].end():].strip() if markers else text.strip()
        return answer or None

    return extract


@hookimpl
def register_extractors(register):
    """The built-in extractors."""
    register("final_solution", final_solution)
    register("answer_is", answer_is)
    register("last_paren_letter", last_paren_letter)
    register("lone_letter", lone_letter)
    register("yes_no", yes_no)
    register("last_number", last_number)
    register("final_text", final_text)
