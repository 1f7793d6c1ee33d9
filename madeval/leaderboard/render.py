"""The leaderboard as Markdown (printed at the end of a run), CSV and JSON."""

from __future__ import annotations

import csv
import io
from typing import Any

CSV_FIELDS = (
    "config", "label", "source", "replay_of", "scope", "task", "metric", "score", "ci_low", "ci_high",
    "ci_method", "population", "std_repeats", "items", "units", "repeats", "parse_failure_rate",
    "decision_success_rate", "mean_turns", "calls_per_item", "tokens_per_item", "wall_s_per_item",
    "oracle", "reference", "delta", "test", "p_value", "p_adjusted", "significant",
)


def label_of(row: dict[str, Any]) -> str:
    """The row's configuration label with its marks: oracle runs use the gold answer."""
    return row["label"] + (" [oracle]" if row.get("oracle") else "")


def versus(row: dict[str, Any]) -> str:
    """The comparison with the reference: ``ref``, or the difference in points, p and a star."""
    if row.get("reference"):
        return "ref"
    if row.get("delta") is None:
        return ""
    star = "*" if row["significant"] else ""
    return f"{points(row, row['delta'], sign=True)}{star} (p={row['p_adjusted']:.3g})"


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
        "| decided | turns | calls/item | tokens/item | wall s/item | vs ref |\n"
        "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n"
    )
    lines = [
        f"| {label_of(r)} | {r['task']}{' (group)' if r['scope'] == 'group' else ''} | {r['metric']} "
        f"| {points(r, r['score'])} | {points(r, r['ci_low'])}–{points(r, r['ci_high'])} "
        f"| {points(r, r['std_repeats'])} | {r['items']} | {100 * r['parse_failure_rate']:.1f}% "
        f"| {100 * r['decision_success_rate']:.0f}% | {r['mean_turns']:.2f} | {r['calls_per_item']:.1f} "
        f"| {r['tokens_per_item']:.0f} | {_num(r['wall_s_per_item'], 2)} | {versus(r)} |"
        for r in board["rows"]
    ]
    text = header + "\n".join(lines) + "\n\n" + board["statement"] + "\n"
    if board["options"]["compare"] == "all" and board["comparisons"]:
        text += "\n" + comparisons_markdown(board["comparisons"])
    return text


def comparisons_markdown(comparisons: list[dict[str, Any]]) -> str:
    """Every pairwise comparison as a Markdown table."""
    lines = [
        "| task | metric | A | B | items | A − B | test | p | p adjusted | significant |",
        "|---|---|---|---|---:|---:|---|---:|---:|---|",
    ]
    for c in comparisons:
        lines.append(
            f"| {c['task']} | {c['metric']} | {c['label_a']} | {c['label_b']} | {c['items']} "
            f"| {100 * c['delta']:+.1f} | {c['test']} | {c['p_value']:.3g} | {c['p_adjusted']:.3g} "
            f"| {'yes' if c['significant'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def csv_text(board: dict[str, Any]) -> str:
    """The rows as CSV (raw numbers, scores as fractions)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_FIELDS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in board["rows"]:
        writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in CSV_FIELDS})
    return buffer.getvalue()
