"""Built-in answer extractors, chained in a task's ``answer_extraction`` list.

Each extractor is a factory (its keyword arguments are the YAML options) returning a function
``(text, item) -> answer | None``. The chain tries extractors in order and keeps the first answer;
an extractor returns :data:`madeval.task.AMBIGUOUS` to stop the chain without an answer.

Multiple-choice letters (the rules, in order, for the text after "Final Solution:"):

* only the item's options count (A..D for four choices, A..J for MMLU-Pro's ten);
* several options give no answer, and stop the chain: a list of letters ("A or C", "A, C",
  "(A) and (C)") or several options in option form ("A) 1 or B) 2", "(B), not (A)");
* a leading letter ("B", "b.", "(B) ...", "D) 42", "option C") is the answer;
* "the answer is X" inside the segment;
* else a lone capital letter standing alone as a word ("a good choice is C"); two or more such
  letters give no answer.

"I" followed by a lower-case word ("I think B", "B, as I said") is the pronoun, never option I.
Lower case is read where it cannot be an ordinary word: a leading letter followed by punctuation
or the end ("final solution: b", "b."), a bracketed letter, and after "the answer is" a letter
followed by punctuation or the end ("the answer is b", but not "the answer is a number").
"""

from __future__ import annotations

import re
from typing import Any, Callable

from .. import hookimpl
from ..task import AMBIGUOUS

Extractor = Callable[[str, Any], Any]

MARKDOWN = re.compile(r"[*_`#]+")
FINAL_MARKER = re.compile(r"final\s+(?:solution|answer)\s*[:：]\s*", re.IGNORECASE)
NOT_PRONOUN = r"(?!(?<=I)\s+[a-z])"  # after a letter: not "I think", "I am"
ANSWER_IS = re.compile(
    r"answer(?:\s+is|\s+would\s+be|\s*:)\s*:?\s*(?:option\s+)?(\(?)([A-Za-z])(\)?)(?![A-Za-z])" + NOT_PRONOUN,
    re.IGNORECASE,
)
LEADING_LETTER = re.compile(r"\s*(?:option\s+)?\(?([A-Za-z])\)?\s*(?:[).:\],;]|$)", re.IGNORECASE)
PAREN_LETTER = re.compile(r"\(([A-Z])\)")
LETTER_LIST = re.compile(
    r"\s*\(?[A-Za-z]\)?\s*(?:,|;|/|&|\band\b|\bor\b)\s*\(?(?!I\s+[a-z])[A-Z]\)?(?![A-Za-z'])", re.IGNORECASE
)
# An option named the way choices are rendered: "A)" or "(A)" at the start or after a space.
OPTION_FORM = re.compile(r"(?:^|(?<=\s))\(?([A-Za-z])\)")
STANDALONE_UPPER = re.compile(r"(?<![A-Za-z])([A-Z])(?![A-Za-z'])" + NOT_PRONOUN)
AFTER_LOWER_CASE_LETTER = re.compile(r"\s*(?:[.,;:!?)\]]|$)")
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
    """The text after each "Final Solution:" marker up to the next marker or line end, last first.

    An answer on the line after the marker ("Final Solution:\\nB") counts as following it.
    """
    markers = list(FINAL_MARKER.finditer(text))
    ends = [following.start() for following in markers[1:]] + [len(text)]
    # slices between markers, never the whole rest per marker: linear in the reply's length
    segments = [text[marker.end():end].lstrip().split("\n", 1)[0].strip() for marker, end in zip(markers, ends)]
    return segments[::-1]


def letter_in(segment: str, letters: str) -> Any:
    """The option letter a short answer segment names; ``None`` when it names none (or several
    lone capitals); :data:`AMBIGUOUS` when it lists several options (module docstring: the rules)."""
    in_option_form = {m.group(1).upper() for m in OPTION_FORM.finditer(segment)} & set(letters)
    if LETTER_LIST.match(segment) or len(in_option_form) > 1:
        return AMBIGUOUS
    match = LEADING_LETTER.match(segment)
    if match and match.group(1).upper() in letters:
        return match.group(1).upper()
    said = answer_is_letter(segment, letters)
    if said is not None:
        return said
    found = {m.group(1) for m in STANDALONE_UPPER.finditer(segment) if m.group(1) in letters}
    return found.pop() if len(found) == 1 else None


def answer_is_letter(text: str, letters: str) -> Any:
    """The letter after the last "answer is" that names a valid option (lower case only in
    brackets or before punctuation or the end); :data:`AMBIGUOUS` when it lists several letters."""
    plain = _plain(text)
    for match in reversed(list(ANSWER_IS.finditer(plain))):
        if LETTER_LIST.match(plain, match.start(1)):
            return AMBIGUOUS  # "the answer is A or B"
        letter = match.group(2)
        bracketed = match.group(1) and match.group(3)
        ends = AFTER_LOWER_CASE_LETTER.match(plain, match.end())
        if letter.upper() in letters and (letter.isupper() or bracketed or ends):
            return letter.upper()
    return None


def final_solution(**_: Any) -> Extractor:
    """The option letter after the last "Final Solution:" (markdown and case handled)."""

    def extract(text: str, item: Any = None) -> str | None:
        letters = valid_letters(item)
        for segment in final_segments(_plain(text)):
            letter = letter_in(segment, letters)
            if letter is not None:
                return letter
        return None

    return extract


def answer_is(**_: Any) -> Extractor:
    """The option letter in the last "the answer is (X)" (several letters: :data:`AMBIGUOUS`)."""
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


def yes_no(letters: str = "") -> Extractor:
    """"yes" or "no": after the last "Final Solution:", else the last yes/no word in the text.

    ``letters: AB`` also reads option letters standing for yes and no (StrategyQA's MALLM
    instruction asks for "A) Yes or B) No"): "Final Solution: B" is "no".
    """
    meaning = dict(zip(letters.upper(), ("yes", "no")))

    def extract(text: str, item: Any = None) -> str | None:
        plain = _plain(text)
        for segment in final_segments(plain):
            if meaning:
                match = LEADING_LETTER.match(segment)
                if match and match.group(1).upper() in meaning:
                    return meaning[match.group(1).upper()]
            words = YES_NO.findall(segment)
            if words:
                return words[0].lower()
        if meaning:
            said = answer_is_letter(plain, "".join(meaning))
            if said is AMBIGUOUS:
                return AMBIGUOUS
            if said is not None:
                return meaning[said]
        words = YES_NO.findall(plain)
        return words[-1].lower() if words else None

    return extract


def choice_text(**_: Any) -> Extractor:
    """The option whose text the answer names ("Final Solution: Mack" -> the letter of "Mack").

    Reads the text after the last "Final Solution:" (else the last non-empty line) and returns a
    letter only when exactly one option's text occurs in it (the longest wins over its own
    substrings, e.g. "Ana Smith" over "Ana").
    """

    def extract(text: str, item: Any = None) -> str | None:
        choices = getattr(item, "choices", None)
        if not choices:
            return None
        plain = _plain(text)
        lines = [line for line in plain.splitlines() if line.strip()]
        segments = final_segments(plain) or lines[-1:]
        for segment in segments:
            lowered = segment.casefold()
            found = [
                i for i, choice in enumerate(choices)
                if choice.strip() and re.search(rf"(?<!\w){re.escape(choice.strip().casefold())}(?!\w)", lowered)
            ]
            found = [i for i in found if not any(
                j != i and choices[i].strip().casefold() in choices[j].strip().casefold() for j in found
            )]
            if len(found) == 1:
                return valid_letters(item)[found[0]]
        return None

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


def _first_number(text: str) -> str | None:
    numbers = NUMBER.findall(text)
    return numbers[0].replace(",", "") if numbers else None


def boxed(number: bool = False) -> Extractor:
    """The content of the last ``\\boxed{...}`` (braces balanced); ``number: true`` keeps its number."""
    from ..metrics.math import last_boxed

    def extract(text: str, item: Any = None) -> str | None:
        content = last_boxed(text)
        if content is None or not content.strip():
            return None
        return _first_number(content) if number else content.strip()

    return extract


ANSWER_IS_TEXT = re.compile(r"answer\s+is\s*:?\s*(.+?)(?:\.\s|\.?\s*$|\n)", re.IGNORECASE | re.MULTILINE)
LEADING_ANSWER_IS = re.compile(r"^(?:the\s+)?(?:final\s+)?answer\s+is\s*:?\s*", re.IGNORECASE)


def _clean_expression(text: str) -> str:
    """Strip "$" delimiters, a trailing period and outer white space from a math answer."""
    text = text.strip()
    if text.startswith("$") and text.count("$") >= 2:
        text = text.strip("$")
    return text.strip().rstrip(".").strip().strip("$").strip()


def final_expression(number: bool = False) -> Extractor:
    """The expression after the last "Final Solution:" or "Final Answer:" (its ``\\boxed{}`` if any)."""
    from ..metrics.math import last_boxed

    def extract(text: str, item: Any = None) -> str | None:
        for segment in final_segments(text):
            content = last_boxed(segment) or _clean_expression(LEADING_ANSWER_IS.sub("", segment))
            content = _first_number(content) if number else content
            if content:
                return content
        return None

    return extract


def answer_is_expression(number: bool = False) -> Extractor:
    """The expression after the last "the answer is" (up to the end of its sentence or line)."""

    def extract(text: str, item: Any = None) -> str | None:
        matches = list(ANSWER_IS_TEXT.finditer(_plain(text)))
        for match in reversed(matches):
            content = _clean_expression(match.group(1))
            content = _first_number(content) if number else content
            if content:
                return content
        return None

    return extract


def final_text(**_: Any) -> Extractor:
    """Free text: the answer line after the last "Final Solution:", else the whole reply.

    Only the line of the answer is kept ("FINAL SOLUTION: Paris.\\nBecause ..." is "Paris."); a
    marker that ends its line takes the next line. Markdown emphasis (``*_`#``) is dropped. A
    reply without a marker is kept whole (a one-sentence summary, a bare "[UNKNOWN]").
    """

    def extract(text: str, item: Any = None) -> str | None:
        plain = _plain(text)
        if FINAL_MARKER.search(plain):
            return next((segment for segment in final_segments(plain) if segment), None)
        return plain.strip() or None

    return extract


@hookimpl
def register_extractors(register):
    """The built-in extractors."""
    register("final_solution", final_solution)
    register("answer_is", answer_is)
    register("last_paren_letter", last_paren_letter)
    register("lone_letter", lone_letter)
    register("yes_no", yes_no)
    register("choice_text", choice_text)
    register("boxed", boxed)
    register("final_expression", final_expression)
    register("answer_is_expression", answer_is_expression)
    register("last_number", last_number)
    register("final_text", final_text)
