"""Built-in answer extractors, chained in a task's ``answer_extraction`` list.

Each extractor is a factory (its keyword arguments are the YAML options) returning a function
``(text, item) -> answer | None``. The chain tries extractors in order and keeps the first answer;
an extractor returns a :class:`madeval.task.definition.NoAnswer` (:data:`madeval.task.definition.AMBIGUOUS` for several
answers) to stop the chain without an answer, saying why. The multiple-choice tasks read letters
with the ``choice`` extractor (:mod:`madeval.builtins.choices`), which builds on the rules below.

Multiple-choice letters (the rules, in order, for the text after "Final Solution:"):

* only the item's options count (A..D for four choices, A..J for MMLU-Pro's ten);
* several options give no answer, and stop the chain: a list of letters ("A or C", "A, C",
  "(A) and (C)") or several options in option form ("A) 1 or B) 2", "(B), not (A)");
* a leading letter ("B", "b.", "(B) ...", "D) 42", "option C") is the answer;
* "the answer is X" (or "the option is X", "choice: X") inside the segment;
* else a lone capital letter standing alone as a word ("a good choice is C"); two or more such
  letters give no answer.

A restated option is one answer, whatever labels its text carries: "(E) (a) 2.1 eV, (b) 48 kcal"
is E when the item's option E reads "(a) 2.1 eV, (b) 48 kcal" (138 of MMLU-Pro's 12,032 gold
options carry such sub-labels), and lower-case sub-labels right after an upper-case leading
option ("E) (i) 585, (ii) Yes") are part of its text, not further options.

"I" followed by a lower-case word ("I think B", "B, as I said") is the pronoun, never option I.
Lower case is read where it cannot be an ordinary word: a leading letter followed by punctuation
or the end ("final solution: b", "b."), a bracketed letter, and after "the answer is" a letter
followed by punctuation or the end ("the answer is b", but not "the answer is a number").

Numbers (``number: true``, ``hash_number``, ``last_number``): the number of an answer such as
"17 + 1 = 18" or "x = 7" is the first number after its last "=" (or "\\approx"), bracketed
asides left out ("18 (= 17 + 1)" is 18); thousands separators and "$" are dropped ("$1,200" is
1200).

Every extractor runs in time linear in the reply: no pattern backtracks over a run of white space
(possessive quantifiers), "Final Solution:" segments are cut between consecutive markers, and a
``\\boxed{`` is followed for at most :data:`madeval.metrics.math.MAX_BOXED_CHARS` characters.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any, Callable

from madeval.core.hookspecs import hookimpl
from madeval.metrics.math import last_boxed
from madeval.metrics.normal import normal_text
from madeval.task.definition import AMBIGUOUS, NoAnswer

Extractor = Callable[[str, Any], Any]

# Possessive quantifiers (``*+``, ``++``) never give back white space, so no pattern here can try
# every split of a long run of spaces (a reply of "answer:" and a million spaces took minutes).
MARKDOWN = re.compile(r"[*_`#]+")
FINAL_MARKER = re.compile(r"final\s++(?:solution|answer)\s*+[:：]\s*+", re.IGNORECASE)
NOT_PRONOUN = r"(?!(?<=I)\s++[a-z])"  # after a letter: not "I think", "I am"
ANSWER_IS = re.compile(
    r"(?:answer|option|choice)(?:\s++is|\s++would\s++be|\s*+:)\s*+:?+\s*+(?:option\s++)?+"
    r"(\(?)([A-Za-z])(\)?)(?![A-Za-z])" + NOT_PRONOUN,
    re.IGNORECASE,
)
LEADING_LETTER = re.compile(r"\s*+(?:option\s++)?+\(?([A-Za-z])\)?\s*+(?:[).:\],;]|$)", re.IGNORECASE)
# The label that starts a restated option: "(E) ", "E) ", "E. ", "E: ", "E ", "option E ".
OPTION_LABEL = re.compile(r"\s*+(?:option\s++)?+(?:\(([A-Za-z])\)|([A-Za-z])(?:[).:]|(?=\s)))", re.IGNORECASE)
PAREN_LETTER = re.compile(r"\(([A-Z])\)")
LETTER_LIST = re.compile(
    r"\s*+\(?[A-Za-z]\)?\s*+(?:,|;|/|&|\band\b|\bor\b)\s*+\(?(?!I\s++[a-z])[A-Z]\)?(?![A-Za-z'])", re.IGNORECASE
)
# An option named the way choices are rendered: "A)" or "(A)" at the start or after a space.
OPTION_FORM = re.compile(r"(?:^|(?<=\s))\(?([A-Za-z])\)")
LOWER_CASE_LABEL = re.compile(r"\s*+\(?[a-z]\)")
STANDALONE_UPPER = re.compile(r"(?<![A-Za-z])([A-Z])(?![A-Za-z'])" + NOT_PRONOUN)
AFTER_LOWER_CASE_LETTER = re.compile(r"\s*+(?:[.,;:!?)\]]|$)")
YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
YES_NO_HERE = re.compile(r"[ \t]*+(yes|no)\b", re.IGNORECASE)  # only with .match: anchored where it starts
# "the answer is no", "Solution: yes" (an optional letter before the word is LETTERED_YES_NO's)
STATED_YES_NO = re.compile(r"\b(?:answer|solution)(?:\s++is|\s*+:)\s*+:?+\s*+(yes|no)\b", re.IGNORECASE)
# "A) Yes", "(B) No" at the start of a line or after a colon: StrategyQA's option form
LETTERED_YES_NO = re.compile(r"(?:^|(?<=[:\n]))[ \t]*+\(?([A-Za-z])\)[ \t]*+(yes|no)\b", re.IGNORECASE | re.MULTILINE)
SPACE = re.compile(r"\s*+")
WHITE_SPACE_RUN = re.compile(r"\s++")

NUMBER = re.compile(r"-?\d[\d,]*+(?:\.\d+)?+|-?\.\d+")
MINUS_SIGNS = str.maketrans({"\u2212": "-"})  # "−5" (not the dash of a range, "5–7")
LAST_EQUALS = re.compile(r"=|≈|\\approx")
ASIDE = re.compile(r"\([^()]*+\)")  # "18 (= 17 + 1)": the aside is not the answer
# GSM8K's own answer line "#### 18"; not a markdown heading such as "#### 2. Add the costs".
HASH_ANSWER = re.compile(r"####[ \t]*+(?:\*\*)?+[ \t]*+([^\n]*+)")
HASH_NUMBER_START = re.compile(r"\$?[ \t]*+[-\u2212]?\.?\d")
NUMBERED_HEADING = re.compile(r"\d++[.)][ \t]++[A-Za-z]")

ANSWER_IS_TEXT = re.compile(r"answer\s++is\s*+:?+\s*+([^\n]*+)", re.IGNORECASE)
SENTENCE_END = re.compile(r"\.\s")
LEADING_ANSWER_IS = re.compile(r"^(?:the\s++)?+(?:final\s++)?+answer\s++is\s*+:?+\s*+", re.IGNORECASE)

MAX_REPLY_CHARS = 200_000  # read from the end of a reply; about 50,000 tokens


def reads_tail(extract: Extractor) -> Extractor:
    """``extract`` reading only the last :data:`MAX_REPLY_CHARS` characters of a reply, in NFKC
    with ASCII digits (:func:`madeval.metrics.normal.normal_text`: a full-width "Ｂ" is "B").

    Every rule reads the end of a reply (the last marker, "answer is", box or number), so a
    longer reply keeps its answer; the bound keeps a hostile 10 MB reply from costing seconds.
    """

    def bounded(text: str, item: Any = None) -> Any:
        return extract(normal_text(text[-MAX_REPLY_CHARS:]), item)

    bounded.__doc__ = extract.__doc__
    return bounded


def valid_letters(item: Any) -> str:
    """The option letters of ``item`` (``"ABCD"`` for four choices; A to J when unknown)."""
    choices = getattr(item, "choices", None)
    count = len(choices) if choices else 10
    return "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:count]


def _plain(text: str) -> str:
    return MARKDOWN.sub("", text)


def final_segments(text: str) -> list[str]:
    """The text after each "Final Solution:" marker up to the next marker or line end, last first.

    An answer on the line after the marker ("Final Solution:\\nB") counts as following it. Each
    segment is cut from the text between two markers, so the work is linear in the text.
    """
    markers = list(FINAL_MARKER.finditer(text))
    segments = []
    for index, marker in enumerate(markers):
        stop = markers[index + 1].start() if index + 1 < len(markers) else len(text)
        start = SPACE.match(text, marker.end(), stop).end()
        line_end = text.find("\n", start, stop)
        segments.append(text[start: stop if line_end < 0 else line_end].strip())
    return segments[::-1]


def last_final_marker(text: str) -> re.Match | None:
    """The last "Final Solution:" (or "Final Answer:") marker in ``text``, or ``None``.

    Looked for in the last :data:`MAX_REPLY_CHARS` characters first, so a reply of a million
    markers costs no more than that window; the whole text only when the window has none.
    """
    window = max(0, len(text) - MAX_REPLY_CHARS)
    last = last_match(FINAL_MARKER, text, window)
    if last is None and window:
        last = last_match(FINAL_MARKER, text)
    return last


def _normal(text: str) -> str:
    """``text`` for comparing option texts: no markdown, case folded, white space collapsed."""
    return WHITE_SPACE_RUN.sub(" ", _plain(text).casefold()).strip()


def restated_option(segment: str, letters: str, choices: Any) -> str | None:
    """The leading option letter of ``segment`` when the rest of it starts with that option's own
    text ("(E) (a) 2.1 eV, (b) 48 kcal" for option E "(a) 2.1 eV, (b) 48 kcal"; the first line of
    a text of several lines) and names no other option after it, else ``None``."""
    match = OPTION_LABEL.match(segment)
    if not choices or not match:
        return None
    letter = (match.group(1) or match.group(2)).upper()
    if letter not in letters or letters.index(letter) >= len(choices):
        return None
    option = _normal(str(choices[letters.index(letter)]).strip().split("\n")[0])  # a segment is one line
    rest = _normal(segment[match.end():])
    if not option or not rest.startswith(option):
        return None
    others = {label.group(1).upper() for label in OPTION_FORM.finditer(rest[len(option):])}
    return None if (others & set(letters)) - {letter} else letter  # "A) 1 or B) 2" lists two


def letter_in(segment: str, letters: str, choices: Any = None) -> Any:
    """The option letter a short answer segment names; ``None`` when it names none (or several
    lone capitals); :data:`AMBIGUOUS` when it lists several options (module docstring: the rules).

    ``choices`` (the item's option texts) lets a restated option count as one answer.
    """
    restated = restated_option(segment, letters, choices)
    if restated is not None:
        return restated
    match = LEADING_LETTER.match(segment)
    labels = OPTION_FORM.finditer(segment)
    if match and match.group(1).isupper() and LOWER_CASE_LABEL.match(segment, match.end()):
        labels = (label for label in labels if label.group(1).isupper())  # "E) (i) 585, (ii) Yes"
    in_option_form = {label.group(1).upper() for label in labels} & set(letters)
    if LETTER_LIST.match(segment) or len(in_option_form) > 1:
        return AMBIGUOUS
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
    """The option letter after the last "Final Solution:" (markdown and case handled).

    Without a marker, a reply that is a restated option ("(E) (a) 2.1 eV, ...", as a vote's
    winning solution reaches the task) is that option.
    """

    def extract(text: str, item: Any = None) -> str | None:
        letters = valid_letters(item)
        choices = getattr(item, "choices", None)
        plain = _plain(text)
        segments = final_segments(plain)
        for segment in filter(None, segments):
            letter = letter_in(segment, letters, choices)
            if letter is not None:
                return letter
        if not segments:
            first_line = plain.lstrip().split("\n", 1)[0]
            return restated_option(first_line, letters, choices)
        return None

    return reads_tail(extract)


def answer_is(**_: Any) -> Extractor:
    """The option letter in the last "the answer is (X)" (several letters: :data:`AMBIGUOUS`)."""
    return reads_tail(lambda text, item=None: answer_is_letter(text, valid_letters(item)))


def last_paren_letter(**_: Any) -> Extractor:
    """The last parenthesised capital letter "(X)" that is a valid option."""

    def extract(text: str, item: Any = None) -> str | None:
        letters = valid_letters(item)
        found = [m.group(1) for m in PAREN_LETTER.finditer(_plain(text)) if m.group(1) in letters]
        return found[-1] if found else None

    return reads_tail(extract)


def lone_letter(**_: Any) -> Extractor:
    """A reply that is nothing but one option letter: "B", "b.", "(B)", "**B**"."""

    def extract(text: str, item: Any = None) -> str | None:
        stripped = _plain(text).strip().strip(".:)(][ ")
        if len(stripped) == 1 and stripped.upper() in valid_letters(item):
            return stripped.upper()
        return None

    return reads_tail(extract)


def yes_no(letters: str = "") -> Extractor:
    """"yes" or "no": after the last "Final Solution:", else the last stated one ("the answer is
    no", "Solution: B) No"), else the last yes/no word in the text.

    ``letters: AB`` also reads option letters standing for yes and no (StrategyQA's MALLM
    instruction asks for "A) Yes or B) No"): "Final Solution: B" is "no", and a line "A) Yes" is
    "yes" wherever it stands. A letter and a word that disagree ("A) No") are no answer.
    """
    meaning = dict(zip(letters.upper(), ("yes", "no")))

    def agreeing(letter: str, word: str | None) -> Any:
        said = meaning[letter.upper()]
        if word is not None and word.lower() != said:
            return NoAnswer(f"letter {letter.upper()} means {said}, its text says {word.lower()}")
        return said

    def extract(text: str, item: Any = None) -> Any:
        plain = _plain(text)
        for segment in final_segments(plain):
            if meaning:
                match = LEADING_LETTER.match(segment)
                if match and match.group(1).upper() in meaning:
                    word = YES_NO_HERE.match(segment, match.end())
                    return agreeing(match.group(1), word.group(1) if word else None)
            words = YES_NO.findall(segment)
            if words:
                return words[0].lower()
        stated = last_match(STATED_YES_NO, plain)
        if meaning:
            lettered = last_match(LETTERED_YES_NO, plain)
            if lettered and lettered.group(1).upper() in meaning and (not stated or lettered.start() > stated.start()):
                return agreeing(lettered.group(1), lettered.group(2))
        if stated:
            return stated.group(1).lower()
        if meaning:
            said = answer_is_letter(plain, "".join(meaning))
            if said is AMBIGUOUS:
                return AMBIGUOUS
            if said is not None:
                return meaning[said]
        words = YES_NO.findall(plain)
        return words[-1].lower() if words else None

    return reads_tail(extract)


def last_match(pattern: re.Pattern, text: str, start: int = 0) -> re.Match | None:
    """The last match of ``pattern`` in ``text`` from ``start`` on (``None`` when there is none);
    the matches before it are not kept."""
    last = deque(pattern.finditer(text, start), maxlen=1)
    return last[0] if last else None


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
        patterns = [
            (i, re.compile(rf"(?<!\w){re.escape(choice.strip().casefold())}(?!\w)"))
            for i, choice in enumerate(choices) if choice.strip()
        ]
        for segment in filter(None, segments):
            lowered = segment.casefold()
            found = [i for i, pattern in patterns if pattern.search(lowered)]
            found = [i for i in found if not any(
                j != i and choices[i].strip().casefold() in choices[j].strip().casefold() for j in found
            )]
            if len(found) == 1:
                return valid_letters(item)[found[0]]
        return None

    return reads_tail(extract)


def _first_number(text: str) -> str | None:
    """The first number in ``text``, without thousands separators ("-1,200.5" -> "-1200.5")."""
    match = NUMBER.search(text.translate(MINUS_SIGNS))
    return match.group().replace(",", "") if match else None


def _result(expression: str) -> str | None:
    """The first number after the last "=" of ``expression``, else its first number."""
    equals = last_match(LAST_EQUALS, expression)
    after = _first_number(expression[equals.end():]) if equals is not None else None
    return after if after is not None else _first_number(expression)


def number_of(expression: str) -> str | None:
    """The number an answer expression comes to: the first number after its last "=" (or
    "\\approx"), else its first number, bracketed asides left out when a number remains
    ("17 + 1 = 18" -> "18", "18 (= 17 + 1)" -> "18", "x = 7" -> "7", "$1,200" -> "1200")."""
    return _result(ASIDE.sub(" ", expression)) or _result(expression)


def last_number(**_: Any) -> Extractor:
    """The number after the last "Final Solution:", else the last number in the text."""

    def extract(text: str, item: Any = None) -> str | None:
        plain = _plain(text)
        for segment in final_segments(plain):
            number = number_of(segment)
            if number is not None:
                return number
        numbers = NUMBER.findall(plain.translate(MINUS_SIGNS))
        return numbers[-1].replace(",", "") if numbers else None

    return reads_tail(extract)


def hash_number(**_: Any) -> Extractor:
    """The number on the last "#### N" line, GSM8K's own answer form ("#### 1,000" -> "1000").

    A markdown heading ("#### Step 2", "#### 2. Add the costs") is not an answer line.
    """

    def extract(text: str, item: Any = None) -> str | None:
        for match in reversed(list(HASH_ANSWER.finditer(text))):
            content = _plain(match.group(1)).strip()
            if HASH_NUMBER_START.match(content) and not NUMBERED_HEADING.match(content):
                return number_of(content)
        return None

    return reads_tail(extract)


def boxed(number: bool = False) -> Extractor:
    """The content of the last ``\\boxed{...}`` (braces balanced); ``number: true`` keeps its number."""

    def extract(text: str, item: Any = None) -> str | None:
        content = last_boxed(text)
        if content is None or not content.strip():
            return None
        return number_of(content) if number else content.strip()

    return reads_tail(extract)


def _clean_expression(text: str) -> str:
    """Strip "$" delimiters, a trailing period and outer white space from a math answer."""
    text = text.strip()
    if text.startswith("$") and text.count("$") >= 2:
        text = text.strip("$")
    return text.strip().rstrip(".").strip().strip("$").strip()


def final_expression(number: bool = False) -> Extractor:
    """The expression after the last "Final Solution:" or "Final Answer:" (its ``\\boxed{}`` if any)."""

    def extract(text: str, item: Any = None) -> str | None:
        for segment in final_segments(text):
            content = last_boxed(segment) or _clean_expression(LEADING_ANSWER_IS.sub("", segment))
            content = number_of(content) if number else content
            if content:
                return content
        return None

    return reads_tail(extract)


def answer_is_expression(number: bool = False) -> Extractor:
    """The expression after the last "the answer is" (up to the end of its sentence or line)."""

    def extract(text: str, item: Any = None) -> str | None:
        for match in reversed(list(ANSWER_IS_TEXT.finditer(_plain(text)))):
            line = match.group(1)
            end = SENTENCE_END.search(line)
            content = _clean_expression(line[: end.start()] if end else line)
            content = number_of(content) if number else content
            if content:
                return content
        return None

    return reads_tail(extract)


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

    return reads_tail(extract)


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
    register("hash_number", hash_number)
    register("last_number", last_number)
    register("final_text", final_text)
