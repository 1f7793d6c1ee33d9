"""Comparing reply text with an item's options (madeval/builtins/option_match.py): each text's key
and numbers are computed once, an item's options once for every reply about it, and reply text
is never cached (a cache of reply fragments pushed the option keys out)."""

from __future__ import annotations

from collections import Counter

import pytest

from madeval.builtins import option_match
from madeval.builtins.choices import read_choice
from madeval.builtins.option_match import Text, options_of, options_restated, restates, restates_exactly

CHOICES = ("25 seconds", "18 seconds", "40 seconds", "45 seconds", "24 seconds")
LETTERS = "ABCDE"


@pytest.fixture
def keyed(monkeypatch):
    """The texts option_match computes a key of, counted (the real key is computed)."""
    counts: Counter = Counter()
    real = option_match.key

    def counting(text):
        counts[text] += 1
        return real(text)

    monkeypatch.setattr(option_match, "key", counting)
    options_of.cache_clear()
    yield counts
    options_of.cache_clear()


def test_each_text_is_keyed_once_and_the_options_once_per_item(keyed):
    # A's text is option E's: the reply's fragment is compared with its own option, then every other
    assert read_choice("The solution is A) 24 seconds.", LETTERS, CHOICES).reason == \
        "letter A restates option E's text, not its own"
    assert read_choice("The solution is B) 40 seconds.", LETTERS, CHOICES).reason == \
        "letter B restates option C's text, not its own"
    assert read_choice("So the shot clock runs for:\nt = 24 seconds", LETTERS, CHOICES) == "E"  # rule 3
    reply_fragments = {" 24 seconds.", " 40 seconds.", "t = 24 seconds", " 24 seconds"}
    assert {text: keyed[text] for text in reply_fragments} == dict.fromkeys(reply_fragments, 1)
    assert all(keyed[option] == 1 for option in CHOICES), keyed  # once for the three replies


def test_reply_text_is_not_cached(keyed):
    for _ in range(3):
        assert read_choice("The solution is A) 24 seconds.", LETTERS, CHOICES).reason
    assert keyed[" 24 seconds."] == 3  # read anew each time; the options were keyed once
    assert keyed["24 seconds"] == 1 and options_of.cache_info().currsize == 1


def test_text_keys_and_numbers():
    text = Text("$1,200.5 kJ/mol, i.e. 1.2 MJ.")
    assert text.key == "1200.5kj/mol,i.e.1.2mj" and text.numbers == [1200.5, 1.2]
    assert Text("").key == "" and Text("").numbers == [] and Text("(x)").numbers == []
    # before: "1,,2" and "1,2" read as 12.0; a comma before anything but three digits ends a number
    assert Text("1,,2").numbers == [1.0, 2.0] and Text("(1,2)").numbers == [1.0, 2.0]
    assert Text("1,2345 or 12,345,67").numbers == [1.0, 2345.0, 12345.0, 67.0]
    assert Text("-1,234,567.89").numbers == [-1234567.89]


def test_latex_mathrm_is_dropped_from_keys_whole():
    # before: the space or "$" before "\mathrm" was dropped with its backslash, keeping "mathrm"
    assert Text("91.7 $\\mathrm{~kJ} \\mathrm{~mol}^{-1}$").key == "91.7kjmol^-1"
    assert Text("$\\mathrm{Fe}^{3+}$ \\text{ions}").key == "fe^3+ions"


@pytest.mark.parametrize(("said", "option", "exactly", "loosely"), [
    ("91.7 kJ mol^{-1}", "91.7 $\\mathrm{~kJ} \\mathrm{~mol}^{-1}$", True, True),
    ("Fe ions", "$\\mathrm{Fe}$ ions", True, True),  # before: the option's key kept "mathrm"
    ("312", "312.0 K", True, True),  # its number
    ("By organizational size", "By organizational size.", True, True),
    ("By organ", "By organizational size.", False, True),  # an abbreviation of 4 or more characters
    ("the", "the answer", False, False),  # too short to abbreviate
    ("1.", "1.5 m", False, False),  # a prefix that cuts a number
    ("0.414 Å and 1.28", "0.414 Å and 3.48", False, False),  # numbers that disagree
    ("", "anything", False, False),
])
def test_restates(said, option, exactly, loosely):
    assert restates_exactly(Text(said), Text(option)) is exactly
    assert restates(Text(said), Text(option)) is loosely


def test_options_restated_names_every_option_whose_text_is_said():
    options = options_of(("12 m", "12 m", "13 m"))
    assert options_restated(Text("12 m, as computed"), options, "ABC") == ["A", "B"]
    assert options_restated(Text("12 m"), options, "A") == ["A"]  # only the item's letters


@pytest.mark.parametrize(
    ("text", "expected_key", "expected_numbers"),
    [
        ("1,2345", "1,2345", [1.0, 2345.0]),  # before: key "12345", numbers two; now both say two
        ("1,234", "1234", [1234.0]),
        ("1,234,5678", "1234,5678", [1234.0, 5678.0]),
        ("1.5,000", "1.5,000", [1.5, 0.0]),  # a comma after a decimal point separates no thousands
        ("1, 234", "1,234", [1.0, 234.0]),  # the comma is judged before white space is dropped
        ("$45,000. 00", "45000.00", [45000.0, 0.0]),
        ("(1,2)", "1,2", [1.0, 2.0]),
    ],
)
def test_keys_keep_the_commas_numbers_read_as_separating_numbers(text, expected_key, expected_numbers):
    said = Text(text)
    assert (said.key, said.numbers) == (expected_key, expected_numbers)


def test_a_number_cut_by_a_comma_restates_no_option_of_the_joined_number():
    assert not restates_exactly(Text("1,2345"), Text("12345"))
    assert restates_exactly(Text("12,345"), Text("12345"))
    assert read_choice("1,2345", "AB", ("12345", "1.2345")).reason == "states a value that matches no option"
    assert read_choice("12,345", "AB", ("12345", "1.2345")) == "A"
