"""A pilot run's paired spread, for ``madeval sample-size --paired --pilot RUN``: how often two
configurations disagree on 0/1 scores (the discordance), or the SD of their paired differences."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from madeval.analysis.power import discordance
from madeval.analysis.run_data import item_scores, load_run, metric_names
from madeval.analysis.stats import is_binary
from madeval.errors import UsageError
from madeval.leaderboard.table import resolve_reference


@dataclass(frozen=True)
class Pilot:
    """Two configurations' paired spread in a pilot run: the discordance (0/1 scores) or the SD of
    the paired differences, on the items they share."""

    items: int
    discordance: float | None
    sd: float | None


def pilot_spread(folder: str, a: str, b: str, task: str | None = None, metric: str | None = None) -> Pilot:
    """Read configurations ``a`` and ``b`` (labels or ids) of the run in ``folder`` on ``task`` (default:
    the first) and ``metric`` (default: the task's first); per-item scores average the repeats."""
    data = load_run(folder, transcripts=False)
    task = task or (data.tasks[0] if data.tasks else None)
    if task not in data.tasks:
        raise UsageError(f"the pilot run has no task '{task}' (tasks: {', '.join(data.tasks)})")
    chosen = [r for r in data.records if r["unit"]["task"] == task]
    metric = metric or next(iter(metric_names(chosen)), None)
    scores = []
    for wanted in (a, b):
        config = resolve_reference(data, wanted)
        scores.append(item_scores([r for r in chosen if r["unit"]["config"] == config], metric))
    shared = sorted(set(scores[0]) & set(scores[1]))
    if len(shared) < 2:
        raise UsageError(f"the pilot run scores fewer than 2 shared items of {task} for '{a}' and '{b}' on {metric}")
    x = np.array([scores[0][k] for k in shared])
    y = np.array([scores[1][k] for k in shared])
    if is_binary(x) and is_binary(y):  # the test compare.paired_test would choose: McNemar
        return Pilot(len(shared), discordance(x, y), None)
    return Pilot(len(shared), None, float(np.std(x - y, ddof=1)))
