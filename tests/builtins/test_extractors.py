"""Multiple-choice extraction on adversarial replies, with the built-in chain of arith_mc (``choice``)."""

from __future__ import annotations

import pytest

from madeval.core.item import Item

FOUR = Item("x", "q", "B", choices=("1", "2", "3", "4"))
TEN = Item("y", "q", "B", choices=tuple(str(i) for i in range(10)))


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Final Solution: B", "B"),
        ("final solution: b", "B"),  # MALLM compares case-sensitively and fails
        ("Final Solution: the answer is B", "B"),  # MALLM extracts "t"
        ("Answer: **B**", "B"),  # MALLM finds nothing
        ("**Final Solution:** **C**", "C"),
        ("FINAL SOLUTION: D) 42", "D"),
        ("The answer is (A).", "A"),
        ("I think it is (C) after all", "C"),
        ("b", "B"),
        ("(d).", "D"),
        ("Final Solution: A or B", None),  # several letters: no answer rather than a guess
        ("The DNA evidence shows nothing.", None),  # MALLM extracts "A" from "DNA: ..."
        ("I cannot decide.", None),
        ("Final Solution: E", None),  # not an option of a four-choice item
        ("Final Solution: a good choice is C", "C"),
        ("First I said Final Solution: A. Final Solution: C", "C"),
        # the ``choice`` extractor (before: arith_mc's letter-only chain read none of these)
        ("Answer B", "B"),
        ("1 + 1 = 2", "B"),  # the option's value after a result sign
        ("Adding them:\n2", "B"),  # the option's value alone on the last line
    ],
)
def test_multiple_choice_chain(generated_tasks, reply, expected):
    assert generated_tasks["arith_mc"].extract(reply, FOUR) == expected


def test_ten_option_letters(generated_tasks):
    task = generated_tasks["arith_mc"]
    assert task.extract("Final Solution: J", TEN) == "J"
    # "I" before a lower-case word is the pronoun, not option I (of A-J)
    assert task.extract("Final Solution: I think J", TEN) == "J"
    assert task.extract("Final Solution: I", TEN) == "I"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [("Final Solution: Yes", "yes"), ("final solution: NO.", "no"), ("No, because ... so yes", "yes"), ("maybe", None)],
)
def test_yes_no_chain(generated_tasks, reply, expected):
    assert generated_tasks["arith_yesno"].extract(reply, None) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("FINAL SOLUTION: B) (a) 2 apples, (b) 3 pears", "B"),  # main: "A" and "B" in option form
        ("Final Solution: (C) (i) 3, (ii) yes", "C"),
        ("FINAL SOLUTION: d) (a) 4", None),  # a lower-case leading option: "(a)" may be option A
        ("FINAL SOLUTION: B) (a) 2, or (C)", None),  # still two options
    ],
)
def test_hostile_lower_case_sub_labels_after_an_option(generated_tasks, reply, expected):
    assert generated_tasks["arith_mc"].extract(reply, FOUR) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("FINAL SOLUTION: B) 2", "B"),  # the option restated, as the prompt lists it
        ("B) 2", "B"),  # a vote's winner, marker stripped: restates option B exactly
        ("A) 1 or B) 2", None),  # not one restated option: no letter read
    ],
)
def test_restated_option_is_one_answer(generated_tasks, reply, expected):
    assert generated_tasks["arith_mc"].extract(reply, FOUR) == expected
