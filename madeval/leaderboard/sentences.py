"""The board's last words: one plain sentence per comparison, that a reader can quote.

A significant difference says who beats whom, by how much, its 95% interval, the adjusted p-value
(named by its correction) and the difference these items find 4 times in 5 (the MDE); a difference
that is not significant says so, and how large a difference the items find that often (smaller
ones are found less often, not never). The comparison of
the two best-scoring configurations is marked (``Best against runner-up``), so whether the best is
really better needs no option. Numbers are on the metric's own scale, as everywhere on the board.
"""

from __future__ import annotations

from typing import Any

from madeval.leaderboard.render import adjusted_by, points


def sentence(comparison: dict[str, Any], correction: str, bounded: bool = True, where: str = "") -> str:
    """One comparison (``a - b``, see :mod:`.compare`) as a sentence; ``where`` names the task and
    metric (`` on arith_mc (accuracy)``) when the board has more than one. A sentence that opens
    with a label quotes it exactly as it is (``simple_voting beats ...``): a label is an identifier
    (a configuration, a component, a file name), and ``Simple_voting`` names nothing."""
    shown = {"bounded": bounded}
    p = f"p={comparison['p_adjusted']:.2g} {adjusted_by(correction)}"
    said = _said(comparison, p, shown, where)
    if comparison.get("top_two"):  # its first word follows the mark's colon: left as it is
        return "Best against runner-up: " + said
    labelled = said.startswith((comparison["label_a"], comparison["label_b"]))
    return said if labelled else capitalised(said)


def capitalised(text: str) -> str:
    """``text`` starting with a capital when it starts with a lower-case letter (a sentence of the
    board's own words: ``too few items ...``); otherwise as it is. Only that first character changes.
    A letter whose capital is two letters (``ß``) is left alone. Never given a sentence that opens
    with a label (:func:`sentence`): labels keep their case."""
    first = text[:1]
    capital = first.title()  # title case: the capital of a digraph such as ǆ starting a sentence is ǅ
    return capital + text[1:] if first.islower() and len(capital) == 1 else text


def _said(comparison: dict[str, Any], p: str, shown: dict[str, Any], where: str) -> str:
    """The sentence itself, its first word as written (:func:`sentence` capitalises it)."""
    a, b, delta = comparison["label_a"], comparison["label_b"], comparison["delta"]
    items, mde = comparison["items"], comparison.get("mde")
    few = "too few items"
    if comparison["significant"]:
        winner, loser, sign = (a, b, 1) if delta > 0 else (b, a, -1)
        low, high = sorted((sign * comparison.get("delta_ci_low", delta),
                            sign * comparison.get("delta_ci_high", delta)))
        text = (f"{winner} beats {loser}{where} by {points(shown, abs(delta))} (95% CI {points(shown, low)} to "
                f"{points(shown, high)}, {p})")
        if mde is not None:
            text += f"; on {items} items a difference of {points(shown, mde)} is found 4 times in 5"
        return text + "."
    difference = f"{a} − {b} = {points(shown, delta, sign=True)}, {p}"
    if mde is None:
        return (f"{few} to tell {a} from {b}{where}: with {items} items no difference would "
                f"reliably be seen ({difference}).")
    if abs(delta) < mde:
        return (f"{few} to tell {a} from {b}{where} reliably: {items} items find a difference of "
                f"{points(shown, mde)} 4 times in 5, smaller ones less often ({difference}).")
    return (f"{a} and {b} differ{where} by {points(shown, abs(delta))}, but not significantly ({difference}); "
            f"{items} items find a difference of {points(shown, mde)} 4 times in 5.")


def conclusions(rows: list[dict[str, Any]], comparisons: list[dict[str, Any]], correction: str) -> list[str]:
    """One sentence per comparison, in the board's order; the task and metric are named when the
    board has more than one (task, metric) family."""
    families = {(c["scope"], c["task"], c["metric"]) for c in comparisons}
    bounded = {(r["config"], r["scope"], r["task"], r["metric"]): r.get("bounded", True) for r in rows}
    said = []
    for c in comparisons:
        where = f" on {c['task']} ({c['metric']})" if len(families) > 1 else ""
        said.append(sentence(c, correction, bounded.get((c["a"], c["scope"], c["task"], c["metric"]), True), where))
    return said
