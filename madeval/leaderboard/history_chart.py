"""The CI history chart: score over commits with 95% intervals, one panel per (task, metric), one
line per configuration; entries with a significant drop (:func:`.history.drops`) are marked.

A marked entry gets a red ring around each regressed configuration's point and a red ``▼`` with
its commit under the panel's axis, so the chart names the commit. Drawn like the leaderboard's
charts (:mod:`.charts`: matplotlib objects, PNG and SVG, the same configuration styles).
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from madeval.leaderboard.charts import RC, error_bars, style
from madeval.leaderboard.charts import _save as save
from madeval.leaderboard.history import DROP, drops, series, short
from madeval.util.safe_files import refuse_linked_folder
from madeval.util.shown_text import chart_values

DROP_COLOUR = "#d62728"
TITLE = "Score over commits (error bars: 95% CI; ▼ red: significant drop against the baseline)"
#: The title's size in points (matplotlib's default ``figure.titlesize``, large, at the default font size)
TITLE_SIZE = 12.0
#: A generous average width of a character of the default sans-serif font, in ems.
CHARACTER_WIDTH = 0.62


def draw(entries: list[dict[str, Any]], folder: Path, name: str = "history") -> Path:
    """Draw the history chart into ``folder`` (``<name>.png`` and ``.svg``); returns the PNG path."""
    refuse_linked_folder(folder)
    folder.mkdir(parents=True, exist_ok=True)
    with matplotlib.rc_context(RC):  # labels are text, never mathtext (see .charts.RC)
        return save(figure(chart_values(entries)), folder, name)  # no control character reaches matplotlib


def figure(entries: list[dict[str, Any]]) -> Figure:
    """The history chart of ``entries`` (oldest first)."""
    panels = series(entries)
    width = max(6.0, 1.6 + 0.55 * len(entries))
    drawn = Figure(figsize=(width, 1.2 + 3.0 * len(panels)), layout="constrained")
    axes = drawn.subplots(len(panels), 1, squeeze=False)[:, 0]
    x = np.arange(len(entries))
    marked = drops(entries)
    for ax, ((task, metric), by_label) in zip(axes, panels.items()):
        for index, (label, rows) in enumerate(by_label.items()):
            _line(ax, x, rows, label, style(index))
        for at in marked:
            ax.axvline(at, color=DROP_COLOUR, alpha=0.25, linewidth=6, zorder=0)
        ax.set_title(f"{task} — {metric}")
        ax.set_ylabel(metric)
        ax.set_xticks(x, [_tick(line, i in marked) for i, line in enumerate(entries)], rotation=45, ha="right",
                      fontsize=8)
        for tick, at in zip(ax.get_xticklabels(), x):
            if at in marked:
                tick.set_color(DROP_COLOUR)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8, loc="best")
    drawn.suptitle(title(width), fontsize=TITLE_SIZE)
    return drawn


def title(width: float, fontsize: float = TITLE_SIZE) -> str:
    """The chart's title, wrapped to fit a figure ``width`` inches wide: one line of 85 characters
    does not fit the 6 inches of a history of a few entries, and the figure would clip it."""
    per_line = max(20, int(width * 72 / (fontsize * CHARACTER_WIDTH)))
    return "\n".join(textwrap.wrap(TITLE, per_line))


def _line(ax: Any, x: np.ndarray, rows: list[dict[str, Any] | None], label: str, look: dict[str, Any]) -> None:
    """One configuration's scores with their intervals, and red rings at its regressed entries."""
    present = [i for i, row in enumerate(rows) if row is not None and row["score"] is not None]
    if not present:
        return
    score = np.array([rows[i]["score"] for i in present])
    below, above = error_bars(score, [rows[i]["ci_low"] for i in present], [rows[i]["ci_high"] for i in present])
    ax.errorbar(x[present], score, yerr=[below, above], capsize=3, marker=look["marker"], color=look["color"],
                label=label)
    regressed = [i for i in present if rows[i]["status"] == DROP]
    if regressed:
        ax.scatter(x[regressed], [rows[i]["score"] for i in regressed], s=160, facecolors="none",
                   edgecolors=DROP_COLOUR, linewidths=2, zorder=3)


def _tick(line: dict[str, Any], dropped: bool) -> str:
    """An entry's axis label: its commit, with ▼ when the entry has a significant drop."""
    return ("▼ " if dropped else "") + short(line["commit"])
