"""Checks and notes that need only the settings and the plan: run before any endpoint is asked."""

from __future__ import annotations

import difflib
from typing import Any

from madeval.errors import UsageError


def check_leaderboard_reference(leaderboard: dict[str, Any], configs: dict[str, Any]) -> None:
    """Refuse a leaderboard ``reference`` that names none of the run's configurations (by label or
    id), before any debate runs: the board is built from exactly these configurations.

    ``configs``: configuration id -> :class:`madeval.run.plan.PlannedConfig`."""
    wanted = leaderboard.get("reference")
    if wanted is None:
        return
    labels = [planned.config.label() for planned in configs.values()]
    if wanted in labels or wanted in configs:
        return
    close = difflib.get_close_matches(str(wanted), labels, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else ""
    raise UsageError(f"leaderboard reference '{wanted}' names no configuration of this run "
                     f"(configurations: {', '.join(labels)}){hint}")


def item_count_notes(sampling: dict[str, dict[str, Any]]) -> list[str]:
    """One line per task whose ``--sample N`` or ``--limit N`` asks for more items than it has
    (the run uses them all), from the plan's sampling records (:func:`madeval.run.plan.sampling_record`)."""
    notes = []
    for task, record in sampling.items():
        population = record.get("population")
        asked = [(f"--sample {record['count']}", record["count"])] if record.get("method") == "count" else []
        if isinstance(record.get("limit"), int):
            asked.append((f"--limit {record['limit']}", record["limit"]))
        for option, count in asked:
            if population is not None and count > population:
                notes.append(f"madeval: {option} is more than the {population:,} items of task {task}: "
                             f"using all {population:,}")
                break
    return notes
