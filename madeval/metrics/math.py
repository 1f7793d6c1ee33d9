"""Math answers: ``\\boxed{}`` reading, normalisation, and equivalence with sympy.

Normalisation follows the published rules of Hendrycks et al.'s MATH ``strip_string`` and
Lewkowycz et al.'s ``normalize_final_answer`` (Minerva, Appendix D): drop ``$``, ``\\left`` /
``\\right``, ``\\!`` and thin spaces, degree signs, percent signs, unit text, a leading ``x =``;
``\\tfrac`` / ``\\dfrac`` become ``\\frac``; ``\\frac12`` and ``\\sqrt3`` get their braces;
``a/b`` of integers becomes ``\\frac{a}{b}``; spaces and thousands separators are removed. When the
normalised strings differ, both sides are parsed and compared symbolically, element by element
for tuples. Parsing never evaluates the answer as Python: plain arithmetic ("3*sqrt(2)") goes to
madeval's own parser (:mod:`madeval.metrics.plain_math`), everything else to sympy's LaTeX parser;
an answer neither reads is not equal to anything it does not equal as a string.
"""

from __future__ import annotations

import re
from functools import lru_cache

from .plain_math import parse_plain

BOXED_COMMANDS = ("\\boxed", "\\fbox")
MAX_SYMPY_CHARS = 120
MAX_EXPONENT = 10_000  # a larger power of a number is not evaluated (see small_enough)
MAX_FACTORIAL = 1_000

_THOUSANDS = re.compile(r"^-?\d{1,3}(,\d{3})+(\.\d+)?$")
_INTEGER = re.compile(r"^[-+]?\d+$")
_DECIMAL = re.compile(r"^[-+]?(\d+\.?\d*|\.\d+)$")
_SIMPLE_FRACTION = re.compile(r"^(-?\d+)/(\d+)$")
_TEXT_COMMAND = re.compile(r"\\(?:text|textbf|textrm|mathrm|mbox|mathbf)\{([^{}]*)\}")
_UNIT_TEXT = re.compile(r"\\(?:text|mbox)\{\s[^{}]*\}")
# Plain arithmetic: digits, letters, operators, parentheses; no "_", quotes, brackets or "\\".
_PLAIN = re.compile(r"^[0-9A-Za-z+\-*/^()!.\s]+$")


def last_boxed(text: str) -> str | None:
    """The content of the last ``\\boxed{...}`` (or ``\\fbox{...}``), braces balanced; ``\\boxed 5`` too."""
    start = max(text.rfind(command) for command in BOXED_COMMANDS)
    if start < 0:
        return None
    command = next(c for c in BOXED_COMMANDS if text.startswith(c, start))
    rest = text[start + len(command):]
    if rest.startswith(" "):  # "\boxed 5": up to the next space or "$"
        return re.split(r"[\s$]", rest.strip(), maxsplit=1)[0] or None
    if not rest.startswith("{"):
        return None
    depth = 0
    for index, char in enumerate(rest):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return rest[1:index].strip()
    return None  # unbalanced


def _fix_fracs(text: str) -> str:
    """``\\frac12`` -> ``\\frac{1}{2}``, ``\\frac1{2}`` -> ``\\frac{1}{2}``."""
    parts = text.split("\\frac")
    fixed = parts[0]
    for part in parts[1:]:
        fixed += "\\frac"
        if part.startswith("{") or len(part) < 2:
            fixed += part
            continue
        numerator, rest = part[0], part[1:]
        if rest.startswith("{"):
            fixed += "{" + numerator + "}" + rest
        else:
            fixed += "{" + numerator + "}{" + rest[0] + "}" + rest[1:]
    return fixed


def _fix_sqrt(text: str) -> str:
    """``\\sqrt3`` -> ``\\sqrt{3}``."""
    return re.sub(r"\\sqrt(\w)", r"\\sqrt{\1}", text)


def normalize_math(answer: str) -> str:
    """The normalised form of a math answer (see the module docstring for the rules)."""
    text = str(answer).strip()
    boxed = last_boxed(text)
    if boxed is not None:
        text = boxed
    text = text.replace("\n", "").replace("\\!", "").replace("\\\\", "\\")
    for thin in ("\\,", "\\;", "\\:", "\\ ", "~"):
        text = text.replace(thin, "")
    text = text.replace("tfrac", "frac").replace("dfrac", "frac")
    text = text.replace("\\left", "").replace("\\right", "")
    for degree in ("^{\\circ}", "^\\circ", "°"):
        text = text.replace(degree, "")
    text = text.replace("\\$", "").replace("$", "")
    text = _UNIT_TEXT.sub("", text)
    text = _TEXT_COMMAND.sub(r"\1", text)
    text = text.replace("\\%", "").replace("%", "")
    text = text.replace(" .", " 0.").replace("{.", "{0.")
    text = text.strip().rstrip(".").strip()
    if text.startswith("."):
        text = "0" + text
    left, eq, right = text.partition("=")
    if eq and len(left.strip()) <= 2 and right.strip():
        text = right.strip()
    text = _fix_sqrt(text)
    text = text.replace(" ", "")
    text = _fix_fracs(text)
    if _THOUSANDS.match(text):
        text = text.replace(",", "")
    fraction = _SIMPLE_FRACTION.match(text)
    if fraction:
        text = f"\\frac{{{fraction.group(1)}}}{{{fraction.group(2)}}}"
    if _DECIMAL.match(text) and "." in text:
        text = text.rstrip("0").rstrip(".") or "0"
    return text


def integer_value(answer: str | None) -> int | None:
    """The integer an answer states ("025", "\\boxed{25}", "25.0", "1,000"), or ``None``."""
    if answer is None:
        return None
    text = normalize_math(answer).lstrip("+")
    if _INTEGER.match(text):
        return int(text)
    try:
        value = float(text)
    except ValueError:
        return None
    return int(value) if value.is_integer() else None


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside brackets: ``(1,2),3`` -> ``["(1,2)", "3"]``."""
    parts, depth, current = [], 0, ""
    for char in text:
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def _unwrap_brackets(text: str) -> tuple[str, str]:
    """``(1,2)`` -> ``("()", "1,2")``; text without outer brackets -> ``("", text)``."""
    if len(text) >= 2 and text[0] in "([" and text[-1] in ")]":
        return text[0] + text[-1], text[1:-1]
    return "", text


def small_enough(expression) -> bool:
    """False when evaluating ``expression`` could take very long: a power of a number with an
    exponent above ``MAX_EXPONENT`` in size (``9^{9^{9^9}}``), or a factorial above ``MAX_FACTORIAL``.

    Nodes are checked children first, so an exponent is only evaluated once it is known to be small.
    """
    import sympy

    for node in sympy.postorder_traversal(expression):
        if isinstance(node, sympy.Pow) and node.base.is_number and node.exp.is_number:
            if node.base in (0, 1, -1):
                continue
            if abs(complex(sympy.N(node.exp))) > MAX_EXPONENT:
                return False
        elif isinstance(node, sympy.factorial) and node.args[0].is_number:
            if abs(complex(sympy.N(node.args[0]))) > MAX_FACTORIAL:
                return False
    return True


def _parse(text: str):
    """Plain arithmetic (:mod:`madeval.metrics.plain_math`) or else sympy's LaTeX parser; no ``eval``."""
    if _PLAIN.match(text):
        try:
            return parse_plain(text)
        except ValueError:
            pass
    from sympy.parsing.latex import parse_latex

    return parse_latex(text)


@lru_cache(maxsize=4096)
def _to_sympy(text: str):
    """A sympy expression for a normalised answer, or ``None`` when it cannot be parsed.

    Answers are model output, i.e. untrusted: nothing here calls ``eval`` (sympy's ``parse_expr``
    and ``sympify`` do), and expressions too large to evaluate are refused.
    """
    if not text or len(text) > MAX_SYMPY_CHARS:
        return None
    import sympy

    try:
        if _DECIMAL.match(text):
            return sympy.Rational(text)
        expression = _parse(text)
        if not small_enough(expression):
            return None
        return expression.xreplace({sympy.Symbol("pi"): sympy.pi})  # the LaTeX parser reads \pi as a symbol
    except Exception:  # noqa: BLE001 - any parse failure means "not comparable"
        return None


def _sympy_equal(left: str, right: str) -> bool:
    a, b = _to_sympy(left), _to_sympy(right)
    if a is None or b is None:
        return False
    import sympy

    try:
        if a.is_number and b.is_number:
            x, y = complex(sympy.N(a)), complex(sympy.N(b))
            return abs(x - y) <= 1e-6 * max(1.0, abs(y))
        return sympy.simplify(a - b) == 0
    except Exception:  # noqa: BLE001
        return False


def math_equal(prediction: str | None, target: str | None) -> bool:
    """True when two math answers are equal after normalisation, or equal as sympy expressions."""
    if prediction is None or target is None:
        return False
    left, right = normalize_math(prediction), normalize_math(target)
    if not left or not right:
        return False
    if left == right:
        return True
    left_brackets, left_inner = _unwrap_brackets(left)
    right_brackets, right_inner = _unwrap_brackets(right)
    left_parts, right_parts = _split_top_level(left_inner), _split_top_level(right_inner)
    if len(left_parts) > 1 or len(right_parts) > 1:
        return (
            left_brackets == right_brackets
            and len(left_parts) == len(right_parts)
            and all(p == q or _sympy_equal(p, q) for p, q in zip(left_parts, right_parts))
        )
    return _sympy_equal(left, right)
