"""Agreement of math checkers on the MATH-500 golds and rewritten forms of each gold.

    MADEVAL_DATA_DIR=../shared/data python -m bench.math_agreement \\
        --lm-eval-tasks /path/to/site-packages/lm_eval/tasks [--limit N] [--show 40]

For every MATH-500 item, the gold answer is rewritten into forms that mean the same
(``\\dfrac``, ``a/b``, a terminating decimal, ``$...$``, ``\\boxed``, ``\\left( \\right)``, spaces,
``x =``, degrees, ``\\text{ units}``, thousands separators, reordered solution lists and
intervals, unreduced fractions, ``\\sqrt`` moved) and forms that do not (plus one, negated,
reciprocal, a swapped ordered pair, another item's gold). Each (form, gold) is scored by:

* ``old``: madeval's hand-written checker before math-verify (``math_equal`` read from git
  revision ``--old-rev``);
* ``new``: madeval's checker now (math-verify in the bounded worker, :mod:`madeval.metrics.math`);
* ``lm_em``: lm-eval's ``minerva_math`` exact match (``normalize_final_answer`` + ``is_equiv``,
  sympy's LaTeX parser) on the reply "Final Answer: The final answer is $F$. I hope it is correct."
  (its few-shot format; F keeps its own ``$`` when it has them);
* ``lm_hendrycks``: lm-eval's ``hendrycks_math`` ``is_equiv`` (string normalisation only);
* ``lm_mv``: lm-eval's ``minerva_math`` ``math_verify`` metric (``verify(parse(solution),
  parse(reply))``) on the same reply.

lm-eval's scoring files are loaded from ``--lm-eval-tasks`` (its ``lm_eval/tasks`` folder), so
they run with this interpreter's sympy and ANTLR 4.11, which sympy's LaTeX parser requires
(with another ANTLR version lm-eval's ``is_equiv`` cannot parse anything). The table counts,
per checker, how often it agrees with the intended label and with every other checker; the
cases where the checkers differ are listed. Runs as a script (the checker's worker is spawned).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import logging
import os
import re
import signal
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECKERS = ("old", "new", "lm_em", "lm_hendrycks", "lm_mv")
INTEGER = re.compile(r"^-?\d+$")
FRACTION = re.compile(r"^(-?)\\[dt]?frac\{(\d+)\}\{(\d+)\}$")
SQRT = re.compile(r"^(\d*)\\sqrt\{(\d+)\}$")


def _load_module(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def old_checker(rev: str):
    """madeval's ``math_equal`` as it was at git revision ``rev`` (math.py + plain_math.py)."""
    folder = Path(tempfile.mkdtemp()) / "madeval_old_math"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    for name in ("math.py", "plain_math.py"):
        source = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:madeval/metrics/{name}"],
                                check=True, capture_output=True, text=True).stdout
        (folder / name).write_text(source)
    sys.path.insert(0, str(folder.parent))
    from madeval_old_math.math import math_equal

    return math_equal


class _Alarm(Exception):
    pass


def _bounded(function, *args, seconds: int = 20):
    """``function(*args)``, or None when it runs over ``seconds`` (main thread, SIGALRM)."""
    def expire(signum, frame):
        raise _Alarm

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        return bool(function(*args))
    except _Alarm:
        return None
    except Exception:  # noqa: BLE001 - a checker that raises scores the pair wrong
        return False
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _decimal(numerator: int, denominator: int) -> str | None:
    reduced = denominator
    for prime in (2, 5):
        while reduced % prime == 0:
            reduced //= prime
    if reduced != 1 or numerator % denominator == 0:
        return None
    digits = 0
    while (numerator * 10**digits) % denominator:
        digits += 1
    return f"{numerator / denominator:.{digits}f}"


def _split_top(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char in "([{"
        depth -= char in ")]}"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return parts + [current]


def rewrites(gold: str, problem: str, other: str) -> list[tuple[str, str, bool]]:
    """(kind, form, equivalent?) for one gold answer."""
    forms = [("identity", gold, True), ("dollars", f"${gold}$", True), ("boxed", f"\\boxed{{{gold}}}", True)]
    if "\\frac" in gold:
        forms.append(("dfrac", gold.replace("\\frac", "\\dfrac"), True))
        unbraced = re.sub(r"\\frac\{(\d)\}\{(\d)\}", r"\\frac\1\2", gold)
        if unbraced != gold:
            forms.append(("frac_unbraced", unbraced, True))
    if "(" in gold and "\\left" not in gold:
        forms.append(("left_right", gold.replace("(", "\\left(").replace(")", "\\right)"), True))
    if "\\left" in gold:
        forms.append(("no_left_right", gold.replace("\\left", "").replace("\\right", ""), True))
    if "," in gold or "+" in gold:
        forms.append(("spaces", gold.replace(",", ", ").replace("+", " + "), True))
    if "=" not in gold and "," not in gold and "\\in" not in gold:
        forms.append(("x_equals", f"x = {gold}", True))
    if INTEGER.match(gold):
        n = int(gold)
        forms += [("unreduced", f"\\frac{{{2 * n}}}{{2}}", True), ("trailing_zero", f"{n}.0", True),
                  ("units", f"{n} \\text{{ units}}", True), ("plus_one", str(n + 1), False)]
        if n:
            forms.append(("negated", str(-n), False))
        if abs(n) >= 1000:
            forms += [("thousands", f"{n:,}", True), ("thousands_braced", f"{n:,}".replace(",", "{,}"), True)]
        if re.search(r"degree", problem, re.IGNORECASE):
            forms.append(("degrees", f"{n}^\\circ", True))
    fraction = FRACTION.match(gold)
    if fraction:
        sign, a, b = fraction.group(1), int(fraction.group(2)), int(fraction.group(3))
        forms += [("slash", f"{sign}{a}/{b}", True), ("unreduced", f"{sign}\\frac{{{2 * a}}}{{{2 * b}}}", True)]
        decimal = _decimal(a, b)
        if decimal:
            forms.append(("decimal", sign + decimal, True))
        if a != b:
            forms.append(("reciprocal", f"{sign}\\frac{{{b}}}{{{a}}}", False))
    root = SQRT.match(gold)
    if root:
        factor = int(root.group(1) or 1)
        forms.append(("sqrt_inside", f"\\sqrt{{{factor * factor * int(root.group(2))}}}", True))
    parts = _split_top(gold)
    if len(parts) > 1 and gold[0] not in "([" and len(set(parts)) > 1:
        forms.append(("list_reordered", ",".join(reversed(parts)), True))
    if gold.startswith("(") and gold.endswith(")") and len(_split_top(gold[1:-1])) == 2 and "\\cup" not in gold:
        first, second = _split_top(gold[1:-1])
        if first.strip() != second.strip():
            forms.append(("pair_swapped", f"({second},{first})", False))
    if "\\cup" in gold:
        pieces = gold.split("\\cup")
        forms.append(("union_reordered", "\\cup".join(reversed(pieces)), True))
    if other.strip() != gold.strip():
        forms.append(("other_gold", other, False))
    return forms


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lm-eval-tasks", type=Path, required=True, help="lm-eval's lm_eval/tasks folder")
    parser.add_argument(
        "--data", type=Path, default=Path(os.environ.get("MADEVAL_DATA_DIR", ROOT.parent / "shared" / "data"))
    )
    parser.add_argument("--old-rev", default="082f215", help="git revision of the former checker")
    parser.add_argument("--limit", type=int, default=None, help="first N items only")
    parser.add_argument("--show", type=int, default=60, help="differing cases to list")
    parser.add_argument("--json", type=Path, help="write every case and verdict here")
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # math-verify warns that its own signal timeouts are off

    minerva = _load_module("lm_minerva_utils", args.lm_eval_tasks / "minerva_math" / "utils.py")
    hendrycks = _load_module("lm_hendrycks_utils", args.lm_eval_tasks / "hendrycks_math" / "utils.py")
    old_equal = old_checker(args.old_rev)
    from madeval.metrics.checker import shutdown_checker
    from madeval.metrics.math import math_equal
    from madeval.metrics.notes import collecting_scoring_errors

    rows = [json.loads(line) for line in (args.data / "math500" / "test.jsonl").read_text().splitlines()]
    rows = rows[: args.limit] if args.limit else rows
    cases = []
    for index, row in enumerate(rows):
        other = rows[(index + 1) % len(rows)]["answer"]
        for kind, form, label in rewrites(row["answer"], row["problem"], other):
            cases.append(
                {
                    "item": row["unique_id"],
                    "gold": row["answer"],
                    "kind": kind,
                    "form": form,
                    "label": label,
                    "solution": row["solution"],
                }
            )

    def minerva_reply(form: str) -> str:  # the minerva_math few-shot format; "$" once
        return f"Final Answer: The final answer is {form if '$' in form else f'${form}$'}. I hope it is correct."

    def lm_em(case):
        reply = minerva_reply(case["form"])
        gold = minerva.normalize_final_answer(minerva.remove_boxed(minerva.last_boxed_only_string(case["solution"])))
        return minerva.is_equiv(minerva.normalize_final_answer(minerva.get_unnormalized_answer(reply)), gold)

    def lm_hendrycks(case):
        answer = hendrycks.remove_boxed(hendrycks.last_boxed_only_string(f"\\boxed{{{case['form']}}}"))
        gold = hendrycks.remove_boxed(hendrycks.last_boxed_only_string(case["solution"]))
        return hendrycks.is_equiv(answer, gold)

    def lm_mv(case):
        reply = minerva_reply(case["form"])
        return minerva.verify(gold=minerva.parse(case["solution"]), target=minerva.parse(reply))

    undecided = 0
    try:
        for number, case in enumerate(cases, 1):
            case["old"] = _bounded(old_equal, case["form"], case["gold"])
            with collecting_scoring_errors() as errors:
                case["new"] = math_equal(case["form"], case["gold"])
            undecided += bool(errors)
            case["lm_em"] = _bounded(lm_em, case)
            case["lm_hendrycks"] = _bounded(lm_hendrycks, case)
            case["lm_mv"] = _bounded(lm_mv, case)
            if number % 250 == 0:
                print(f"  {number}/{len(cases)} cases", file=sys.stderr, flush=True)
    finally:
        shutdown_checker()
    report(cases, undecided, args.show)
    if args.json:
        args.json.write_text(json.dumps([{k: v for k, v in c.items() if k != "solution"} for c in cases], indent=1))
    return 0


def report(cases: list[dict], undecided: int, show: int) -> None:
    """Print the agreement table and the cases where the checkers differ."""
    total = len(cases)
    kinds = Counter(c["kind"] for c in cases)
    print(
        f"\n{total} cases from {len({c['item'] for c in cases})} MATH-500 golds "
        f"({sum(c['label'] for c in cases)} equivalent, {sum(not c['label'] for c in cases)} not); "
        f"new checker undecided (deadline): {undecided}"
    )
    print("forms: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    print("\nagreement (cases where both give the same verdict, of " + str(total) + ")")
    print("| checker | vs label | " + " | ".join(CHECKERS) + " | timed out |")
    print("|---|---|" + "---|" * len(CHECKERS) + "---|")
    for name in CHECKERS:
        same = [sum(bool(c[name]) == bool(c[other]) for c in cases) for other in CHECKERS]
        label = sum(bool(c[name]) == c["label"] for c in cases)
        timeouts = sum(c[name] is None for c in cases)
        print(f"| {name} | {label} | " + " | ".join(map(str, same)) + f" | {timeouts} |")
    print("\nper form: cases judged equivalent by each checker")
    print("| form | label | cases | " + " | ".join(CHECKERS) + " |")
    print("|---|---|---|" + "---|" * len(CHECKERS))
    for kind in sorted(kinds):
        group = [c for c in cases if c["kind"] == kind]
        print(
            f"| {kind} | {'eq' if group[0]['label'] else 'ne'} | {len(group)} | "
            + " | ".join(str(sum(bool(c[name]) for c in group)) for name in CHECKERS)
            + " |"
        )
    for left, right in (("new", "lm_em"), ("new", "lm_mv"), ("new", "old")):
        differing = [c for c in cases if bool(c[left]) != bool(c[right])]
        print(f"\n{len(differing)} cases where {left} and {right} differ (first {min(show, len(differing))}):")
        for c in differing[:show]:
            verdicts = " ".join(f"{n}={'T' if c[n] else ('-' if c[n] is None else 'F')}" for n in CHECKERS)
            print(
                f"  [{c['kind']}] {c['form']!r} vs gold {c['gold']!r} "
                f"(label {'eq' if c['label'] else 'ne'}): {verdicts}"
            )


if __name__ == "__main__":
    raise SystemExit(main())
