"""Charts of a leaderboard (matplotlib, PNG and SVG), after MALLM's evaluation pipeline.

* ``score``: score per configuration with its 95% interval (MALLM paper, Figure 7); ``*`` marks a
  significant difference from the reference;
* ``turns``: how many turns the debates took, per configuration: a histogram over the integer turn
  counts (no smoothing between them), split into debates the protocol decided and debates it did
  not (stopped at the turn limit with the fallback answer), with the mean of the decided ones
  (Figure 8 shows violins; counts of a few integer values are shown as they are);
* ``decisions``: decision success rate (Figure 9);
* ``llm-time``: LLM seconds per item, the sum of one debate's calls' own latencies (Figure 10's
  wall time without the waits for a free concurrency slot that a shared run adds);
* ``scaling-<option>``: score against the number of agents, the turn limit or a decider's numeric
  option when a sweep varies it with everything else fixed (Voting or Consensus?, Figures 4 and 5), with a
  dotted least-squares line. Rescored configurations form their own series, named after the
  configuration they were replayed on.
* ``cost``: score against dollars (with a price file, ``--prices``), tokens and calls per item, one
  point per configuration with its 95% interval; the cost-accuracy Pareto front (:mod:`.cost`) is
  joined by a dashed line and its points ringed (drawn when the configurations' costs differ).
* ``dynamics``: the score of each turn's vote, turn by turn, with the final decision marked
  (:mod:`madeval.dynamics.chart`; the board's ``dynamics``).

One panel per task. A configuration keeps one colour and hatch (bars) or marker (lines) across
charts: ten colours, then the same colours with another hatch or marker. Figures are drawn with the
object-oriented API (no pyplot state), so this is safe to call from any thread.
"""

from __future__ import annotations

import io
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Patch
from matplotlib.ticker import FuncFormatter, MaxNLocator

from madeval.dynamics.chart import dynamics_figure
from madeval.leaderboard.cost import board_costs, front_key
from madeval.leaderboard.money import dollars
from madeval.leaderboard.render import TIME_COLUMN
from madeval.util.safe_files import refuse_linked_folder, write_bytes_atomically
from madeval.util.shown_text import chart_values

#: Display-only or bookkeeping fields: never what tells two configurations of a sweep apart.
NOT_SWEEP_KEYS = {"label", "name", "source", "preset", "replay_of", "replayed_decider", "label_in_run", "id_in_run"}
#: A scaling chart needs at least this many values of the varied option.
MIN_SWEEP_POINTS = 3
PALETTE = matplotlib.colormaps["tab10"].colors
HATCHES = ("", "///", "...", "xxx", "\\\\\\", "ooo")
MARKERS = ("o", "s", "^", "D", "v", "P")
#: Debates the protocol did not decide: white with a dark hatch (no configuration colour is white).
UNDECIDED = {"facecolor": "white", "edgecolor": "#444444", "hatch": "////", "linewidth": 0.6}


#: How every chart is drawn and saved: labels and task names are text, never mathtext (a ``$`` in a
#: name would be parsed as TeX, and a malformed formula fails the drawing); stable SVG ids.
RC = {"text.parse_math": False, "text.usetex": False, "svg.hashsalt": "madeval"}


def draw_all(board: dict[str, Any], folder: Path) -> list[Path]:
    """Draw every chart the board supports into ``folder``; returns the PNG paths."""
    with matplotlib.rc_context(RC):  # Text objects read text.parse_math when they are made
        return _draw_all(chart_values(board), folder)  # no control character reaches matplotlib (or stderr)


def _draw_all(board: dict[str, Any], folder: Path) -> list[Path]:
    refuse_linked_folder(folder)
    folder.mkdir(parents=True, exist_ok=True)
    rows = chart_rows(board)
    if not rows:
        return []
    charts = {
        "score": _score,
        "turns": _turns,
        "decisions": _decisions,
        "llm-time": _llm_time,
        "cost": _cost,
    }
    written = []
    for name, draw in charts.items():
        figure = draw(board, rows)
        if figure is not None:
            written.append(_save(figure, folder, name))
    for variable, series in scaling_series(board).items():
        written.append(_save(_scaling(board, rows, variable, series), folder, f"scaling-{variable}"))
    dynamics = dynamics_figure(board, style)  # madeval.dynamics.chart: the vote's score by turn
    if dynamics is not None:
        written.append(_save(dynamics, folder, "dynamics"))
    return written


def chart_rows(board: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows the charts draw: task rows of each task's first metric."""
    return [r for r in board["rows"] if r["scope"] == "task" and r["metric"] == _primary(board, r["task"])]


def _primary(board: dict[str, Any], task: str) -> str | None:
    return next((r["metric"] for r in board["rows"] if r["task"] == task), None)


def _save(figure: Figure, folder: Path, name: str) -> Path:
    """Write ``figure`` as ``name``.png and ``name``.svg into ``folder``. The layout is found once, for
    the PNG, and kept for the SVG: constrained layout needs a drawing of its own before each saved
    one, and a figure left with any layout engine (``"none"`` leaves a placeholder) gets it again.
    Without the engine, the SVG is drawn once: 2.6 -> 2.3 s for a board's six charts."""
    png = folder / f"{name}.png"
    # no rcParams that would put a layout engine back on the figure (matplotlibrc's autolayout or
    # constrained_layout.use)
    with matplotlib.rc_context({**RC, "figure.autolayout": False, "figure.constrained_layout.use": False}):
        # no drawing date in the SVG (with RC's fixed ids, the same board gives the same bytes)
        svg = {"format": "svg", "metadata": {"Date": None}}
        for path, options in ((png, {"dpi": 110, "format": "png"}), (folder / f"{name}.svg", svg)):
            drawn = io.BytesIO()  # through a temporary file and a rename: a link at the name is replaced
            figure.savefig(drawn, **options)
            write_bytes_atomically(path, drawn.getvalue())
            figure.set_layout_engine(None)  # the positions the first drawing laid out stay
    return png


def _tasks(rows: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r["task"] for r in rows))


def _labels(rows: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(r["config"] for r in rows))


def style(index: int) -> dict[str, Any]:
    """The look of the ``index``-th configuration or series: colour, hatch (bars) and marker (lines)."""
    cycle = index // len(PALETTE)
    return {"color": PALETTE[index % len(PALETTE)], "hatch": HATCHES[cycle % len(HATCHES)],
            "marker": MARKERS[cycle % len(MARKERS)]}


def _bar_style(board: dict[str, Any], config: str) -> dict[str, Any]:
    look = style(list(board["configurations"]).index(config))
    return {"color": look["color"], "hatch": look["hatch"], "edgecolor": "white" if look["hatch"] else None}


def _panels(board: dict[str, Any], rows: list[dict[str, Any]], title: str, xlabel: str, row_height: float = 0.42):
    """A figure with one horizontal-bar panel per task, configurations top to bottom."""
    tasks, configs = _tasks(rows), _labels(rows)
    height = 1.6 + row_height * len(configs)
    longest = max(len(board["configurations"][c]["label"]) for c in configs)
    figure = Figure(figsize=(1.2 + 0.07 * longest + 3.6 * len(tasks), height), layout="constrained")
    axes = figure.subplots(1, len(tasks), sharey=True, squeeze=False)[0]
    for ax, task in zip(axes, tasks):
        ax.set_title(task)
        ax.set_xlabel(xlabel)
        ax.set_yticks(range(len(configs)), [board["configurations"][c]["label"] for c in configs])
        ax.set_ylim(len(configs) - 0.5, -0.5)
        ax.grid(axis="x", alpha=0.3)
    figure.suptitle(title, wrap=True)  # a one-task figure is narrower than most titles
    return figure, dict(zip(tasks, axes)), {c: i for i, c in enumerate(configs)}


def error_bars(score: Any, low: Any, high: Any) -> tuple[np.ndarray, np.ndarray]:
    """The error bar lengths below and above ``score`` for an interval ``[low, high]``, never negative.

    matplotlib refuses a negative error bar (a score a rounding error outside its interval ended a
    run with a traceback); a length that rounding made negative is drawn as 0.
    """
    score = np.asarray(score, dtype=float)
    below = np.maximum(0.0, score - np.asarray(low, dtype=float))
    above = np.maximum(0.0, np.asarray(high, dtype=float) - score)
    return below, above


def _score(board: dict[str, Any], rows: list[dict[str, Any]]) -> Figure:
    metric = rows[0]["metric"]
    figure, axes, position = _panels(board, rows, f"{metric} per configuration (error bars: 95% CI)", metric)
    for row in rows:
        ax, y = axes[row["task"]], position[row["config"]]
        below, above = error_bars([row["score"]], [row["ci_low"]], [row["ci_high"]])
        error = [below, above]
        ax.barh(y, row["score"], xerr=error, capsize=3, height=0.7, **_bar_style(board, row["config"]))
        mark = "ref" if row.get("reference") else ("*" if row.get("significant") else "")
        ax.text(row["ci_high"] + 0.01, y, f"{row['score']:.3f} {mark}".strip(), va="center", fontsize=8)
    for ax in axes.values():
        ax.set_xlim(0, max(1.0, max(r["ci_high"] for r in rows)) * 1.18)
    return figure


def turn_counts(row: dict[str, Any]) -> dict[int, tuple[int, int]]:
    """Per number of turns: (debates the protocol decided, debates it did not decide)."""
    decided = {int(k): v for k, v in (row.get("turns_decided") or {}).items()}
    return {int(k): (decided.get(int(k), 0), v - decided.get(int(k), 0)) for k, v in row["turns_histogram"].items()}


def _turns(board: dict[str, Any], rows: list[dict[str, Any]]) -> Figure:
    figure, axes, position = _panels(board, rows, "Turns per debate (bar height: share of the configuration's "
                                     "debates)", "turns", row_height=0.55)
    shares = [n / sum(sum(c) for c in turn_counts(r).values()) for r in rows for c in turn_counts(r).values()
              for n in c]
    scale = 0.8 / max(max(shares), 1e-9)  # the tallest bar fills most of its row
    top = max(int(k) for r in rows for k in r["turns_histogram"])
    for row in rows:
        ax, y = axes[row["task"]], position[row["config"]]
        counts = turn_counts(row)
        total = sum(d + u for d, u in counts.values())
        base = y + 0.42  # rows run top to bottom: bars grow upwards from the row's bottom edge
        for turns, (decided, undecided) in counts.items():
            solid, open_ = scale * decided / total, scale * undecided / total
            ax.bar(turns, -solid, bottom=base, width=0.8, **_bar_style(board, row["config"]))
            ax.bar(turns, -open_, bottom=base - solid, width=0.8, **UNDECIDED)
        decided_turns = [t for t, (d, _) in counts.items() for _ in range(d)]
        if decided_turns:
            ax.plot(np.mean(decided_turns), base, "^", color="red", markersize=6, clip_on=False)
        undecided = sum(u for _, u in counts.values())
        if undecided:
            ax.text(top + 0.55, y, f"{100 * undecided / total:.0f}% not\ndecided", va="center", fontsize=7)
    for ax in axes.values():
        ax.set_xlim(0.5, top + 1.9)
        ax.set_xticks(range(1, top + 1))
    handles = [Patch(facecolor=PALETTE[0], label="decided by the protocol (configuration's colour)"),
               Patch(label="not decided: turn limit reached, fallback answer", **UNDECIDED),
               Line2D([], [], marker="^", color="red", linestyle="", label="mean turns of the decided debates")]
    legend = figure.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=8)
    if legend.get_window_extent().width > figure.bbox.width:  # a one-task figure: one entry a line
        legend.remove()
        figure.legend(handles=handles, loc="outside lower center", ncols=1, fontsize=8)
    return figure


def _decisions(board: dict[str, Any], rows: list[dict[str, Any]]) -> Figure:
    figure, axes, position = _panels(board, rows, "Decision success rate", "share of debates decided by the protocol")
    for row in rows:
        ax, y = axes[row["task"]], position[row["config"]]
        ax.barh(y, row["decision_success_rate"], height=0.7, **_bar_style(board, row["config"]))
        ax.text(row["decision_success_rate"] + 0.01, y, f"{100 * row['decision_success_rate']:.0f}%",
                va="center", fontsize=8)
    for ax in axes.values():
        ax.set_xlim(0, 1.15)
    return figure


def _llm_time(board: dict[str, Any], rows: list[dict[str, Any]]) -> Figure | None:
    timed = [r for r in rows if r.get("llm_s_per_item") is not None]
    if not timed:
        return None
    figure, axes, position = _panels(
        board, timed, f"LLM time per item ({TIME_COLUMN}): one debate's calls' own latencies, summed",
        "seconds (waits for a free concurrency slot excluded)")
    for row in timed:
        ax, y = axes[row["task"]], position[row["config"]]
        ax.barh(y, row["llm_s_per_item"], height=0.7, **_bar_style(board, row["config"]))
        ax.text(row["llm_s_per_item"], y, f" {row['llm_s_per_item']:.2f}", va="center", fontsize=8)
    top = max(r["llm_s_per_item"] for r in timed) or 1.0
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
    """For each varied numeric option: series of configurations equal in everything else.

    A rescored configuration (a decider replayed on stored debates) is compared by its own options
    and by its source configuration's options other than the varied one: rescored configurations
    whose sources differ only in the varied option line up in one series (not in one-point series
    split by source id), and a rescored series never mixes sources that differ otherwise or joins
    a series of run configurations.
    """
    configs = board["configurations"]
    variables = {v for c in configs.values() for v in sweep_variables(c)}
    found = {}
    for variable in sorted(variables):
        groups: dict[str, list[str]] = defaultdict(list)
        for cid, config in configs.items():
            if variable in sweep_variables(config):
                groups[_rest(configs, cid, variable)].append(cid)
        series = [ids for ids in groups.values()
                  if len({sweep_variables(configs[c])[variable] for c in ids}) >= MIN_SWEEP_POINTS]
        if series:
            found[variable] = series
    return found


def _rescored(config: dict[str, Any]) -> bool:
    return config.get("source") == "rescored" or bool(config.get("replay_of"))


def _options(config: dict[str, Any], variable: str) -> dict[str, Any]:
    """A configuration's options less ``variable`` and the display-only fields."""
    rest = {k: v for k, v in config.items() if k not in NOT_SWEEP_KEYS and k != variable}
    if variable.startswith("decider_args."):
        args = dict(rest.get("decider_args") or {})
        args.pop(variable.split(".", 1)[1], None)
        rest["decider_args"] = args
    return rest


def _rest(configs: dict[str, Any], cid: str, variable: str) -> str:
    """Everything that must be equal for two configurations to share a series over ``variable``."""
    config = configs[cid]
    rest = _options(config, variable)
    rest["rescored"] = _rescored(config)
    source = configs.get(config.get("replay_of") or "")
    if rest["rescored"]:
        rest["source_options"] = _options(source, variable) if source else config.get("replay_of")
    return json.dumps(rest, sort_keys=True, default=str)


def _dodge(index: int, count: int, x: np.ndarray) -> float:
    """A small horizontal offset for series ``index`` of ``count``."""
    spread = (x.max() - x.min()) or 1.0
    return (index - (count - 1) / 2) * 0.012 * spread


def _shown(value: Any) -> str:
    if isinstance(value, dict):
        return ",".join(f"{k}:{v}" for k, v in value.items()) or "none"
    return str(value)


def _common_words(labels: list[str]) -> str:
    """The words every label has, in the first label's order (grid labels are ``key=value`` words)."""
    words = [set(label.split()) for label in labels[1:]]
    return " ".join(w for w in labels[0].split() if all(w in other for other in words))


def series_legend(configs: dict[str, Any], series: list[list[str]], index: int, variable: str) -> str:
    """What tells one series from the others in a scaling chart.

    * a rescored series is named after its source configuration: ``<source label> -> <decider>``;
      with several sources (the varied option differs between them), the words their labels share
      stand for the source (``max_turns=2 -> simple_voting``);
    * a run series by the options whose values differ between the run series, else by the words
      its configurations' labels share, else by its first label.
    """
    ids = series[index]
    first = configs[ids[0]]
    if _rescored(first):
        sources = list(dict.fromkeys(configs[c].get("replay_of") for c in ids))
        labels = [configs[s]["label"] for s in sources if s in configs]
        decided = {configs[c].get("replayed_decider") for c in ids}
        decider = decided.pop() if len(decided) == 1 and None not in decided else first.get("decider")
        source = labels[0] if len(labels) == 1 else (_common_words(labels) if labels else "")
        return f"{source or 'rescored'} -> {decider}"
    run = [s for s in series if not _rescored(configs[s[0]])]
    rests = [_options(configs[s[0]], variable) for s in run]
    own = _options(first, variable)
    differing = [k for k in own if len({json.dumps(r.get(k), sort_keys=True, default=str) for r in rests}) > 1]
    if differing:
        return ", ".join(f"{k}={_shown(own[k])}" for k in differing)
    return _common_words([configs[c]["label"] for c in ids]) or first["label"]


def scaling_data(board: dict[str, Any], rows: list[dict[str, Any]], variable: str,
                 series: list[list[str]]) -> dict[str, list[dict[str, Any]]]:
    """What a scaling chart plots, per task: one entry per series with its legend, configurations,
    x (the option's values, ascending), score and interval."""
    configs = board["configurations"]
    plotted: dict[str, list[dict[str, Any]]] = {}
    for task in _tasks(rows):
        plotted[task] = []
        for index, ids in enumerate(series):
            points = sorted(
                ((sweep_variables(configs[r["config"]])[variable], r) for r in rows
                 if r["task"] == task and r["config"] in ids),
                key=lambda point: point[0],
            )
            if not points:
                continue
            plotted[task].append({
                "index": index,
                "legend": series_legend(configs, series, index, variable),
                "configs": [p[1]["config"] for p in points],
                "x": [p[0] for p in points],
                "score": [p[1]["score"] for p in points],
                "ci_low": [p[1]["ci_low"] for p in points],
                "ci_high": [p[1]["ci_high"] for p in points],
            })
    return plotted


def _scaling(board: dict[str, Any], rows: list[dict[str, Any]], variable: str, series: list[list[str]]) -> Figure:
    tasks = _tasks(rows)
    metric = rows[0]["metric"]
    name = variable.replace("decider_args.", "decider option ").replace("_", " ")
    legend_shown = len(series) > 1 or any(_rescored(board["configurations"][s[0]]) for s in series)
    figure = Figure(figsize=(1.0 + 4.6 * len(tasks), 3.8 + (0.25 * len(series) if legend_shown else 0)),
                    layout="constrained")
    axes = figure.subplots(1, len(tasks), sharey=True, squeeze=False)[0]
    plotted = scaling_data(board, rows, variable, series)
    for ax, task in zip(axes, tasks):
        for entry in plotted[task]:
            x, y = np.array(entry["x"]), np.array(entry["score"])
            low, high = error_bars(y, entry["ci_low"], entry["ci_high"])
            look = style(entry["index"])
            x = x + _dodge(entry["index"], len(series), x)  # overlapping series stay visible
            ax.errorbar(x, y, yerr=[low, high], fmt="-", marker=look["marker"], color=look["color"], capsize=3,
                        label=entry["legend"] if legend_shown else None)
            if len(x) >= 3:
                slope, intercept = np.polyfit(x, y, 1)
                ax.plot(x, slope * x + intercept, ":", color=look["color"])
        ax.set_title(task)
        ax.set_xlabel(name)
        ax.set_ylabel(metric)
        ax.grid(alpha=0.3)
        ax.xaxis.get_major_locator().set_params(integer=True)
    if legend_shown:
        handles, labels = axes[0].get_legend_handles_labels()
        figure.legend(handles, labels, loc="outside lower center", ncols=min(3, len(labels)), fontsize=8)
    figure.suptitle(f"{metric} against {name} (error bars: 95% CI; dotted: linear fit)")
    return figure


def _cost(board: dict[str, Any], rows: list[dict[str, Any]]) -> Figure | None:
    """Score against each cost per item (dollars first on a priced board, then tokens and calls): one
    row of panels per task, one column per cost; rows without a cost (not priced, imported without
    calls) are left out; none when every configuration costs the same (nothing to trade off)."""
    costs = board_costs(board)
    rows = [r for r in rows if r.get("costs_recorded", True)]
    if len({tuple(r.get(cost) for cost in costs) for r in rows}) < 2:
        return None
    tasks, configs, shown = _tasks(rows), list(board["configurations"]), _labels(rows)
    figure = Figure(figsize=(5.25 * len(costs), 1.0 + 3.9 * len(tasks) + 0.2 * len(shown)), layout="constrained")
    axes = figure.subplots(len(tasks), len(costs), squeeze=False)
    metric = rows[0]["metric"]
    number = {config: index + 1 for index, config in enumerate(shown)}
    for line, task in zip(axes, tasks):
        for ax, (cost, name) in zip(line, costs.items()):
            mine = [r for r in rows if r["task"] == task and r.get(cost) is not None]
            for row in mine:
                look = style(configs.index(row["config"]))
                below, above = error_bars([row["score"]], [row["ci_low"]], [row["ci_high"]])
                ax.errorbar(row[cost], row["score"], yerr=[below, above], fmt=look["marker"], color=look["color"],
                            capsize=2, markersize=6, alpha=0.9)
            _cost_labels(ax, mine, cost, number)
            front = sorted((r for r in mine if r.get(front_key(cost))), key=lambda r: (r[cost], r["score"]))
            ax.plot([r[cost] for r in front], [r["score"] for r in front], "--", color="black", linewidth=1,
                    marker="o", markersize=13, markerfacecolor="none")
            spent = [r[cost] for r in mine if r[cost] > 0]
            if spent and max(spent) / min(spent) > 20:
                ax.set_xscale("log")
            ax.set_title(f"{task}: {metric} against {name}")
            ax.set_xlabel(f"{name} (prompt + completion)" if cost == "tokens_per_item" else name)
            if cost == "cost_per_item":  # dollars as the board shows them, few enough not to overlap
                if ax.get_xscale() == "linear":
                    ax.xaxis.set_major_locator(MaxNLocator(nbins=4))
                ax.xaxis.set_major_formatter(FuncFormatter(lambda value, _: dollars(value)))
            ax.set_ylabel(metric)
            ax.grid(alpha=0.3)
    handles = [Line2D([], [], linestyle="", marker=style(configs.index(c))["marker"],
                      color=style(configs.index(c))["color"],
                      label=f"{number[c]} {board['configurations'][c]['label']}") for c in shown]
    handles.append(Line2D([], [], linestyle="--", color="black", marker="o", markersize=10, markerfacecolor="none",
                          label="Pareto front"))
    figure.legend(handles=handles, loc="outside lower center", ncols=3, fontsize=8)
    figure.suptitle("Cost and accuracy per configuration (error bars: 95% CI; ringed and dashed: the Pareto "
                    "front, where no configuration scores at least as high for at most the cost)", fontsize=9)
    return figure


def _cost_labels(ax: Any, rows: list[dict[str, Any]], cost: str, number: dict[str, int]) -> None:
    """Number each point of a cost panel (the legend names the numbers): configurations at the same
    point share one label, and labels of points close to an earlier one move down a line each."""
    points: dict[tuple[float, float], list[str]] = {}
    for row in rows:
        points.setdefault((round(row[cost], 6), round(row["score"], 9)), []).append(str(number[row["config"]]))
    costs = [c for c, _ in points if c > 0] or [1.0]
    scores = [s for _, s in points]
    width = np.log10(max(costs) / min(costs)) or 1.0
    height = (max(scores) - min(scores)) or 1.0
    placed: list[tuple[float, float]] = []
    for (x, y), labels in sorted(points.items(), key=lambda p: (-p[0][1], p[0][0])):
        near = sum(abs(np.log10(max(x, 1e-9) / max(px, 1e-9))) < 0.05 * width and abs(y - py) < 0.05 * height
                   for px, py in placed)
        placed.append((x, y))
        ax.annotate(",".join(labels), (x, y), textcoords="offset points", xytext=(6, 2 - 9 * near), fontsize=7)
