"""Does a piece of a reply restate an option? Comparing reply text with an item's option texts.

Replies restate options loosely: ``E) 91.7 kJ mol^{-1}`` for the option ``91.7 $\\mathrm{~kJ}
\\mathrm{~mol}^{-1}$``, ``J) 312`` for ``312.0 K``, ``A) $45,000.00`` for ``$45,000. 00``, ``J) By
organizational size`` for ``By organizational size.``. Two comparisons decide:

* a *key* of each text (case folded; white space, ``$``, thousands commas (those :func:`numbers`
  reads as inside a number, so "1,2345" keeps its comma), LaTeX ``\\mathrm``, braces, ``~`` and
  trailing punctuation dropped): the reply's key equals the option's or begins
  with it (the option, then more words), or, for an abbreviated option, is a prefix of it that
  does not cut a number;
* when the reply's text begins with a number, its *numbers*: the reply's numbers agree with the
  option's as far as the shorter list goes (``27°`` restates ``27^0``; ``0.414 Å and 1.28`` does
  not restate ``0.414 Å and 3.48``).

:func:`restates` is lenient (the reply's own option); :func:`restates_exactly` is strict (is it
another option's text?), so a paraphrase of its own option never reads as another option.
"""

from __future__ import annotations

import functools
import re
from typing import Sequence

# LaTeX commands are alternatives inside the repetition, tried before the lone backslash at each
# character: " $\mathrm" is dropped whole, where a class run would take " $\" and leave "mathrm".
KEY_NOISE = re.compile(r"(?:\\mathrm|\\text|\\,|[\s$~{}\\*_`\"'“”‘’])++")
TRAILING = re.compile(r"[.,;:!?)\]]+$")
LEADING = re.compile(r"^[(\[]+")
# A comma inside a number only before a group of exactly three digits (a thousands separator):
# "1,200" is one number, "1,2" and "1,,2" are two (a pair, a list), never 12.
NUMBER = re.compile(r"-?(?:\d++(?:,\d{3}(?!\d))*+(?:\.\d++)?+|\.\d++)")
STARTS_WITH_NUMBER = re.compile(r"\s*+[-$~≈]?\s*+\.?\d")
NUMBER_CHAR = re.compile(r"[\d.]")
MIN_ABBREVIATION = 4  # a shorter prefix ("the", "1.") restates nothing
MAX_COMPARED = 400  # characters of a reply compared with an option: options are short


def key(text: str) -> str:
    """The comparable form of ``text``'s first :data:`MAX_COMPARED` characters (module docstring).

    Not cached: reply text rarely repeats, and a cache of it would push out the option keys
    (:func:`options_of`), which every reply about an item is compared with."""
    text = text[:MAX_COMPARED].casefold()
    if "," in text:  # the separators numbers() drops, found as it finds them, before spaces go
        text = NUMBER.sub(_without_commas, text)
    text = KEY_NOISE.sub("", text)
    return LEADING.sub("", TRAILING.sub("", text))


def _without_commas(number: re.Match) -> str:
    return number.group().replace(",", "")


def numbers(text: str) -> list[float]:
    """The numbers of ``text`` in order, thousands separators dropped ("$1,200.5" -> [1200.5]);
    a comma before anything but three digits ends a number ("1,2" -> [1.0, 2.0])."""
    return [float(match.group().replace(",", "")) for match in NUMBER.finditer(text[:MAX_COMPARED])]


class Text:
    """A text compared with others: an option, or a piece of a reply. Its :func:`key` and its
    :func:`numbers` are computed once each, when first asked for."""

    __slots__ = ("text", "_key", "_numbers")

    def __init__(self, text: str):
        self.text = text
        self._key: str | None = None
        self._numbers: list[float] | None = None

    @property
    def key(self) -> str:
        """The text's :func:`key`."""
        if self._key is None:
            self._key = key(self.text)
        return self._key

    @property
    def numbers(self) -> list[float]:
        """The text's :func:`numbers`."""
        if self._numbers is None:
            self._numbers = numbers(self.text)
        return self._numbers

    def __repr__(self) -> str:
        return f"Text({self.text!r})"


@functools.lru_cache(maxsize=1024)  # an item's options are compared with every reply about it
def options_of(choices: tuple[str, ...]) -> tuple[Text, ...]:
    """An item's options as :class:`Text`, made once per options tuple (reply text is never cached)."""
    return tuple(Text(str(choice)) for choice in choices)


def _same_numbers(said: Text, option: Text) -> bool:
    ours, theirs = said.numbers, option.numbers
    shared = min(len(ours), len(theirs))
    return shared > 0 and all(abs(a - b) <= 1e-9 * max(1.0, abs(b)) for a, b in zip(ours[:shared], theirs))


def restates_exactly(said: Text, option: Text) -> bool:
    """True when ``said`` is ``option``'s text (the whole option, perhaps followed by more) or,
    beginning with a number, states ``option``'s numbers."""
    said_key = said.key
    if not said_key:
        return False
    option_key = option.key
    if not option_key:
        return False
    if said_key.startswith(option_key):
        return True
    return bool(STARTS_WITH_NUMBER.match(said.text)) and _same_numbers(said, option)


def restates(said: Text, option: Text) -> bool:
    """True when ``said`` restates ``option`` exactly (:func:`restates_exactly`) or abbreviates it:
    a prefix of at least :data:`MIN_ABBREVIATION` characters that does not cut a number."""
    if restates_exactly(said, option):
        return True
    said_key, option_key = said.key, option.key
    if len(said_key) < MIN_ABBREVIATION or not option_key.startswith(said_key):
        return False
    return len(said_key) == len(option_key) or not NUMBER_CHAR.match(option_key[len(said_key)])


def options_restated(said: Text, options: Sequence[Text], letters: str) -> list[str]:
    """The letters of the options ``said`` restates exactly, in option order."""
    return [letters[i] for i, option in enumerate(options[: len(letters)]) if restates_exactly(said, option)]
