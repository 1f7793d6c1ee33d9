"""The end-of-run table: one row per (configuration, task).

Scores are averaged over repeats within an item first, then over items; the 95% confidence
interval is a Student-t interval over those per-item means (about the population of questions).
The standard deviation is across repeats: the spread of the per-repeat means.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from typing import Any, Iterable

from scipy import stats as scipy_stats


def summarize(records: Iterable[dict[str, Any]], plan_description: dict[str, Any]) -> list[dict[str, Any]]:
    """Leaderboard rows from run records, in the plan's configuration and task order."""
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        grouped[(record["unit"]["config"], record["unit"]["task"])].append(record)
    rows = []
    for config_id, config in plan_description["configurations"].items():
        for task in plan_description["tasks"]:
            records_here = grouped.get((config_id, task))
            if records_here:
                rows.append(_row(config_id, config["label"], task, records_here))
    return rows


def _row(config_id: str, label: str, task: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    metric = next(iter(records[0]["metrics"]))
    by_item: dict[str, list[float]] = defaultdict(list)
    by_repeat: dict[int, list[float]] = defaultdict(list)
    for record in records:
        value = record["metrics"][metric]
        by_item[record["unit"]["item"]].append(value)
        by_repeat[record["unit"]["repeat"]].append(value)
    item_means = [statistics.fmean(values) for values in by_item.values()]
    mean = statistics.fmean(item_means)
    low, high = _t_interval(item_means)
    if all(0.0 <= value <= 1.0 for value in item_means):
        low, high = max(low, 0.0), min(high, 1.0)
    repeat_means = [statistics.fmean(v) for v in by_repeat.values()]
    units = len(records)
    return {
        "config": config_id,
        "label": label,
        "task": task,
        "metric": metric,
        "score": mean,
        "ci_low": low,
        "ci_high": high,
        "std_repeats": statistics.stdev(repeat_means) if len(repeat_means) > 1 else 0.0,
        "items": len(item_means),
        "units": units,
        "parse_failure_rate": sum(r["parse_failure"] for r in records) / units,
        "decision_success_rate": sum(r["decision_success"] for r in records) / units,
        "mean_turns": statistics.fmean(r["turns"] for r in records),
        "calls_per_unit": statistics.fmean(r["calls"] for r in records),
        "tokens_per_unit": statistics.fmean(r["tokens"]["total"] for r in records),
        "wall_s_per_unit": statistics.fmean(r["wall_s"] for r in records),
    }


def _t_interval(values: list[float], level: float = 0.95) -> tuple[float, float]:
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, mean
    half = scipy_stats.t.ppf(0.5 + level / 2, len(values) - 1) * statistics.stdev(values) / math.sqrt(len(values))
    return mean - half, mean + half


def markdown(rows: list[dict[str, Any]]) -> str:
    """The rows as a Markdown table (scores in percent)."""
    header = (
        "| configuration | task | metric | score | 95% CI | std (repeats) | items | parse fail "
        "| decided | turns | calls/unit | tokens/unit |\n"
        "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    lines = [
        f"| {r['label']} | {r['task']} | {r['metric']} | {100 * r['score']:.1f} "
        f"| {100 * r['ci_low']:.1f}–{100 * r['ci_high']:.1f} | {100 * r['std_repeats']:.1f} "
        f"| {r['items']} | {100 * r['parse_failure_rate']:.1f}% | {100 * r['decision_success_rate']:.0f}% "
        f"| {r['mean_turns']:.2f} | {r['calls_per_unit']:.1f} | {r['tokens_per_unit']:.0f} |"
        for r in rows
    ]
    return header + "\n".join(lines) + "\n"
