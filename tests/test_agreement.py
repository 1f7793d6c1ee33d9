"""Reading [AGREE]/[DISAGREE]: the cases MALLM's substring test gets wrong, and more."""

from __future__ import annotations

import pytest

from madeval.agreement import parse_agreement, strip_markers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I cannot agree with this solution.", False),  # MALLM reads this as agreement
        ("The disagreement is resolved; [AGREE]", True),  # MALLM reads this as disagreement
        ("[AGREE] The solution is right.", True),
        ("[DISAGREE] The answer should be C.", False),
        ("[ disagree ] no", False),
        ("[DISAGREE] at first, but after checking: [AGREE]", False),  # the leading stance counts
        ("AGREE. The solution holds.", True),
        ("I agree with the current solution.", True),
        ("I don't fully agree with that.", False),
        ("We do not disagree on the facts.", True),
        ("I disagree.", False),
        ("There is broad agreement here.", None),  # nouns never count
        ("The answer is B.", None),
    ],
)
def test_agreement_is_read_from_explicit_markers_then_verbs(text, expected):
    assert parse_agreement(text)[0] is expected


def test_strip_markers_removes_only_the_markers():
    assert strip_markers("[DISAGREE] It is C. Final Solution: C") == "It is C. Final Solution: C"


@pytest.mark.parametrize(
    "text",
    [
        "If you agree with the current solution, answer with [AGREE]. The answer is B.",
        "Else, answer with [DISAGREE], explain why. I think B.",
        "If you agree, answer with 2.",
    ],
)
def test_echoes_of_the_instruction_take_no_stance(text):
    assert parse_agreement(text)[0] is None


def test_a_real_marker_after_an_echo_counts():
    assert parse_agreement("If you agree, answer with [AGREE]. So: [DISAGREE], it is C.")[0] is False
