"""The ``dynamics`` chart: the score of each turn's vote, turn by turn, with the final decision marked.

One panel per task (its first 0/1 metric with a vote); one line per configuration, in the colour
and marker the other charts give it (``style``, passed in by :mod:`madeval.leaderboard.charts`). The vote's score
of turns 1..T is joined by a solid line, and the final decision's score is a star at "final",
joined to the last turn by a dotted line, so a debate that lost what its first-turn vote had
shows as a line falling to a low star.
"""

from __future__ import annotations

from typing import Any, Callable

from matplotlib.figure import Figure
from matplotlib.lines import Line2D


def dynamics_figure(board: dict[str, Any], style: Callable[[int], dict[str, Any]]) -> Figure | None:
    """The figure, or None when no configuration of the board has a vote by turn; ``style(i)`` is the
    look (``color``, ``marker``) of the board's i-th configuration in every chart."""
    entries = [e for e in board.get("dynamics") or [] if e.get("vote_by_turn")]
    first_metric: dict[str, str] = {}
    for entry in entries:
        first_metric.setdefault(entry["task"], entry["metric"])
    entries = [e for e in entries if first_metric[e["task"]] == e["metric"]]
    if not entries:
        return None
    tasks = list(first_metric)
    configs = list(board["configurations"])
    longest = max(e["turns"] for e in entries)
    figure = Figure(figsize=(1.2 + max(4.0, 0.55 * (longest + 1)) * len(tasks), 4.6), layout="constrained")
    axes = dict(zip(tasks, figure.subplots(1, len(tasks), sharey=True, squeeze=False)[0]))
    for entry in entries:
        ax, look = axes[entry["task"]], style(configs.index(entry["config"]))
        turns = list(range(1, entry["turns"] + 1))
        ax.plot(turns, entry["vote_by_turn"], "-", marker=look["marker"], color=look["color"],
                label=entry["label"])
        final = longest + 1
        ax.plot([turns[-1], final], [entry["vote_by_turn"][-1], entry["final"]], ":", color=look["color"])
        ax.plot(final, entry["final"], "*", markersize=13, color=look["color"], markeredgecolor="black")
    for task, ax in axes.items():
        ax.set_title(f"{task} ({first_metric[task]})")
        ax.set_xticks(list(range(1, longest + 2)), [str(t) for t in range(1, longest + 1)] + ["final"])
        ax.set_xlabel("turn")
        ax.set_ylabel(f"{first_metric[task]} of the turn's vote")
        ax.grid(alpha=0.3)
    handles, labels = next(iter(axes.values())).get_legend_handles_labels()
    seen = dict(zip(labels, handles))
    for ax in list(axes.values())[1:]:
        more_handles, more_labels = ax.get_legend_handles_labels()
        for label, handle in zip(more_labels, more_handles):
            seen.setdefault(label, handle)
    star = Line2D([], [], marker="*", linestyle="", color="grey", markeredgecolor="black", markersize=11,
                  label="final decision")
    figure.legend([*seen.values(), star], [*seen, "final decision"], loc="outside lower center",
                  ncols=min(3, len(seen) + 1), fontsize=8)
    figure.suptitle("Score of each turn's vote (the agents' most common answer) and of the decision (star)",
                    wrap=True)
    return figure
