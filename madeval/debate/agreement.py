"""Reading [AGREE] / [DISAGREE] from a reply.

MALLM tests ``"agree" in text and "disagree" not in text``, which reads "I cannot agree" as
agreement and "disagreement resolved; [AGREE]" as disagreement. Here the stance is read in this
order, and the first class that is present decides:

1. bracketed markers ("[AGREE]", "[ disagree ]", "**[AGREE]**");
2. a bare upper-case AGREE / DISAGREE word (what the challenge prompt asks for);
3. the verbs "agree" / "disagree" (nouns such as "agreement" never count).

Within a class the first occurrence (the stance the reply leads with) counts. A negation earlier
in the same clause, with at most three words between ("not", "never", "cannot", "...n't",
"nothing to", "no reason to", "no longer"), flips it: "I cannot [AGREE]" and "I can't say I
agree" are disagreement, "I do not disagree" is agreement; the idiom "could not agree more" is
agreement. A clause ends at . , ; : ! ?, a line break, or "but", "yet", "although", "though".

Echoes of the instruction take no stance: a marker right after "answer/respond/reply (only)
with (the exact word)", a listing such as "[AGREE] or [DISAGREE]" or "AGREE/DISAGREE", and a
verb right after "if you/they/I" or "whether you/they/I".
"""

from __future__ import annotations

import re

from madeval.core.transcript import NO_AGREEMENT_MARKER

BRACKETED = re.compile(r"\[\s*(AGREE|DISAGREE)\s*\]", re.IGNORECASE)
BARE_UPPER = re.compile(r"(?<![A-Za-z])(AGREE|DISAGREE)(?![A-Za-z])")
VERB = re.compile(r"\b(agree|disagree)\b", re.IGNORECASE)
KINDS = ((BRACKETED, None), (BARE_UPPER, "no brackets; read the bare word"), (VERB, "no marker; read the verb"))

_WORD = r"(?:\[\s*)?(?:AGREE|DISAGREE)(?:\s*\])?"  # starts at "[" or the word: no scan of every space
LISTING = re.compile(rf"{_WORD}['\"`*]*\s*(?:or|/|and)\s*['\"`*]*{_WORD}", re.IGNORECASE)
MARKER_ECHO = re.compile(
    r"\b(?:answer|respond|reply)(?:\s+only)?\s+with(?:\s+the)?(?:\s+exact)?(?:\s+word)?[\s'\"`*]*$", re.IGNORECASE
)
VERB_ECHO = re.compile(r"\b(?:if|whether)\s+(?:you|they|i)\s+$", re.IGNORECASE)
CLAUSE_END = re.compile(r"[.,;:!?\n]|\b(?:but|yet|although|though)\b", re.IGNORECASE)
NEGATION = re.compile(
    r"\b(?:not|never|cannot|\w+n['’]t|nothing\s+to|no\s+reason\s+to|no\s+longer)(?:\s+[\w'’]+){0,3}[\s'\"`*_]*$",
    re.IGNORECASE,
)
MORE = re.compile(r"\s+more\b", re.IGNORECASE)
#: How far before a marker the echo and negation rules look (their longest form is a few words).
LOOK_BEHIND_CHARS = 200
#: Markers read per kind: the first stance counts, so a reply of a million markers costs no more
#: than its first hundred (the "both [AGREE] and [DISAGREE]" note looks at these only).
MAX_MARKERS = 100


def parse_agreement(text: str) -> tuple[bool | None, str | None]:
    """``(agreement, note)``: True, False, or None when the reply takes no readable stance.

    ``note`` says how the stance was read when it was not a single plain bracketed marker.
    """
    text = _blank(LISTING, text)
    for pattern, how in KINDS:
        stances = [s for s in _stances(text, pattern) if s is not None]
        if not stances:
            text = _blank(pattern, text) if pattern is BRACKETED else text  # echoed markers only
            continue
        agrees, negated = stances[0]
        notes = [how] if how else []
        if negated:
            notes.append("negated")
        if pattern is BRACKETED and len({s[0] for s in stances}) > 1:
            notes.append("both [AGREE] and [DISAGREE]; the first one counts")
        return agrees, "; ".join(notes) or None
    return None, NO_AGREEMENT_MARKER


def _stances(text: str, pattern: re.Pattern):
    """The stances of the first :data:`MAX_MARKERS` matches of ``pattern`` (None for an echo)."""
    for count, match in enumerate(pattern.finditer(text)):
        if count == MAX_MARKERS:
            return
        yield _stance(text, match)


def _blank(pattern: re.Pattern, text: str) -> str:
    """``text`` with every match of ``pattern`` replaced by spaces (positions are kept)."""
    return pattern.sub(lambda m: " " * len(m.group(0)), text)


def _stance(text: str, match: re.Match) -> tuple[bool, bool] | None:
    """``(agrees, negated)`` for one marker or verb, or None when it echoes the instruction."""
    # The echo and negation rules read a few words before the marker: a bounded window keeps a
    # reply of a million markers linear (the whole prefix per marker was quadratic).
    before = text[max(0, match.start() - LOOK_BEHIND_CHARS): match.start()]
    if MARKER_ECHO.search(before) or (match.re is VERB and VERB_ECHO.search(before)):
        return None
    agrees = match.group(1).upper() == "AGREE"
    ends = list(CLAUSE_END.finditer(before))
    clause = before[ends[-1].end():] if ends else before
    negated = bool(NEGATION.search(clause))
    if negated and agrees and MORE.match(text, match.end()):
        return True, False  # "I could not agree more"
    return agrees != negated, negated


def strip_markers(text: str) -> str:
    """The reply without its bracketed [AGREE]/[DISAGREE] markers."""
    return BRACKETED.sub("", text).strip()
