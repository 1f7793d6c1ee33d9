"""Digits and letters of other scripts are read and scored as what they are (issue 25, item 3).

At ce2f287 a full-width or Arabic-Indic number was read but math scoring called it wrong, and a
full-width option letter "Ｂ" was a parse failure while a full-width colon worked. Replies and
targets are now read in NFKC with ASCII digits (:mod:`madeval.metrics.normal`).
"""

from __future__ import annotations

import pytest

from madeval.core.item import Item
from madeval.metrics.answers import answers_match
from madeval.metrics.math import integer_value, math_equal
from madeval.metrics.normal import normal_text
from madeval.task.definition import task_loader
from madeval.task.files import task_index
from madeval.testing import core_registries

BUILT = core_registries()
LOAD = task_loader(task_index(BUILT, []), BUILT.extractors, BUILT.metrics)
MMLU, MATH500, GSM8K, AIME = LOAD("mmlu"), LOAD("math500"), LOAD("gsm8k"), LOAD("aime2024")
FOUR = Item("x", "q", "B", choices=("1", "2", "3", "4"))

FULL_WIDTH_18 = "\uff11\uff18"  # "１８"
ARABIC_INDIC_18 = "\u0661\u0668"  # "١٨"
DEVANAGARI_18 = "\u0967\u096e"  # "१८"


@pytest.mark.parametrize("eighteen", [FULL_WIDTH_18, ARABIC_INDIC_18, DEVANAGARI_18])
def test_hostile_digits_of_other_scripts_score_right_in_math(eighteen):
    item = Item("m", "q", "18")
    for reply in (f"So the answer is $\\boxed{{{eighteen}}}$.", f"Final Answer: {eighteen}"):
        prediction = MATH500.extract(reply, item)
        assert MATH500.score(prediction, item)["math_equivalence"] == 1.0, (reply, prediction)
    assert math_equal(eighteen, "18") and math_equal("18", eighteen)


@pytest.mark.parametrize("eighteen", [FULL_WIDTH_18, ARABIC_INDIC_18])
def test_hostile_digits_of_other_scripts_read_as_ascii_numbers(eighteen):
    item = Item("g", "q", "18")
    assert GSM8K.extract(f"They share them out.\n#### {eighteen}", item) == "18"
    assert integer_value(f"\\boxed{{0{eighteen}}}") == 18  # AIME's integer answers
    assert answers_match("number", eighteen, "18") and answers_match("math", f"{eighteen}.0", "18")


@pytest.mark.parametrize("reply",
                         ["FINAL SOLUTION: \uff22", "FINAL SOLUTION\uff1a\uff22", "The answer is \uff08\uff22\uff09.",
                                   "\uff22"])
def test_hostile_full_width_option_letters_read_as_the_letter(reply):
    assert MMLU.extract(reply, FOUR) == "B"
    assert MMLU.score(MMLU.extract(reply, FOUR), FOUR)["accuracy"] == 1.0


def test_hostile_full_width_prediction_scores_as_its_letter():
    assert MMLU.score("\uff22", FOUR)["accuracy"] == 1.0
    assert answers_match("choice", "\uff42", "B")


def test_hostile_superscripts_stay_powers_after_normalisation():
    assert normal_text("10\u00b2") == "10^2"  # NFKC alone makes it "102"
    assert normal_text("x\u207b\u00b9\u00b2") == "x^{-12}"
    assert normal_text("\u00bd") == "1/2"
    assert math_equal("x\u00b2", "x^2") and not math_equal("10\u00b2", "102")
    assert normal_text("plain ASCII stays as it is") == "plain ASCII stays as it is"
