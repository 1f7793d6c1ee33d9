"""Reading [AGREE] / [DISAGREE] from a reply.

MALLM tests ``"agree" in text and "disagree" not in text``, which reads "I cannot agree" as
agreement and "disagreement resolved; [AGREE]" as disagreement. Here explicit bracketed markers
decide; when both appear, the first one (the stance the reply leads with) wins. Without markers,
a bare upper-case AGREE/DISAGREE word counts, then the verbs "agree"/"disagree" with negation
("cannot agree", "don't agree" are disagreement). Nouns such as "agreement" never count.
Echoes of the instruction do not count either: a marker right after "answer with" and a verb
right after "if you" quote the prompt, not the agent's stance.
"""

from __future__ import annotations

import re

ECHO = r"(?<!answer with )(?<!respond with )"
BRACKETED = re.compile(ECHO + r"\[\s*(AGREE|DISAGREE)\s*\]", re.IGNORECASE)
ANY_BRACKETED = re.compile(r"\[\s*(AGREE|DISAGREE)\s*\]", re.IGNORECASE)
BARE_UPPER = re.compile(ECHO + r"(?<![A-Za-z])(AGREE|DISAGREE)(?![A-Za-z])")
VERB = re.compile(
    r"(?<!if you )(?<!if they )(?<!whether you )(?P<neg>\b(?:not|never|cannot|can't|can not|don't|do not|doesn't|does not|won't|didn't)\s+"
    r"(?:\w+\s+)?)?\b(?P<verb>agree|disagree)\b(?!ment)",
    re.IGNORECASE,
)


def parse_agreement(text: str) -> tuple[bool | None, str | None]:
    """``(agreement, note)``: True, False, or None when the reply takes no readable stance."""
    markers = [m.group(1).upper() for m in BRACKETED.finditer(text)]
    if markers:
        note = "both [AGREE] and [DISAGREE]; the first one counts" if len(set(markers)) > 1 else None
        return markers[0] == "AGREE", note
    text = ANY_BRACKETED.sub(" ", text)  # only echoed markers are left: ignore them
    bare = BARE_UPPER.search(text)
    if bare:
        return bare.group(1) == "AGREE", "no brackets; read the bare word"
    verb = VERB.search(text)
    if verb:
        agrees = verb.group("verb").lower() == "agree"
        if verb.group("neg"):
            agrees = not agrees
        return agrees, "no marker; read the verb"
    return None, "no agreement marker"


def strip_markers(text: str) -> str:
    """The reply without its bracketed [AGREE]/[DISAGREE] markers."""
    return ANY_BRACKETED.sub("", text).strip()
