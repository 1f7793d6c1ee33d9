"""The ``choice`` extractor: the option a multiple-choice reply commits to, or why it commits to none.

Written for real replies (the 7,812 agent solutions of 372 MALLM debates, hand-labelled in
``tests/metrics/fixtures/mallm_answers``), which state their choice in many forms. The rules, in order:

1. After a "Final Solution:" marker, the letter the marker's segment names
   (:func:`madeval.builtins.extractors.letter_in`), checked against its text as below.
2. Else the last *statement* of a choice in the reply:

   * a stated choice: "The solution is E) 24 seconds.", "Solution: F", "The best answer is D.",
     "Answer ≈ E", "[ANSWER]: H", "the correct is C", "our answer is C" (a keyword, then "is",
     "was", ":", "=", "≈", "remains" or "corresponds to", then the letter);
   * a line that starts with an option label: "B) text", "(B) text", "H. text", "D (text)",
     "**C** text";
   * a line that is only a letter: "G", "[ B ]", "(D)", "A.", "**E**";
   * and only when the reply has none of these, an option in option form inside a sentence
     ("Previous response was I) 22.5%", "I pick (D)"), unless the reply mentions several
     options so or says that no option matches.

   The text after the letter is compared with the options (:mod:`madeval.builtins.option_match`):
   its own option's text confirms the letter; another option's text ("A) $194.21" where $194.21
   is option G) leaves the reply without an answer; further options after it ("B) 1 or G) 2",
   "A) [C]") make it ambiguous; a rejection ("I) 9.22 is incorrect", "B) No, E") is no choice,
   and the statement before it counts. Lines that each start with a different option ("F) apple",
   then "J) horse") are a list, not a choice, and so is a stated choice followed by a line that
   starts with another option ("The answer is B." then "D) ..."). A letter outside the item's
   options ("K" of A-J) is no answer.
3. Else a last line that restates exactly one option's text or value, whole, after its last
   "=" or "≈" ("$14,000", "12.3 m", "... ≈ 980 Btu/hr-ft^2") or after its last answer marker
   ("The answer is 24 seconds.", "Answer: 24"); or the value after the last "Final Solution:"
   marker, on whichever line ("Final Solution: 23" where 23 is option B's text). A value that
   restates several options is no answer: the reader never guesses between them. (On the 7,812
   real MALLM solutions no value after a marker restates an option the other rules left unread;
   the rule is for replies that state the value instead of the letter.)

Replies that commit to nothing say why (:class:`madeval.task.definition.NoAnswer`): an agreement marker
only ("[DISAGREE]"), a refusal ("No solution provided"), a value that matches no option (or
several). Each rule is a linear-time pattern over the reply's last
:data:`madeval.builtins.extractors.MAX_REPLY_CHARS` characters; only the last
:data:`MAX_STATEMENTS` statements are examined and only :data:`MAX_REST` characters after each.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections import deque
from typing import Any, Sequence

from madeval.builtins.extractors import (
    Extractor,
    _plain,
    final_segments,
    last_match,
    letter_in,
    reads_tail,
    valid_letters,
)
from madeval.builtins.option_match import NUMBER_CHAR, STARTS_WITH_NUMBER, Text, options_of, options_restated, restates
from madeval.core.hookspecs import hookimpl
from madeval.metrics.normal import normal_text
from madeval.task.definition import AMBIGUOUS, NoAnswer

MAX_STATEMENTS = 64  # statements examined, from the last; a reply of a million "A)" costs no more
MAX_REST = 400  # characters after a letter compared with the options

LONE_LETTER = re.compile(r"\s*+[\[(]?+[ \t]*+([A-Za-z])[ \t]*+[\])]?+[.:)]?+\s*+")
BOLD_LETTER = re.compile(r"\*\*[ \t]*+\(?([A-Z])\)?[.:]?[ \t]*+\*\*")  # "**C** text" is "C) text"
NOT_PRONOUN = r"(?!(?<=I)\s++[a-z])"  # "answer: I think", not option I
STATED = re.compile(
    r"\b(?i:answer|solution|choice|option|correct|letter)"
    r"(?:\s*+\]|\s++(?i:provided|to\s++(?:the|this)\s++(?:task|question)))?+"
    r"\s*+(?:(?i:is|was|would\s++be|remains|corresponds\s++to)\b|[:=≈])"
    r"(?:\s*+[:\-–])?+\s*+(?:(?i:indeed|therefore|clearly|option|choice|letter)\s++)?+"
    r"(\(?+\[?+)[ \t]*+([A-Za-z])((?:[ \t]*+[\])])?+)(?![A-Za-z0-9'’])" + NOT_PRONOUN
)
SOLUTION_LETTER_LINE = re.compile(r"^[ \t]*+(?i:solution|answer)[ \t]++\(?([A-Z])\)?[.)]?[ \t]*+$", re.MULTILINE)
# A label that starts a line: "(D) text", "B) text", "H. text", "D (text)" (not "A: text", the
# answer line of a Q/A transcript).
LABEL = re.compile(
    r"^[ \t]*+(?:[-•*>][ \t]++)?+(?:\(([A-Z])\)|([A-Z])(?:\)|\.(?=[ \t]++\S)|(?=[ \t]++\()))",
    re.MULTILINE,
)
BARE = re.compile(r"^[ \t]*+[-•>]?[ \t]*+[\[(]?+[ \t]*+([A-Za-z])[ \t]*+[\])]?+[ \t]*+[.:)]?+[ \t]*+$", re.MULTILINE)
# An option in option form inside a sentence: "was I) 22.5%", "Vitamin C (A), which".
MENTION = re.compile(r"(?:^|(?<=[\s\"'“(\[]))(?:\(([A-Z])\)|([A-Z])\))(?=[\s.,;:!?\"”')\]]|$)", re.MULTILINE)
OTHER_OPTION = re.compile(r"(?:^|(?<=[\s\"'“(\[]))(?:\(([A-Z])\)|\[[ \t]*+([A-Z])[ \t]*+\]|([A-Z])\))")
# Two letters joined as a list: "A, E", "A and C", "B or G)", "G + B/F", "F(+H)"; after a stated
# keyword, or at the start of a line (anchored: an unanchored leading "[ \t]*" is quadratic in a
# run of spaces).
LIST_BODY = (
    r"[(\[]?+([A-Z])[)\]]?+[ \t]*+(?:,|;|/|&|\+|\(\+|\band\b|\bor\b)[ \t]*+(?:optionally[ \t]*+,?[ \t]*+)?+"
    r"[(\[]?+\+?+[ \t]*+(?!I[ \t]++[a-z])([A-Z])(?![A-Za-z0-9'])"
)
LIST = re.compile(LIST_BODY)
LINE_LIST = re.compile(r"^[ \t]*+(?:[-•*>][ \t]++)?+" + LIST_BODY, re.MULTILINE)
# A statement that rejects its option: "I) [No, actually it is]", "I) 9.22 is incorrect because ...".
SAYS_NO = re.compile(r"[\W_]*+(?:no|not|none)\b", re.IGNORECASE)
CALLED_WRONG = re.compile(
    r"(?:[^.\n]|\.(?=\d)){0,80}?\b(?:is|are|was)[ \t]++(?:incorrect|wrong|removed|"
    r"not[ \t]++(?:correct|right|valid|an?[ \t]++(?:available[ \t]++)?(?:answer[ \t]++)?option))\b",
    re.IGNORECASE,
)
NONE_MATCHES = re.compile(
    r"\bnone[ \t]++of[ \t]++the[ \t]++(?:provided[ \t]++|given[ \t]++)?(?:answer[ \t]++)?"
    r"(?:solutions|options|answers|choices)"
    r"|\bnot[ \t]++an?[ \t]++(?:available[ \t]++)?(?:answer[ \t]++)?option", re.IGNORECASE,
)
STANCE_ONLY = re.compile(r"[\s\[(]*+(?:dis)?agree[\s\])]*+\.?\s*+", re.IGNORECASE)
REFUSAL = re.compile(
    r"\b(?:no[ \t]++(?:final[ \t]++|specific[ \t]++|direct[ \t]++)?(?:solution|answer|recommendation)"
    r"|not[ \t]++(?:possible|provided|found|determined)|cannot[ \t]++be[ \t]++determined|n't[ \t]++see"
    r"|none[ \t]++available|\bnone\b)",
    re.IGNORECASE,
)
RESULT_SIGN = re.compile(r"[=≈]")
# "Answer:", "the answer is", "Final Solution:" before a value; a letter after them is rule 2's
ANSWER_MARKER = re.compile(
    r"\b(?i:final[ \t]++(?:solution|answer)[ \t]*+[:：]|answer[ \t]*+[:：]|answer[ \t]++is\b)[ \t]*+")
ENDS_AFTER = re.compile(r"[ \t]*+(?:[.,;:!?)\]]|$)")
DIGIT = re.compile(r"\d")


@dataclasses.dataclass(frozen=True)
class Statement:
    """A place where a reply may state its choice: the letter and its position, where the text
    after it starts and ends (its line's end) and the kind of statement ("stated", "label",
    "bare", "list" or "mention")."""

    letter: str
    position: int
    rest: int
    end: int
    kind: str
    second: str = ""  # a list's second letter


#: Statements that form a list when they name different options on consecutive lines.
LISTED_KIND = {"label": "line", "bare": "line", "list": "line", "mention": "mention", "stated": "stated"}
REJECTED = object()  # a statement that rejects its option ("I) 9.22 is incorrect")


def read_choice(text: str, letters: str, choices: Sequence[str] | None) -> Any:
    """The option letter ``text`` commits to, a :class:`NoAnswer` saying why it commits to none,
    or ``None`` when it names no option at all (the module docstring gives the rules)."""
    alone = LONE_LETTER.fullmatch(text)
    if alone:  # "B", "(B)", "b." : most replies of a debate that has settled (a fast path)
        letter = alone.group(1).upper()
        return letter if letter in letters else NoAnswer(f"letter {letter} is not an option "
                                                         f"({letters[0]}-{letters[-1]})")
    choices = _normal_choices(tuple(choices)) if choices else None
    plain = _plain(BOLD_LETTER.sub(r"\1)", text))
    marked = _marker_choice(plain, letters, choices)
    if marked is not None:
        return marked
    strong, weak = _statements(plain)
    rejected: list[str] = []
    verdict = _last_choice(plain, strong, letters, choices, rejected)
    if verdict is not None:
        return verdict
    mentioned = sorted({statement.letter for statement in weak} & set(letters))
    if len(mentioned) > 1:
        return NoAnswer(f"mentions several options ({', '.join(mentioned)}) and states none")
    verdict = _last_choice(plain, weak, letters, choices, rejected)
    if isinstance(verdict, str) and NONE_MATCHES.search(plain):
        return NoAnswer("says that no option matches")
    if verdict is not None:
        return verdict
    if rejected:
        return NoAnswer(f"rejects option {rejected[0]} and names no other")
    return _restated_value(plain, letters, choices)


@functools.lru_cache(maxsize=1024)
def _normal_choices(choices: tuple) -> tuple[str, ...]:
    """An item's option texts as replies are read (:func:`normal_text`), kept for the next reply."""
    return tuple(normal_text(str(choice)) for choice in choices)


def _marker_choice(plain: str, letters: str, choices: Sequence[str] | None) -> Any:
    """The choice after the last "Final Solution:" marker that names one (rule 1), else ``None``."""
    for segment in filter(None, final_segments(plain)):
        letter = letter_in(segment, letters, choices)
        if letter is AMBIGUOUS:
            return NoAnswer(f"names several options after the final marker: {segment[:60]!r}")
        if letter is None:
            continue
        label = LABEL.match(segment) or BARE.match(segment)
        if label and _letter_of(label).upper() == letter:
            verdict = _confirm(letter, segment[label.end(): label.end() + MAX_REST], letters, choices)
            return None if verdict is REJECTED else verdict
        return letter
    return None


def _statements(plain: str) -> tuple[list[Statement], list[Statement]]:
    """The last :data:`MAX_STATEMENTS` strong statements (stated, label, bare, list) and weak ones
    (mentions inside a sentence), each in text order."""
    found: dict[int, tuple] = {}  # by the letter's position: a stated letter that starts a line is stated
    for match in LINE_LIST.finditer(plain):
        found[match.start(1)] = (match.group(1), match.end(), "list", match.group(2))
    for match in BARE.finditer(plain):
        found.setdefault(match.start(1), (match.group(1), match.end(), "bare", ""))
    for match in LABEL.finditer(plain):
        group = 1 if match.group(1) else 2
        found.setdefault(match.start(group), (match.group(group), match.end(), "label", ""))
    for match in SOLUTION_LETTER_LINE.finditer(plain):
        found[match.start(1)] = (match.group(1), match.end(), "stated", "")
    for match in STATED.finditer(plain):
        letter, position = match.group(2), match.start(2)
        if letter.islower() and not (match.group(1) and match.group(3)) and not _ends_after(plain, match.end()):
            continue  # "the answer is a number": the article, not option A
        if found.get(position, ("", 0, ""))[2] == "list":
            continue
        listed = LIST.match(plain, match.start(1))
        if listed:
            found[position] = (listed.group(1), listed.end(), "list", listed.group(2))
        else:
            found[position] = (letter, match.end(), "stated", "")
    last = sorted(found)[-MAX_STATEMENTS:]
    strong = [_statement(plain, position, *found[position]) for position in last]
    weak: deque[tuple] = deque(maxlen=MAX_STATEMENTS)
    for match in MENTION.finditer(plain):
        group = 1 if match.group(1) else 2
        if group == 2 and _inside_parentheses(plain, match.start()):
            continue  # "(l / D)", "(L × D) × N": a variable closing a bracket, not option D
        if match.start(group) not in found:
            weak.append((match.start(group), match.group(group), match.end(), "mention", ""))
    return strong, [_statement(plain, *mention) for mention in weak]


def _statement(plain: str, position: int, letter: str, rest: int, kind: str, second: str) -> Statement:
    """A statement whose text after the letter ends at the end of its line (at most
    :data:`MAX_REST` characters on)."""
    end = plain.find("\n", rest, rest + MAX_REST)
    return Statement(letter, position, rest, min(len(plain), rest + MAX_REST) if end < 0 else end, kind, second)


def _inside_parentheses(plain: str, position: int) -> bool:
    """True when an opening bracket before ``position`` on its line (within 80 characters) is
    still open."""
    start = max(plain.rfind("\n", 0, position) + 1, position - 80)
    return plain.rfind("(", start, position) > plain.rfind(")", start, position)


def _ends_after(plain: str, position: int) -> bool:
    return bool(ENDS_AFTER.match(plain[position:position + 3]))


def _last_choice(plain: str, statements: list[Statement], letters: str, choices: Sequence[str] | None,
                 rejected: list[str]) -> Any:
    """The verdict of the last statement that is a choice (rejections skipped and noted), or ``None``."""
    for index in range(len(statements) - 1, -1, -1):
        statement = statements[index]
        if statement.kind == "list":
            return NoAnswer(f"names several options ({statement.letter}, {statement.second})")
        if statement.letter.upper() not in letters:
            if statement.kind == "mention" or statement.letter.islower():
                continue  # "was K) ..." inside a sentence, a lower-case word: not a statement
            return NoAnswer(f"letter {statement.letter} is not an option ({letters[0]}-{letters[-1]})")
        rest = plain[statement.rest: min(statement.end, statement.rest + MAX_REST)]
        verdict = _confirm(statement.letter.upper(), rest, letters, choices)
        if verdict is REJECTED:
            rejected.append(statement.letter)
            continue
        if isinstance(verdict, str) and statement.kind in ("label", "bare"):
            said = next((earlier.letter.upper() for earlier in reversed(statements[:index])
                         if earlier.kind == "stated" and earlier.letter.upper() in letters), verdict)
            if said != verdict:
                return NoAnswer(f"states option {said}, then names option {verdict} on a line of its own")
        if isinstance(verdict, str) and statement.kind != "stated" and index > 0:
            before = statements[index - 1]
            first, second = before.letter.upper(), statement.letter.upper()
            if (LISTED_KIND[before.kind] == LISTED_KIND[statement.kind] and first != second and first in letters
                    and _adjacent(plain, before, statement)):
                return NoAnswer(f"lists several options ({first}, {second}) on consecutive lines")
        return verdict
    return None


def _adjacent(plain: str, before: Statement, after: Statement) -> bool:
    """True when ``before`` is on the last non-empty line before ``after``'s line."""
    lines = plain[before.position: after.position].split("\n")
    return len(lines) > 1 and not "".join(lines[1:-1]).strip()


def _confirm(letter: str, rest: str, letters: str, choices: Sequence[str] | None) -> Any:
    """``letter`` checked against the text after it (the module docstring: rule 2)."""
    if not rest.strip(" \t.,;:!?)]"):
        return letter
    index = letters.index(letter)
    own = choices[index] if choices and index < len(choices) else ""
    own_labels = {_letter_of(m) for m in OTHER_OPTION.finditer(own)}
    others = sorted({_letter_of(m) for m in OTHER_OPTION.finditer(rest)} & set(letters) - own_labels - {letter})
    if others:
        return NoAnswer(f"names several options ({letter}, {', '.join(others)})")
    if CALLED_WRONG.match(rest) and not CALLED_WRONG.match(own):
        return REJECTED
    if not choices:
        return REJECTED if SAYS_NO.match(rest) and not SAYS_NO.match(own) else letter
    said, options = Text(rest), options_of(choices)
    if index < len(options) and restates(said, options[index]):
        return letter
    if SAYS_NO.match(rest) and not SAYS_NO.match(own):
        return REJECTED
    elsewhere = [found for found in options_restated(said, options, letters) if found != letter]
    if elsewhere:
        return NoAnswer(f"letter {letter} restates option {'/'.join(elsewhere)}'s text, not its own")
    return letter


def _letter_of(match: re.Match) -> str:
    return next(group for group in match.groups() if group)


def _restated_value(plain: str, letters: str, choices: Sequence[str] | None) -> Any:
    """Rule 3 on the reply's last line, else the reason the reply has no answer (or ``None``)."""
    stripped = plain.strip()
    if STANCE_ONLY.fullmatch(stripped):
        return NoAnswer(f"only an agreement marker ({stripped[:20]})")
    last = stripped.rsplit("\n", 1)[-1].strip()
    if choices and last:
        candidates = [last]
        for after in (RESULT_SIGN, ANSWER_MARKER):
            found_at = last_match(after, last)
            if found_at is not None:
                candidates.append(last[found_at.end():])
        marked = final_segments(plain)
        if marked and marked[0]:
            candidates.append(marked[0])  # "Final Solution: 23" above a line of explanation
        options = options_of(choices)
        for candidate in map(Text, candidates):
            found = [letters[i] for i in range(min(len(options), len(letters))) if _whole(candidate, options[i])]
            if len(found) == 1:
                return found[0]
            if len(found) > 1:
                return NoAnswer(f"restates the values of several options ({', '.join(found)})")
    if REFUSAL.search(stripped):
        return NoAnswer("states no answer (a refusal)")
    if DIGIT.search(last):
        return NoAnswer("states a value that matches no option")
    return None


def _whole(candidate: Text, option: Text) -> bool:
    """True when ``candidate`` is ``option``'s whole text, or its value without the unit."""
    said, whole = candidate.key, option.key
    if not said:
        return False
    if said == whole:
        return True
    return (bool(STARTS_WITH_NUMBER.match(candidate.text)) and whole.startswith(said)
            and not NUMBER_CHAR.match(whole[len(said):]))


def choice(**_: Any) -> Extractor:
    """The option letter a reply commits to, in any of the forms real replies use (module
    docstring); a reply that commits to none says why (:class:`madeval.task.definition.NoAnswer`)."""

    def extract(text: str, item: Any = None) -> Any:
        return read_choice(text, valid_letters(item), getattr(item, "choices", None))

    return reads_tail(extract)


@hookimpl
def register_extractors(register):
    """The ``choice`` extractor."""
    register("choice", choice)
