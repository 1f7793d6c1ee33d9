"""Text in other scripts made comparable before it is read or scored (:func:`normal_text`).

Model replies and dataset targets write the same answer with different characters: a full-width
``Ｂ`` or ``１８`` (CJK input methods), Arabic-Indic ``١٨`` or Devanagari ``१८`` digits, a ligature
``ﬁ``, a non-breaking space. Unicode's compatibility normalisation (NFKC) folds the full-width and
compatibility forms into ASCII; digits of other scripts are not compatibility forms, so every
decimal digit (Unicode category Nd) becomes its ASCII digit as well.

NFKC alone would turn ``10²`` into ``102`` and ``½`` into ``1⁄2``: superscripts become ``^2`` (a
run such as ``⁻¹²`` becomes ``^{-12}``) and the fraction slash a plain ``/`` first, so a power
stays a power. ASCII text (nearly every reply) is returned as it is, at once.
"""

from __future__ import annotations

import re
import unicodedata

SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾", "0123456789+-=()")
SUPERSCRIPT_RUN = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁼⁽⁾]+")
FRACTION_SLASH = "\u2044"
OTHER_DIGIT = re.compile(r"(?![0-9])\d")  # a decimal digit of another script


def _power(match: re.Match) -> str:
    exponent = match.group().translate(SUPERSCRIPTS)
    return "^" + exponent if len(exponent) == 1 else "^{" + exponent + "}"


def normal_text(text: str) -> str:
    """``text`` in NFKC with ASCII digits and powers written ``^n`` (see the module docstring)."""
    if text.isascii():
        return text
    text = SUPERSCRIPT_RUN.sub(_power, text)
    text = unicodedata.normalize("NFKC", text).replace(FRACTION_SLASH, "/")
    return OTHER_DIGIT.sub(lambda match: str(unicodedata.decimal(match.group())), text)
