"""The leaderboard as Markdown (printed at the end of a run), CSV and JSON.

Costs and times are per item (one debate on an item, its repeats averaged). The time shown is the
**LLM time** (``LLM s/item``): the sum of the debate's calls' own latencies, measured from the moment
a call holds a concurrency slot. The elapsed wall time of a debate (``wall_s_per_item`` in the CSV
and JSON) also counts the waits for a slot while other debates hold them, so it mostly measures
how busy the run was, not the configuration.
"""

from __future__ import annotations

import csv
import io
from typing import Any

from ..dynamics.render import markdown as dynamics_markdown
from ..shown_text import csv_cell, markdown_cell as cell
from .cost import COSTS, front_key

CSV_FIELDS = (
    "config", "label", "source", "replay_of", "scope", "task", "aggregation", "metric", "score", "ci_low",
    "ci_high", "ci_method", "population", "std_repeats", "items", "units", "repeats", "parse_failure_rate",
    "decision_success_rate", "mean_turns", "calls_per_item", "tokens_per_item", "llm_s_per_item",
    "wall_s_per_item", "oracle", "reference", "delta", "test", "p_value", "p_adjusted", "significant", "mde",
    *(front_key(cost) for cost in COSTS),
)
COMPARISON_FIELDS = (
    "scope", "task", "metric", "a", "label_a", "b", "label_b", "items", "delta", "test", "method", "p_value",
    "p_adjusted", "significant", "mde", "mde_method",
)
#: How each test is named in tables.
TEST_NAMES = {"mcnemar": "McNemar", "permutation": "permutation", "bootstrap": "bootstrap",
              "stratified permutation": "stratified permutation"}
#: The column name of the time shown, everywhere.
TIME_COLUMN = "LLM s/item"


def label_of(row: dict[str, Any]) -> str:
    """The row's configuration label with its marks: oracle runs use the gold answer."""
    return row["label"] + (" [oracle]" if row.get("oracle") else "")


def task_of(row: dict[str, Any]) -> str:
    """The row's task, or its group with the aggregation (``bbh (group, micro)``)."""
    if row["scope"] != "group":
        return row["task"]
    return f"{row['task']} (group, {row.get('aggregation') or 'macro'})"


def test_name(test: str | None) -> str:
    """A test's name as shown."""
    return TEST_NAMES.get(test or "", test or "")


def versus(row: dict[str, Any]) -> str:
    """The comparison with the reference: ``ref``, or the difference in points, p, the test and a star."""
    if row.get("reference"):
        return "ref"
    if row.get("delta") is None:
        return ""
    star = "*" if row["significant"] else ""
    return f"{points(row, row['delta'], sign=True)}{star} (p={row['p_adjusted']:.3g}, {test_name(row.get('test'))})"


def mde_text(mde: float | None, bounded: bool = True) -> str:
    """A minimum detectable effect as shown: ``±`` points (percent for scores in [0, 1]), or ``–``."""
    if mde is None:
        return "–"
    return f"±{100 * mde:.1f}" if bounded else f"±{mde:.3g}"


def row_mde(row: dict[str, Any]) -> str:
    """The row's minimum detectable effect against the reference as shown; empty without a comparison."""
    return mde_text(row.get("mde"), row.get("bounded", True)) if row.get("delta") is not None else ""


def points(row: dict[str, Any], value: float, sign: bool = False) -> str:
    """A score as shown: percent for scores in [0, 1], else the value itself."""
    plus = "+" if sign else ""
    return f"{100 * value:{plus}.1f}" if row.get("bounded", True) else f"{value:{plus}.3g}"


def _num(value: float | None, digits: int = 1, scale: float = 1.0) -> str:
    return "–" if value is None else f"{scale * value:.{digits}f}"


def markdown(board: dict[str, Any]) -> str:
    """The rows as a Markdown table (scores in [0, 1] in percent), the statement, and comparisons."""
    header = (
        "| configuration | task | metric | score | 95% CI | std (repeats) | items | parse fail "
        f"| decided | turns | calls/item | tokens/item | {TIME_COLUMN} | vs ref | MDE (80% power) |\n"
        "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n"
    )
    lines = [
        f"| {cell(label_of(r))} | {cell(task_of(r))} | {cell(r['metric'])} "
        f"| {points(r, r['score'])} | {points(r, r['ci_low'])}–{points(r, r['ci_high'])} "
        f"| {points(r, r['std_repeats'])} | {r['items']} | {100 * r['parse_failure_rate']:.1f}% "
        f"| {100 * r['decision_success_rate']:.0f}% | {r['mean_turns']:.2f} | {r['calls_per_item']:.1f} "
        f"| {r['tokens_per_item']:.0f} | {_num(r.get('llm_s_per_item'), 2)} | {versus(r)} "
        f"| {row_mde(r)} |"
        for r in board["rows"]
    ]
    text = header + "\n".join(lines) + "\n\n" + cell(board["statement"]) + "\n"
    if (board.get("records_read") or {}).get("summary"):  # each unit counted once, whatever is on disk
        text += f"\nRecords: {board['records_read']['summary']}; each unit counts once.\n"
    if cache_note(board):
        text += f"\n{cache_note(board)}\n"
    if board.get("merged"):
        text += "\n" + merged_markdown(board)
    elif board["options"]["compare"] == "all" and board["comparisons"]:
        text += "\n" + comparisons_markdown(board["comparisons"])
    dynamics = dynamics_markdown(board.get("dynamics") or [])
    return text + "\n" + cost_markdown(board["rows"]) + (f"\n{dynamics}" if dynamics else "")


def cache_note(board: dict[str, Any]) -> str:
    """A sentence saying how many calls the response cache answered, or ``""`` when none did."""
    share = board.get("cached_calls") or {}
    cached, calls = share.get("cached", 0), share.get("calls", 0)
    if not cached:
        return ""
    return (f"Cache: {cached} of {calls} calls ({100 * cached / max(calls, 1):.0f}%) were answered from the "
            "response cache; their tokens and LLM time are those of the original calls.")


def on_front(row: dict[str, Any], cost: str) -> str:
    """``front`` when the row is on the cost-accuracy Pareto front against ``cost`` (see :mod:`.cost`)."""
    return "front" if row.get(front_key(cost)) else ""


def cost_markdown(rows: list[dict[str, Any]]) -> str:
    """Score against tokens and calls per item, with each family's Pareto front marked."""
    lines = [
        "Cost and accuracy (front: no other configuration of the task scores at least as high for at most "
        "the cost):\n",
        "| configuration | task | metric | score | tokens/item | front (tokens) | calls/item | front (calls) |",
        "|---|---|---|---:|---:|---|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {cell(label_of(r))} | {cell(task_of(r))} | {cell(r['metric'])} | {points(r, r['score'])} "
            f"| {r['tokens_per_item']:.0f} "
            f"| {on_front(r, 'tokens_per_item')} | {r['calls_per_item']:.1f} | {on_front(r, 'calls_per_item')} |"
        )
    return "\n".join(lines) + "\n"


def merged_markdown(board: dict[str, Any]) -> str:
    """Which runs a merged board holds, what did not pair, and every comparison with its shared units."""
    held = [cell(f"{run} ({', '.join(labels)})") for run, labels in board["merged"]["runs"].items()]
    text = "Runs merged: " + "; ".join(held) + ". Each comparison pairs the (task, item, repeat) "
    text += "units both configurations recorded.\n"
    text += "".join(f"\nNote: {cell(note)}.\n" for note in board["merged"]["notes"])
    return text + ("\n" + comparisons_markdown(board["comparisons"]) if board["comparisons"] else "")


def comparisons_markdown(comparisons: list[dict[str, Any]]) -> str:
    """Every pairwise comparison as a Markdown table."""
    lines = [
        "| task | metric | A | B | items | A − B | MDE (80% power) | test | p | p adjusted | significant |",
        "|---|---|---|---|---:|---:|---:|---|---:|---:|---|",
    ]
    if any("units" in c for c in comparisons):  # a merged board: the units each pair shared
        lines = [lines[0].replace("| items |", "| items | units |"), lines[1].replace("|---:|", "|---:|---:|", 1)]
    for c in comparisons:
        units = f" | {c['units']}" if "units" in c else ""
        lines.append(
            f"| {cell(c['task'])} | {cell(c['metric'])} | {cell(c['label_a'])} | {cell(c['label_b'])} "
            f"| {c['items']}{units} "
            f"| {100 * c['delta']:+.1f} | {mde_text(c.get('mde'))} | {test_name(c['test'])} | {c['p_value']:.3g} "
            f"| {c['p_adjusted']:.3g} | {'yes' if c['significant'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def _csv(rows: list[dict[str, Any]], fields: tuple[str, ...]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        # Text a spreadsheet would run as a formula (a label '=HYPERLINK(...)') is neutralised.
        writer.writerow({k: ("" if row.get(k) is None else csv_cell(row.get(k))) for k in fields})
    return buffer.getvalue()


def csv_text(board: dict[str, Any]) -> str:
    """The rows as CSV (raw numbers, scores as fractions)."""
    return _csv(board["rows"], CSV_FIELDS)


def comparisons_csv(board: dict[str, Any]) -> str:
    """Every comparison of the board (against the reference or all pairs) as CSV, with its test."""
    fields = COMPARISON_FIELDS
    if board.get("merged"):  # the (task, item, repeat) units each pair of a merged board shared
        at = fields.index("items") + 1
        fields = fields[:at] + ("units",) + fields[at:]
    return _csv(board["comparisons"], fields)
