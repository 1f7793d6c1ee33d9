"""Charts of a leaderboard (matplotlib, PNG and SVG), after MALLM's evaluation pipeline.

* ``score``: score per configuration with its 95% interval (seed 000, Figure 7); ``*`` marks a
  significant difference from the reference;
* ``turns``: distribution of turns to decision, violins with the mean in red (Figure 8);
* ``decisions``: decision success rate (Figure 9);
* ``wall``: wall time per debate (Figure 10);
* ``scaling-<option>``: score against the number of agents, the turn limit or a decider's turn
  option when a sweep varies it with everything else fixed (seed 001, Figures 4 and 5), with a
  dotted least-squares line.

One panel per task; configurations keep one colour across charts. Figures are drawn with the
object-oriented API (no pyplot state), so this is safe to call from any thread.
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib.figure import Figure

NOT_SWEEP_KEYS = {"label", "name", "source", "preset", "replayed_decider"}
#: A scaling chart needs at least this many values of the varied option.
MIN_SWEEP_POINTS = 3
PALETTE = matplotlib.colormaps["tab10"].colors


def draw_all(board: dict[str, Any], folder: Path) -> list[Path]:
    """Draw every chart the board supports into ``folder``; returns the PNG paths."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = [r for r in board["rows"] if r["scope"] == "task" and r["metric"] == _primary(board, r["task"])]
    if not rows:
        return []
    charts = {
        "score": _score,
        "turns": _turns,
        "decisions": _decisions,
        "wall": _wall,
    }
    written = []
    for name, draw in charts.items():
        figure = draw(board, rows)
        if figure is not None:
            written.append(_save(figure, folder, name))
    for variable, series in scaling_series(board).items():
        written.append(_save(_scaling(board, rows, variable, series), folder, f"scaling-{variable}"))
    return written


def _primary(board: dict[str, Any], task: str) -> str | None:
    return next((r["metric"] for r in board["rows"] if r["task"] == task), None)


def _save(figure: Figure, folder: Path, name: str) -> Path:
    png = folder / f"{name}.png"
    with matplotlib.rc_context({"svg.hashsalt": "madeval"}):
        figure.savefig(png, dpi=110)
        figure.savefig(folder / f"{name}.svg")
    return png


def _tasks(rows: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r["task"] for r in rows))


def _labels(board: dict[str, Any], rows: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r["config"] for r in rows))


def _colour(board: dict[str, Any], config: str) -> Any:
    return PALETTE[list(board["configurations"]).index(config) % len(PALETTE)]


def _panels(board: dict[str, Any], rows: list[dict[str, Any]], title: str, xlabel: str):
    """A figure with one horizontal-bar panel per task, configurations top to bottom."""
    tasks, configs = _tasks(rows), _labels(board, rows)
    height = 1.6 + 0.42 * len(configs)
    longest = max(len(board["configurations"][c]["label"]) for c in configs)
    figure = Figure(figsize=(1.2 + 0.07 * longest + 3.6 * len(tasks), height), layout="constrained")
    axes = figure.subplots(1, len(tasks), sharey=True, squeeze=False)[0]
    for ax, task in zip(axes, tasks):
        ax.set_title(task)
        ax.set_xlabel(xlabel)
        ax.set_yticks(range(len(configs)), [board["configurations"][c]["label"] for c in configs])
        ax.set_ylim(len(configs) - 0.5, -0.5)
        ax.grid(axis="x", alpha=0.3)
    figure.suptitle(title)
    return figure, dict(zip(tasks, axes)), {c: i for i, c in enumerate(configs)}


def _score(board: dict[str, Any], rows: list[dict[str, Any]]) -> Figure:
    metric = rows[0]["metric"]
    figure, axes, position = _panels(board, rows, f"{metric} per configuration (error bars: 95% CI)", metric)
    for row in rows:
        ax, y = axes[row["task"]], position[row["config"]]
        error = [[row["score"] - row["ci_low"]], [row["ci_high"] - row["score"]]]
        ax.barh(y, row["score"], xerr=error, color=_colour(board, row["config"]), capsize=3, height=0.7)
        mark = "ref" if row.get("reference") else ("*" if row.get("significant") else "")
        ax.text(row["ci_high"] + 0.01, y, f"{row['score']:.3f} {mark}".strip(), va="center", fontsize=8)
    for ax in axes.values():
        ax.set_xlim(0, max(1.0, max(r["ci_high"] for r in rows)) * 1.18)
    return figure


def _turns(board: dict[str, Any], rows: list[dict[str, Any]]) -> Figure:
    figure, axes, position = _panels(board, rows, "Turns to decision (red: mean)", "turns")
    for row in rows:
        ax, y = axes[row["task"]], position[row["config"]]
        values = np.repeat([float(k) for k in row["turns_histogram"]], list(row["turns_histogram"].values()))
        if len(set(values)) > 1:
            parts = ax.violinplot([values], positions=[y], orientation="horizontal", widths=0.8,
                                  showextrema=False)
            for body in parts["bodies"]:
                body.set_facecolor(_colour(board, row["config"]))
                body.set_alpha(0.6)
        else:
            ax.plot([values[0], values[0]], [y - 0.35, y + 0.35], color=_colour(board, row["config"]), lw=3)
        ax.plot(values.mean(), y, "o", color="red", markersize=5)
    top = max(float(k) for r in rows for k in r["turns_histogram"])
    for ax in axes.values():
        ax.set_xlim(0.5, top + 0.5)
        ax.xaxis.get_major_locator().set_params(integer=True)
    return figure


def _decisions(board: dict[str, Any], rows: list[dict[str, Any]]) -> Figure:
    figure, axes, position = _panels(board, rows, "Decision success rate", "share of debates decided by the protocol")
    for row in rows:
        ax, y = axes[row["task"]], position[row["config"]]
        ax.barh(y, row["decision_success_rate"], color=_colour(board, row["config"]), height=0.7)
        ax.text(row["decision_success_rate"] + 0.01, y, f"{100 * row['decision_success_rate']:.0f}%",
                va="center", fontsize=8)
    for ax in axes.values():
        ax.set_xlim(0, 1.15)
    return figure


def _wall(board: dict[str, Any], rows: list[dict[str, Any]]) -> Figure | None:
    timed = [r for r in rows if r["wall_s_per_item"] is not None]
    if not timed:
        return None
    figure, axes, position = _panels(board, timed, "Wall-clock time per debate", "seconds")
    for row in timed:
        ax, y = axes[row["task"]], position[row["config"]]
        ax.barh(y, row["wall_s_per_item"], color=_colour(board, row["config"]), height=0.7)
        ax.text(row["wall_s_per_item"], y, f" {row['wall_s_per_item']:.2f}", va="center", fontsize=8)
    top = max(r["wall_s_per_item"] for r in timed) or 1.0
    for ax in axes.values():
        ax.set_xlim(0, top * 1.25)
    return figure


def sweep_variables(config: dict[str, Any]) -> dict[str, float]:
    """The numeric options a sweep may vary: agents, max_turns and the decider's numeric options."""
    found = {key: float(config[key]) for key in ("agents", "max_turns") if isinstance(config.get(key), int)}
    for key, value in (config.get("decider_args") or {}).items():
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            found[f"decider_args.{key}"] = float(value)
    return found


def scaling_series(board: dict[str, Any]) -> dict[str, list[list[str]]]:
    """For each varied numeric option: series of configurations equal in everything else."""
    configs = board["configurations"]
    variables = {v for c in configs.values() for v in sweep_variables(c)}
    found = {}
    for variable in sorted(variables):
        groups: dict[str, list[str]] = defaultdict(list)
        for cid, config in configs.items():
            if variable in sweep_variables(config):
                groups[_rest(config, variable)].append(cid)
        series = [ids for ids in groups.values()
                  if len({sweep_variables(configs[c])[variable] for c in ids}) >= MIN_SWEEP_POINTS]
        if series:
            found[variable] = series
    return found


def _rest(config: dict[str, Any], variable: str) -> str:
    """Everything about a configuration except ``variable`` (and display-only fields)."""
    rest = {k: v for k, v in config.items() if k not in NOT_SWEEP_KEYS and k != variable}
    if variable.startswith("decider_args."):
        args = dict(rest.get("decider_args") or {})
        args.pop(variable.split(".", 1)[1], None)
        rest["decider_args"] = args
    return json.dumps(rest, sort_keys=True, default=str)


def _dodge(index: int, count: int, x: np.ndarray) -> float:
    """A small horizontal offset for series ``index`` of ``count``."""
    spread = (x.max() - x.min()) or 1.0
    return (index - (count - 1) / 2) * 0.012 * spread


def _legend(configs: dict[str, Any], series: list[list[str]], index: int, variable: str) -> str:
    """What tells one series from the others: the options whose values differ between them."""
    rests = [json.loads(_rest(configs[ids[0]], variable)) for ids in series]
    differing = [k for k in rests[index] if len({json.dumps(r.get(k), sort_keys=True) for r in rests}) > 1]
    return ", ".join(f"{k}={rests[index][k]}" for k in differing) or configs[series[index][0]]["label"]


def _scaling(board: dict[str, Any], rows: list[dict[str, Any]], variable: str, series: list[list[str]]) -> Figure:
    tasks = _tasks(rows)
    metric = rows[0]["metric"]
    name = variable.replace("decider_args.", "decider option ").replace("_", " ")
    figure = Figure(figsize=(1.0 + 4.6 * len(tasks), 3.8), layout="constrained")
    axes = figure.subplots(1, len(tasks), sharey=True, squeeze=False)[0]
    configs = board["configurations"]
    for ax, task in zip(axes, tasks):
        for index, ids in enumerate(series):
            points = sorted(
                (sweep_variables(configs[r["config"]])[variable], r)
                for r in rows if r["task"] == task and r["config"] in ids
            )
            if not points:
                continue
            x = np.array([p[0] for p in points])
            y = np.array([p[1]["score"] for p in points])
            low = y - np.array([p[1]["ci_low"] for p in points])
            high = np.array([p[1]["ci_high"] for p in points]) - y
            colour = PALETTE[index % len(PALETTE)]
            x = x + _dodge(index, len(series), x)  # overlapping series stay visible
            legend = _legend(configs, series, index, variable) if len(series) > 1 else None
            ax.errorbar(x, y, yerr=[low, high], fmt="o-", color=colour, capsize=3, label=legend)
            if len(x) >= 3:
                slope, intercept = np.polyfit(x, y, 1)
                ax.plot(x, slope * x + intercept, ":", color=colour)
        ax.set_title(task)
        ax.set_xlabel(name)
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
        ax.xaxis.get_major_locator().set_params(integer=True)
        if len(series) > 1:
            ax.legend(fontsize=8)
    figure.suptitle(f"{metric} against {name} (error bars: 95% CI; dotted: linear fit)")
    return figure
