"""Plain-text arithmetic ("3*sqrt(2)/2", "2^10", "x^2 + 1") to sympy, without ``eval``.

Model replies are untrusted text, so they are never given to sympy's ``parse_expr`` or
``sympify`` (both call Python's ``eval``). This module tokenises a small grammar and builds sympy
objects itself; anything outside the grammar is not parsed at all:

* numbers: ``12``, ``1.5``, ``.5`` (exact rationals);
* names: ``pi``; the functions ``sqrt``, ``sin``, ``cos``, ``tan``, ``log``, ``ln``, ``exp``
  followed by ``(``; any other run of letters is a product of one-letter symbols, as in LaTeX
  (``xy`` is ``x*y``, ``e`` is the symbol e, as sympy's LaTeX parser reads it);
* ``+ - * / ^ **`` (``^`` and ``**`` are powers, right-associative), ``!`` (factorial),
  parentheses, and implicit multiplication (``2x``, ``3(x+1)``).

Underscores, quotes, dots other than the decimal point, brackets, commas and backslashes are
outside the grammar. Every node is built unevaluated, so a huge ``9^9^9`` is not computed here
(:func:`madeval.metrics.math.small_enough` rejects it afterwards).
"""

from __future__ import annotations

import re
from typing import Any

TOKEN = re.compile(r"\s*(?:(\d+\.\d*|\.\d+|\d+)|([A-Za-z]+)|(\*\*|[-+*/^()!]))")
FUNCTIONS = ("sqrt", "sin", "cos", "tan", "log", "ln", "exp")


class _Tokens:
    """A cursor over ``(kind, text)`` tokens; kinds are ``num``, ``name`` and ``op``."""

    def __init__(self, text: str):
        self.items: list[tuple[str, str]] = []
        position, text = 0, text.rstrip()
        while position < len(text):
            match = TOKEN.match(text, position)
            if not match:
                raise ValueError(f"unexpected {text[position:position + 10]!r}")
            kind = "num" if match.group(1) else "name" if match.group(2) else "op"
            self.items.append((kind, match.group(match.lastindex)))
            position = match.end()
        self.index = 0

    def peek(self) -> tuple[str, str] | None:
        return self.items[self.index] if self.index < len(self.items) else None

    def take(self) -> tuple[str, str]:
        token = self.peek()
        if token is None:
            raise ValueError("unexpected end")
        self.index += 1
        return token

    def accept(self, op: str) -> bool:
        if self.peek() == ("op", op):
            self.index += 1
            return True
        return False


def parse_plain(text: str) -> Any:
    """The sympy expression ``text`` states, or ``ValueError`` when it is outside the grammar."""
    tokens = _Tokens(text)
    if not tokens.items:
        raise ValueError("empty")
    expression = _sum(tokens)
    if tokens.peek() is not None:
        raise ValueError(f"unexpected {tokens.peek()[1]!r}")
    return expression


# Every node is built unevaluated: nothing is computed while parsing.
def _add(left: Any, right: Any) -> Any:
    import sympy

    return sympy.Add(left, right, evaluate=False)


def _multiply(left: Any, right: Any) -> Any:
    import sympy

    return sympy.Mul(left, right, evaluate=False)


def _negate(value: Any) -> Any:
    import sympy

    return sympy.Mul(sympy.Integer(-1), value, evaluate=False)


def _reciprocal(value: Any) -> Any:
    import sympy

    return sympy.Pow(value, sympy.Integer(-1), evaluate=False)


def _sum(tokens: _Tokens) -> Any:
    value = _product(tokens)
    while True:
        if tokens.accept("+"):
            value = _add(value, _product(tokens))
        elif tokens.accept("-"):
            value = _add(value, _negate(_product(tokens)))
        else:
            return value


def _starts_factor(token: tuple[str, str] | None) -> bool:
    return token is not None and (token[0] in ("num", "name") or token == ("op", "("))


def _product(tokens: _Tokens) -> Any:
    value = _signed(tokens)
    while True:
        if tokens.accept("*"):
            value = _multiply(value, _signed(tokens))
        elif tokens.accept("/"):
            value = _multiply(value, _reciprocal(_signed(tokens)))
        elif _starts_factor(tokens.peek()):  # implicit multiplication: 2x, 3(x+1)
            value = _multiply(value, _power(tokens))
        else:
            return value


def _signed(tokens: _Tokens) -> Any:
    if tokens.accept("-"):
        return _negate(_signed(tokens))
    if tokens.accept("+"):
        return _signed(tokens)
    return _power(tokens)


def _power(tokens: _Tokens) -> Any:
    import sympy

    base = _postfix(tokens)
    if tokens.accept("^") or tokens.accept("**"):
        return sympy.Pow(base, _signed(tokens), evaluate=False)
    return base


def _postfix(tokens: _Tokens) -> Any:
    import sympy

    value = _primary(tokens)
    while tokens.accept("!"):
        value = sympy.factorial(value, evaluate=False)
    return value


def _primary(tokens: _Tokens) -> Any:
    import sympy

    kind, text = tokens.take()
    if kind == "num":
        return sympy.Rational(text)
    if (kind, text) == ("op", "("):
        inner = _sum(tokens)
        if not tokens.accept(")"):
            raise ValueError("unbalanced parentheses")
        return inner
    if kind == "name":
        if text in FUNCTIONS:
            if not tokens.accept("("):
                raise ValueError(f"{text} needs parentheses")
            argument = _sum(tokens)
            if not tokens.accept(")"):
                raise ValueError("unbalanced parentheses")
            function = {"sqrt": sympy.sqrt, "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan,
                        "log": sympy.log, "ln": sympy.log, "exp": sympy.exp}[text]
            return function(argument, evaluate=False)
        if text == "pi":
            return sympy.pi
        symbols = [sympy.Symbol(letter) for letter in text]
        return symbols[0] if len(symbols) == 1 else sympy.Mul(*symbols, evaluate=False)
    raise ValueError(f"unexpected {text!r}")
