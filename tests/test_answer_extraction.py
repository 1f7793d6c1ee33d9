"""Answer extraction of the shipped benchmark tasks on adversarial replies (no data needed)."""

from __future__ import annotations

import pytest

from madeval.plugins import components
from madeval.run import task_index
from madeval.task import Item, task_loader

BUILT = components()
LOAD = task_loader(task_index(BUILT, []), BUILT.extractors, BUILT.metrics)
MMLU, MMLU_PRO, MUSR, STRATEGYQA = LOAD("mmlu"), LOAD("mmlu_pro"), LOAD("musr_murder_mysteries"), LOAD("strategyqa")
MATH500, GSM8K, AIME, SQUAD = LOAD("math500"), LOAD("gsm8k"), LOAD("aime2024"), LOAD("squad_v2")

FOUR = Item("x", "q", "B", choices=("1", "2", "3", "4"))
TEN = Item("y", "q", "J", choices=tuple(str(i) for i in range(10)))


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("**Final Solution:** **B**", "B"),  # markdown bold
        ("final solution: b", "B"),  # lower case
        ("Final Solution: the answer is B", "B"),  # MALLM reads "t"
        ("Final Solution:\nB", "B"),  # the answer on the next line
        ("Final Solution: A or C", None),  # several letters: no guess
        ("Final Solution: A, C", None),
        ("FINAL SOLUTION: a and b", None),
        ("I have no idea.", None),  # no letter
        ("The DNA test says nothing", None),  # capitals inside words are not letters
        ("Let me think. (A) is wrong, (C) is wrong. The answer is (B).", "B"),
        ("Option A fails. I pick (D)", "D"),
        ("**c**", "C"),
        # several options in option form: no answer, and no later extractor guesses one
        ("FINAL SOLUTION: A) 1 or B) 2", None),
        ("FINAL SOLUTION: a) 1 or b) 2", None),
        ("Final Solution: (A) or (C)", None),  # last_paren_letter would say C
        ("The answer is A or B.", None),
        ("Final Solution: (B), not (A)", None),
        # one option, other capitals in its text or around it
        ("FINAL SOLUTION: B) Vitamin D", "B"),
        ("Final Solution: B, as I said", "B"),
        ("FINAL SOLUTION: C. A is wrong because it is too small", "C"),
        # lower case where it cannot be an ordinary word
        ("the answer is b", "B"),
        ("After all that, the answer is c.", "C"),
        ("answer: d", "D"),
        ("The answer is a number, namely (C)", "C"),  # "a number": the article, not option A
        ("the answer is a good one", None),
    ],
)
def test_multiple_choice_chain_of_the_benchmarks(reply, expected):
    assert MMLU.extract(reply, FOUR) == expected


def test_ten_option_letters_for_mmlu_pro():
    assert MMLU_PRO.extract("FINAL SOLUTION: J", TEN) == "J"
    assert MMLU_PRO.extract("FINAL SOLUTION: K", TEN) is None


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Final Solution: I think B", "B"),  # "I" before a lower-case word is the pronoun
        ("Final Solution: I believe it is (E)", "E"),
        ("FINAL SOLUTION: I am not sure", None),
        ("FINAL SOLUTION: I", "I"),  # option I of A-J
        ("FINAL SOLUTION: I) 7", "I"),
        ("The answer is I.", "I"),
        ("Final Solution: I or J", None),
    ],
)
def test_option_i_and_the_pronoun_i_on_mmlu_pro(reply, expected):
    assert MMLU_PRO.extract(reply, TEN) == expected


def test_strategyqa_several_letters_give_no_answer():
    assert STRATEGYQA.extract("The answer is A or B.", Item("s", "q", "yes")) is None


def test_musr_reads_a_named_option():
    item = Item("m", "Who is the most likely murderer?", "B", choices=("Mack", "Ana Smith"))
    assert MUSR.extract("After all the clues...\nFINAL SOLUTION: Ana Smith", item) == "B"
    assert MUSR.extract("FINAL SOLUTION: B) Ana Smith", item) == "B"
    assert MUSR.extract("It was either Mack or Ana Smith.", item) is None  # both named: no guess


@pytest.mark.parametrize(
    ("reply", "expected"),
    [("FINAL SOLUTION: A) Yes", "yes"), ("final solution: b", "no"), ("FINAL SOLUTION: **No**", "no"),
     ("The answer is (A).", "yes"), ("No, because... so yes", "yes"), ("Hard to say.", None)],
)
def test_strategyqa_letters_and_words(reply, expected):
    assert STRATEGYQA.extract(reply, Item("s", "q", "yes")) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("First \\boxed{2}, then finally $\\boxed{\\frac{1}{\\sqrt{2}}}$.", "\\frac{1}{\\sqrt{2}}"),
        ("FINAL SOLUTION: $(3, \\frac{\\pi}{2})$", "(3, \\frac{\\pi}{2})"),
        ("So the answer is $x^2+1$.\nDone", "x^2+1"),
        ("The sum is 3 + 4 = 7", "7"),
        ("no numbers at all", None),
    ],
)
def test_math_chain(reply, expected):
    assert MATH500.extract(reply, None) == expected


def test_number_chains_keep_the_number():
    assert GSM8K.extract("She earns \\boxed{\\$18} a day", None) == "18"
    assert GSM8K.extract("The answer is $1,200 dollars.", None) == "1200"
    assert GSM8K.extract("FINAL SOLUTION: 42 apples", None) == "42"
    assert AIME.extract("Therefore the answer is \\boxed{025}.", None) == "025"


def test_squad_takes_the_final_text():
    assert SQUAD.extract("Thinking...\nFINAL SOLUTION: Southampton Philharmonic Choir", None) == (
        "Southampton Philharmonic Choir"
    )
    assert SQUAD.extract("[UNKNOWN]", None) == "[UNKNOWN]"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("FINAL SOLUTION: Paris.\nBecause it is the capital.", "Paris."),  # the answer line only
        ("Reasoning...\nFINAL SOLUTION:\n\nParis\nThat is all.", "Paris"),  # marker ending its line
        ("**FINAL SOLUTION:** **Paris**", "Paris"),
        ("FINAL SOLUTION: [UNKNOWN]\nThe context does not say.", "[UNKNOWN]"),
        ("FINAL SOLUTION:", None),
    ],
)
def test_squad_final_text_keeps_the_answer_line(reply, expected):
    assert SQUAD.extract(reply, None) == expected


def test_squad_answer_line_scores_like_the_answer():
    item = Item("q", "What is the capital of France?", ["Paris"])
    reply = "FINAL SOLUTION: Paris.\nBecause it is the capital."
    assert SQUAD.score(SQUAD.extract(reply, item), item) == {
        "exact": 1.0, "f1": 1.0, "HasAns_exact": 1.0, "HasAns_f1": 1.0
    }
