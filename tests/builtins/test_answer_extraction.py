"""Answer extraction of the shipped benchmark tasks on adversarial replies (no data needed)."""

from __future__ import annotations

import contextlib
import signal

import pytest

from madeval.core.item import Item
from madeval.task.definition import Reading, task_loader
from madeval.task.files import task_index
from madeval.testing import core_registries

BUILT = core_registries()
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
        ("FINAL SOLUTION: I) 8", "I"),  # option I of TEN is "8"
        ("FINAL SOLUTION: I) 7", None),  # "7" is option H's text: the letter and its text disagree
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


@pytest.mark.parametrize(("reply", "expected", "note"), [
    ("FINAL SOLUTION: A) Ana Smith", None, "letter A restates option B's text, not its own"),
    ("A) Mack: had a motive\nB) Ana Smith: had the opportunity", None,
     "lists several options (A, B) on consecutive lines"),
    ("Mack had no motive, so the answer is (B) Ana Smith.", "B", None),
    ("final solution: **b**", "B", None),
])
def test_musr_reads_choices_as_the_other_multiple_choice_tasks_do(reply, expected, note):
    """MuSR's chain starts with the ``choice`` extractor, as mmlu_pro's and gpqa's: a letter whose text
    is another option's, or a list of options, is no answer rather than the first letter seen."""
    item = Item("m", "Who is the most likely murderer?", "B", choices=("Mack", "Ana Smith"))
    assert MUSR.read(reply, item) == Reading(expected, note)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [("FINAL SOLUTION: A) Yes", "yes"), ("final solution: b", "no"), ("FINAL SOLUTION: **No**", "no"),
     ("The answer is (A).", "yes"), ("No, because... so yes", "yes"), ("Hard to say.", None)],
)
def test_strategyqa_letters_and_words(reply, expected):
    assert STRATEGYQA.extract(reply, Item("s", "q", "yes")) == expected


@pytest.mark.parametrize(
    ("task", "reply", "expected"),
    [
        # MATH-500: the last boxed answer, else the stated answer or the last number
        (MATH500, "First \\boxed{2}, then finally $\\boxed{\\frac{1}{\\sqrt{2}}}$.", "\\frac{1}{\\sqrt{2}}"),
        (MATH500, "FINAL SOLUTION: $(3, \\frac{\\pi}{2})$", "(3, \\frac{\\pi}{2})"),
        (MATH500, "So the answer is $x^2+1$.\nDone", "x^2+1"),
        (MATH500, "The sum is 3 + 4 = 7", "7"),
        (MATH500, "no numbers at all", None),
        # number chains keep the number
        (GSM8K, "She earns \\boxed{\\$18} a day", "18"),
        (GSM8K, "The answer is $1,200 dollars.", "1200"),
        (GSM8K, "FINAL SOLUTION: 42 apples", "42"),
        (AIME, "Therefore the answer is \\boxed{025}.", "025"),
        # SQuAD takes the final text: the answer line only
        (SQUAD, "Thinking...\nFINAL SOLUTION: Southampton Philharmonic Choir", "Southampton Philharmonic Choir"),
        (SQUAD, "[UNKNOWN]", "[UNKNOWN]"),
        (SQUAD, "FINAL SOLUTION: Paris.\nBecause it is the capital.", "Paris."),
        (SQUAD, "Reasoning...\nFINAL SOLUTION:\n\nParis\nThat is all.", "Paris"),  # marker ending its line
        (SQUAD, "**FINAL SOLUTION:** **Paris**", "Paris"),
        (SQUAD, "FINAL SOLUTION: [UNKNOWN]\nThe context does not say.", "[UNKNOWN]"),
        (SQUAD, "FINAL SOLUTION:", None),
    ],
    ids=lambda value: value.name if hasattr(value, "extract") else None,
)
def test_a_task_reads_the_answer_of_a_reply(task, reply, expected):
    assert task.extract(reply, None) == expected


def test_squad_answer_line_scores_like_the_answer():
    item = Item("q", "What is the capital of France?", ["Paris"])
    reply = "FINAL SOLUTION: Paris.\nBecause it is the capital."
    assert SQUAD.score(SQUAD.extract(reply, item), item) == {
        "exact": 1.0, "f1": 1.0, "HasAns_exact": 1.0, "HasAns_f1": 1.0
    }


# Issue 12, defect 10: reply forms that madeval misread, found by scoring gsm8k and mmlu_pro
# replies with madeval and with lm-eval's own filters (bench/extraction_agreement.py measures it):
# the first two groups below.
@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        # the number of an expression is its result
        ("The answer is 17 + 1 = 18.", "18"),  # main read 17, the first number of the expression
        ("FINAL SOLUTION: 17 + 1 = 18", "18"),
        ("So she has \\boxed{17 + 1 = 18} apples.", "18"),
        ("The answer is x = 7.", "7"),
        ("The answer is 3 * $4 = $12.", "12"),
        ("The answer is 2.5 + 2.5 \\approx 5.0", "5.0"),
        ("FINAL SOLUTION: \\frac{36}{2} = 18", "18"),
        ("The answer is 18 (= 17 + 1).", "18"),  # a bracketed aside is not the answer
        ("The answer is (17 + 1) * 2 = 36.", "36"),
        ("The answer is (-5).", "-5"),
        # gsm8k reads its own hash line
        ("She buys 3 packs.\n#### 18\nCheck: 18 + 7 = 25, which matches the 25 she had.", "18"),
        ("#### 1,000\nThat is 10 boxes of 100.", "1000"),
        ("#### $18.00\nShe paid in cash, 2 notes.", "18.00"),
        ("#### **42**\nDone in 3 steps.", "42"),
        ("#### -5\nThe temperature fell by 5 from 0.", "-5"),
        ("#### 5\nWait, I forgot the 2 extra.\n#### 7\nThat is 2 more.", "7"),  # the last answer line
        ("She pays 18 in all.\n#### 17 + 1 = 18\n(1 for the bag)", "18"),
        # other reply forms
        # markdown headings of four "#" are not answer lines; the chain goes on to the last number
        ("#### Step 1: add\n5 + 13 = 18", "18"),
        ("#### 2. Add the costs\nShe pays 5 + 13 = 18.", "18"),
        # the polite forms
        ("The answer is $18.00", "18.00"),
        ("FINAL SOLUTION: 18 apples", "18"),
        ("The answer is 1,234.", "1234"),
        ("The answer is \u22125.", "-5"),  # a Unicode minus sign
        ("The answer is -5.", "-5"),
        ("x = 7", "7"),
        ("18", "18"),
    ],
)
def test_gsm8k_number_reply_forms(reply, expected):
    assert GSM8K.extract(reply, None) == expected


def test_hash_line_scores_against_the_gold_number():
    item = Item("g", "q", "18")
    assert GSM8K.score(GSM8K.extract("#### $18.00\nCheck: 18 + 7 = 25", item), item)["math_equivalence"] == 1.0


# MMLU-Pro options whose text carries sub-labels (question 556 and two options written after the
# kinds found in the test split: "(a) ... (b) ...", "(i) ... (ii) ...", "(A) ... (B) ...").
SUB_LABELLED = Item("p", "q", "G", choices=(
    "(i) 600, (ii) Yes", "(i) 585, (ii) No", "(i) 600, (ii) No", "(i) 720, (ii) Yes", "(i) 450, (ii) Yes",
    "(i) 720, (ii) No", "(i) 585, (ii) Yes", "(i) 570, (ii) No", "(i) 570, (ii) Yes", "(i) 450, (ii) No",
))
VELOCITY = Item("v", "q", "E", choices=tuple(
    f"(a) Average velocity = ({n}/7) u_m, beta = 1.{n}8. (b) Average velocity = 7.{n} m/s" for n in range(10)
))
SECTIONS = Item("s", "q", "J", choices=tuple(
    f"(A) Liability section, (B) Asset side, (C) Income Statement {n}" for n in range(9)
) + ("(A) Liability section, (B) Owner's Equity section, (C) Owner's Equity section",))


@pytest.mark.parametrize(
    ("reply", "item", "expected"),
    [
        ("FINAL SOLUTION: (E) (a) Average velocity = (4/7) u_m, beta = 1.48. (b) Average velocity = 7.4 m/s",
         VELOCITY, "E"),
        ("FINAL SOLUTION: E) (a) Average velocity = (4/7) u_m, beta = 1.48. (b) Average velocity = 7.4 m/s",
         VELOCITY, "E"),
        ("FINAL SOLUTION: **(G) (i) 585, (ii) Yes**", SUB_LABELLED, "G"),
        ("FINAL SOLUTION: G. (i) 585, (ii) Yes", SUB_LABELLED, "G"),
        # restated in upper-case sub-labels: read as one option only when it is that option's text
        ("FINAL SOLUTION: (J) (A) Liability section, (B) Owner's Equity section, (C) Owner's Equity section",
         SECTIONS, "J"),
        # a vote's winning solution reaches the task without its "FINAL SOLUTION:" marker
        ("(J) (A) Liability section, (B) Owner's Equity section, (C) Owner's Equity section\nIt balances.",
         SECTIONS, "J"),
        # lower-case sub-labels right after an upper-case option are its text, even reworded
        ("FINAL SOLUTION: G) (i) 585 struts, (ii) yes, it is enough", SUB_LABELLED, "G"),
        # a restated option followed by a second option still names two
        ("FINAL SOLUTION: (J) (A) Liability section, (B) Owner's Equity section, (C) Owner's Equity section, "
         "or (H)", SECTIONS, None),
        ("FINAL SOLUTION: (G) (i) 585, (ii) Yes or (B)", SUB_LABELLED, None),
    ],
)
def test_hostile_restated_option_with_sub_labels(reply, item, expected):
    assert MMLU_PRO.extract(reply, item) == expected


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Answer: E.", "E"),
        ("**E**", "E"),
        ("E) 4", "E"),
        ("e", "E"),
        ("final solution: e", "E"),
        ("The answer is (E).", "E"),
        ("Option A looks right and (B) is close, but (C) fails.\nFINAL SOLUTION: H", "H"),
        ("(A) is wrong, (C) is wrong. The answer is (J).", "J"),
        ("FINAL SOLUTION: I think it is H", "H"),
        ("Checking each one, the correct option is E.", "E"),
        ("My choice: (E)", "E"),
        ("Each option is a trap, except E", None),  # "a" is the article; a bare E outside a marker: no guess
    ],
)
def test_letter_reply_forms_on_ten_options(reply, expected):
    assert MMLU_PRO.extract(reply, TEN) == expected


HOSTILE_REPLIES = {  # about 10 MB each
    "answer: then spaces": "answer:" + " " * 10_000_000 + "1",
    "answer is then spaces": "the answer is x" + " " * 10_000_000 + "y",
    "a million markers": "Final Solution: " * 625_000,
    "a million marked lines": "FINAL SOLUTION: A\n" * 555_000,
    "parentheses and digits": "(1) ((2)) (A) 3,4. (b) \\boxed{{5} " * 300_000,
    "an open box": "\\boxed{" + "{" * 10_000_000,
    "hash lines": "#### 5 = 5 = 5\n" * 650_000,
    "digits and commas": "1," * 5_000_000,
    # the choice extractor's statements: thousands of letters in every form it reads
    "letters in option form": "A) B) (C) [D] " * 700_000,
    "letter lines": "A)\nB)\n" * 2_500_000,
    "bold letters": "**A** " * 1_600_000,
    "nested brackets": "(" * 5_000_000 + "A" + ")" * 5_000_000,
    "stated letters": "the answer is A, " * 600_000,
    "tabs before a list": "\t" * 10_000_000 + "A and",
}
LOADED = [MMLU_PRO, GSM8K, MATH500, STRATEGYQA, MUSR, SQUAD]


@pytest.mark.parametrize("name", sorted(HOSTILE_REPLIES))
def test_hostile_replies_extract_without_backtracking(name):
    """No extractor of the shipped tasks hangs on a 10 MB hostile reply (a quadratic regex or a
    segment copied per "Final Solution:" marker took minutes). 20 s is a guard against a hang, not
    a speed target: ``python bench/extraction_agreement.py`` prints the times (about 0.1 s)."""
    reply = HOSTILE_REPLIES[name]
    with deadline(20.0):
        for task in LOADED:
            task.extract(reply, TEN)


@contextlib.contextmanager
def deadline(seconds: float):
    """Fail the test when its body runs longer than ``seconds`` (SIGALRM interrupts a regex too)."""

    def expire(*_):
        pytest.fail(f"extraction still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("A) Yes", "yes"),
        ("After weighing it all:\nB) No, because the river froze. Yes, it was cold.", "no"),  # not the last word
        ("The answer is no, although yes would be tempting.", "no"),
        ("Solution: B) No", "no"),
        ("FINAL SOLUTION: A) No", None),  # the letter says yes, its text says no
        ("A) No", None),
        ("Final Solution: B) No", "no"),
    ],
)
def test_strategyqa_option_form_and_stated_answers(reply, expected):
    assert STRATEGYQA.extract(reply, Item("s", "q", "yes")) == expected


def test_strategyqa_a_disagreeing_letter_says_why():
    assert STRATEGYQA.read("A) No", Item("s", "q", "yes")).note == "letter A means yes, its text says no"


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("Each box holds 12, so 12 x 100 = 1,200 apples in all.\n#### 1,200", "1200"),
        ("#### $1,234.50", "1234.50"),
        ("The answer is 1,200 apples.", "1200"),
        ("So she pays \uff04\uff11\uff0c\uff12\uff10\uff10 in total.\n"
         "#### \uff11\uff0c\uff12\uff10\uff10", "1200"),  # full width
        ("#### \u0661\u0662\u0660\u0660", "1200"),  # Arabic-Indic digits
        ("#### 18 dollars", "18"),
    ],
)
def test_numbers_with_units_separators_and_other_digits(reply, expected):
    assert GSM8K.extract(reply, Item("g", "q", expected)) == expected
