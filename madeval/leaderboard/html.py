"""The leaderboard as one self-contained HTML page: one sentence per comparison first ("In short"),
then sortable tables per task, of all pairwise comparisons (with ``--compare all``; always for runs
merged, with the units each pair shared), the charts, when given the CI history, and how the numbers
were computed; also the history's own page (:func:`history_page`).

CSS, JavaScript and the charts (PNG as data URIs) are inline, so the file can be mailed or
archived alone. When the sorting script has initialised and passed its self-check it sets
``data-sortable="ready"`` on the ``<html>`` element (the screenshot test reads it).
"""

from __future__ import annotations

import base64
import html
import shlex
from pathlib import Path
from typing import Any

from madeval.dynamics.render import html_section as dynamics_section
from madeval.leaderboard.cost import board_costs
from madeval.leaderboard.history import DROP, cell, series, short
from madeval.leaderboard.history import summary as history_summary
from madeval.leaderboard.money import prices_note
from madeval.leaderboard.render import (
    COST_HEADINGS,
    LEGEND,
    MONEY_COLUMNS,
    TIME_COLUMN,
    adjusted_by,
    cache_note,
    cost_values,
    difference_interval,
    label_of,
    mde_text,
    money_cells,
    on_front,
    paid_note,
    points,
    recorded,
    row_mde,
    task_of,
    test_name,
    versus,
)

STYLE = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1400px;color:#222;
padding:0 1em}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
th,td{border-bottom:1px solid #ddd;padding:.3em .6em;text-align:right;white-space:nowrap}
th,td:first-child,td:last-child,table.rows td:nth-last-child(2){white-space:normal}
table.rows td:nth-last-child(2){min-width:9em}td:first-child{min-width:10em}
th:first-child,td:first-child{text-align:left}
table.comparisons :is(th,td):is(:nth-child(-n+4),:nth-child(9)){text-align:left}
table.cost :is(th,td):is(:nth-child(-n+3),:nth-child(6),:nth-child(8)){text-align:left}
.scroll{overflow-x:auto}
th{cursor:pointer;background:#f3f3f3;user-select:none}
th.asc::after{content:' \\25B2'}th.desc::after{content:' \\25BC'}
tr.ref td{font-weight:600}td.sig{font-weight:600}td.sig.gain{color:#1a7f37}td.sig.drop{color:#b00020}
.note{background:#f7f7e8;border-left:4px solid #c9b800;padding:.5em 1em;max-width:900px}
.charts img{max-width:100%;display:block;margin:1em 0;border:1px solid #eee}
code{background:#f3f3f3;padding:0 .2em}
"""

SCRIPT = """
(function () {
  function value(cell) {
    var raw = cell.getAttribute('data-sort');
    if (raw === null) raw = cell.textContent.trim();
    var number = parseFloat(raw);
    return isNaN(number) ? raw.toLowerCase() : number;
  }
  function compare(a, b) {
    if (typeof a === typeof b) return a < b ? -1 : a > b ? 1 : 0;
    return typeof a === 'number' ? -1 : 1;
  }
  function sortBy(table, column, descending) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (x, y) {
      var order = compare(value(x.cells[column]), value(y.cells[column]));
      return descending ? -order : order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
      th.classList.remove('asc', 'desc');
      if (i === column) th.classList.add(descending ? 'desc' : 'asc');
    });
  }
  var tables = document.querySelectorAll('table.sortable');
  Array.prototype.forEach.call(tables, function (table) {
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, column) {
      th.addEventListener('click', function () {
        sortBy(table, column, !th.classList.contains('desc'));
      });
    });
  });
  var ok = true;
  Array.prototype.forEach.call(tables, function (table) {
    var original = Array.prototype.slice.call(table.tBodies[0].rows);
    sortBy(table, 1, true);
    var rows = table.tBodies[0].rows;
    for (var i = 1; i < rows.length; i++) {
      if (compare(value(rows[i - 1].cells[1]), value(rows[i].cells[1])) < 0) ok = false;
    }
    original.forEach(function (row) { table.tBodies[0].appendChild(row); });
    Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th) { th.classList.remove('asc', 'desc'); });
  });
  document.documentElement.setAttribute('data-sortable', ok ? 'ready' : 'self-check-failed');
})();
"""

COLUMNS = ("configuration", "score", "95% CI", "std (repeats)", "items", "parse fail", "decided", "turns",
           "calls/item", "tokens/item", TIME_COLUMN, "vs ref", "MDE (80% power)")
#: Where the money columns go in :data:`COLUMNS` on a board with a price file.
MONEY_AT = COLUMNS.index(TIME_COLUMN)
COMPARISON_COLUMNS = ("A", "B", "task", "metric", "items", "A − B", "95% CI of A − B", "MDE (80% power)", "test",
                      "p", "p adjusted", "significant")
#: A merged board's comparisons also show the (task, item, repeat) units each pair shared.
MERGED_COLUMNS = COMPARISON_COLUMNS[:5] + ("units",) + COMPARISON_COLUMNS[5:]


def page(board: dict[str, Any], charts: list[Path],
         history: tuple[list[dict[str, Any]], Path | None] | None = None, folder: Path | None = None,
         viewer: str | None = None) -> str:
    """The whole page as a string; ``history`` (entries, chart) adds the CI history (:mod:`.history`);
    ``folder`` (where the page is written) makes the "no charts" hint a command that works; ``viewer``
    (a file name beside the page) links the debate viewer (``madeval view``)."""
    title = html.escape(board["title"])
    correction = board["options"].get("correction", "holm")
    parts = [
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>",
        f"<style>{STYLE}</style></head><body>",
        f"<h1>{title}</h1>",
        *([f"<p class='note'>{html.escape(cache_note(board))}</p>"] if cache_note(board) else []),
        *([f"<p class='note'>{html.escape(paid_note(board))}</p>"] if paid_note(board) else []),
        f"<p>Run <code>{html.escape(board['run'])}</code>; reference configuration: "
        f"<b>{html.escape(_reference_label(board))}</b>. Click a column header to sort.</p>",
    ]
    if viewer:
        parts.append(f"<p>Read every debate: <a href='{html.escape(viewer)}'>{html.escape(viewer)}</a>.</p>")
    if board.get("conclusions"):  # what the board found comes first; the tables, charts and methods follow
        said = "".join(f"<li>{html.escape(sentence)}</li>" for sentence in board["conclusions"])
        parts.append(f"<h2>In short</h2><ul class='conclusions'>{said}</ul>")
    for scope, task, metric in dict.fromkeys((r["scope"], r["task"], r["metric"]) for r in board["rows"]):
        rows = [r for r in board["rows"] if (r["scope"], r["task"], r["metric"]) == (scope, task, metric)]
        kind = f"group, {rows[0].get('aggregation') or 'macro'} average" if scope == "group" else "task"
        parts.append(f"<h2>{html.escape(task)} ({kind}) — {html.escape(metric)}</h2>")
        parts.append(_table(rows, correction, bool(board.get("prices"))))
    parts.append(legend(correction, bool(board.get("prices"))))
    if note := prices_note(board.get("prices")):
        parts.append(f"<p class='note'>{html.escape(note)}</p>")
    parts.append("<h2>Cost and accuracy</h2><p>" + ("Dollars, tokens" if board.get("prices") else "Tokens")
                 + " (prompt + completion) and calls per item; "
                 "<b>front</b>: no other configuration of the task scores at least as high for at most the "
                 "cost (the cost-accuracy Pareto front, drawn in the <code>cost</code> chart); a row without "
                 "a cost is off it.</p>")
    parts.append(_cost_table(board["rows"], board))
    parts.append(dynamics_section(board.get("dynamics") or []))
    if board.get("merged"):
        parts.append(_merged(board))
    elif board["options"]["compare"] == "all" and board["comparisons"]:
        parts.append("<h2>All pairwise comparisons</h2><p>Also in <code>comparisons.csv</code>.</p>")
        parts.append(_comparisons(board["comparisons"], correction))
    if charts:
        parts.append("<h2>Charts</h2>" + _images(charts))
    elif not board["options"]["charts"]:
        parts.append(f"<p>No charts drawn: <code>{html.escape(charts_command(board, folder))}</code> "
                     "draws them (or <code>charts: true</code> under <code>leaderboard:</code> in a config file).</p>")
    if history is not None:
        parts.append(history_section(*history))
    parts.append(f"<h2>How the numbers were computed</h2><p class='note'>{html.escape(board['statement'])}</p>")
    parts.append(f"<script>{SCRIPT}</script></body></html>\n")
    return "\n".join(parts)


def legend(correction: str, priced: bool = False) -> str:
    """Each column's meaning (:data:`.render.LEGEND`), once, under the tables (the money columns'
    only when the board is ``priced``)."""
    entries = []
    for column, meaning in LEGEND.items():
        if column in MONEY_COLUMNS and not priced:
            continue
        if column == "vs ref":
            meaning = meaning.replace("by the correction named (Holm by default)", f"({adjusted_by(correction)})")
        entries.append(f"<dt>{html.escape(column)}</dt><dd>{html.escape(meaning)}.</dd>")
    return f"<details class='legend'><summary>Columns</summary><dl>{''.join(entries)}</dl></details>"


def charts_command(board: dict[str, Any], folder: Path | None) -> str:
    """The command that redraws this board with charts, quoted for a POSIX shell: the run's folder
    (every merged run's), and ``-o`` the folder the page is in when that is not the run's own."""
    runs = list(board["merged"]["runs"]) if board.get("merged") else [board["run"]]
    own = len(runs) == 1 and folder is not None and Path(runs[0]).resolve() == Path(folder).resolve()
    target = f" -o {shlex.quote(str(folder))}" if folder is not None and not own else ""
    return f"madeval leaderboard show {' '.join(shlex.quote(run) for run in runs)}{target} --charts"


def _images(charts: list[Path]) -> str:
    """The charts as inline PNG images."""
    images = []
    for chart in charts:
        data = base64.b64encode(chart.read_bytes()).decode("ascii")
        images.append(f"<img alt='{html.escape(chart.stem)}' src='data:image/png;base64,{data}'>")
    return "<div class='charts'>" + "".join(images) + "</div>"


def _merged(board: dict[str, Any]) -> str:
    """A merged board's runs, what did not pair, and every comparison with the units it shared."""
    runs = "".join(f"<li><code>{html.escape(run)}</code>: {html.escape(', '.join(labels))}</li>"
                   for run, labels in board["merged"]["runs"].items())
    parts = [f"<h2>Runs merged</h2><ul>{runs}</ul><p>Each comparison pairs the (task, item, repeat) units both "
             "configurations recorded; <i>items</i> and <i>units</i> say how many they shared.</p>"]
    parts += [f"<p class='note'>{html.escape(note)}.</p>" for note in board["merged"]["notes"]]
    if board["comparisons"]:
        parts.append(_comparisons(board["comparisons"]))
    return "\n".join(parts)


#: A history cell of a significant drop: red, as a significant drop on the board.
DROPPED = " class='sig drop'"


def history_section(entries: list[dict[str, Any]], chart: Path | None) -> str:
    """The CI history (:mod:`.history`): a table per task and metric, drops marked, and its chart."""
    parts = [f"<h2>History of checks</h2><p class='note'>{html.escape(history_summary(entries))}</p>"]
    for (task, metric), by_label in series(entries).items():
        labels = list(by_label)
        head = "".join(f"<th>{html.escape(c)}</th>" for c in ("#", "commit", "time", *labels, "verdict"))
        body = []
        for index, line in enumerate(entries):
            rows = [by_label[label][index] for label in labels]
            cells = "".join(
                f"<td{DROPPED if row and row['status'] == DROP else ''}>{html.escape(cell(row))}</td>"
                for row in rows
            )
            verdict = "PASS" if line["passed"] else "FAIL"
            body.append(f"<tr><td>{index + 1}</td><td>{html.escape(short(line['commit']))}</td>"
                        f"<td>{html.escape(line['time'])}</td>{cells}<td>{verdict}</td></tr>")
        parts.append(f"<h3>{html.escape(task)} — {html.escape(metric)}</h3><div class='scroll'><table class='sortable'>"
                     f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table></div>")
    if chart is not None:
        parts.append(_images([chart]))
    return "\n".join(parts)


def history_page(name: str, entries: list[dict[str, Any]], chart: Path | None) -> str:
    """A self-contained page of a history file: its tables and chart."""
    title = html.escape(f"madeval history: {name}")
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{title}</title>"
            f"<style>{STYLE}</style></head><body><h1>{title}</h1>\n{history_section(entries, chart)}\n"
            f"<script>{SCRIPT}</script></body></html>\n")


def _reference_label(board: dict[str, Any]) -> str:
    reference = board["options"].get("reference")
    return board["configurations"].get(reference, {}).get("label", "none") if reference else "none"


def _cells(cells: list[tuple[str, Any]], significant_column: int | None = None, direction: str = "") -> str:
    """Table cells; a cell's second element is its sort key (None: sort by its text). The
    ``significant_column`` is marked significant, and ``direction`` (``gain``: green, ``drop``: red)
    says which way; without one it is only bold (a comparison of two configurations)."""
    tds = []
    for index, (text, key) in enumerate(cells):
        sort = "" if key is None else f" data-sort='{key!r}'"
        cls = f" class='{' '.join(filter(None, ('sig', direction)))}'" if index == significant_column else ""
        shown = html.escape(text)
        if index == 0:  # a configuration label: may break after each '/' (none/simple/memory/...)
            shown = shown.replace("/", "/<wbr>")
        tds.append(f"<td{sort}{cls}>{shown}</td>")
    return "".join(tds)


def _comparisons(comparisons: list[dict[str, Any]], correction: str = "holm") -> str:
    """Every pairwise comparison as a sortable table, with its test; the adjusted p's column names
    its correction."""
    merged = any("units" in c for c in comparisons)
    names = [f"p {adjusted_by(correction)}" if c == "p adjusted" else c
             for c in (MERGED_COLUMNS if merged else COMPARISON_COLUMNS)]
    head = "".join(f"<th>{html.escape(c)}</th>" for c in names)
    body = []
    for c in comparisons:
        units = [(str(c["units"]), c["units"])] if merged else []
        cells = [
            (c["label_a"], None), (c["label_b"], None), (c["task"], None), (c["metric"], None),
            (str(c["items"]), c["items"]), *units, (f"{c['delta']:+.3f}", c["delta"]),
            (difference_interval(c), c.get("delta_ci_low")), (mde_text(c.get("mde")), c.get("mde")),
            (test_name(c["test"]), None), (f"{c['p_value']:.3g}", c["p_value"]),
            (f"{c['p_adjusted']:.3g}", c["p_adjusted"]), ("yes" if c["significant"] else "no", None),
        ]
        body.append(f"<tr>{_cells(cells, len(cells) - 1 if c['significant'] else None)}</tr>")
    return (f"<div class='scroll'><table class='sortable comparisons'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _cost_table(rows: list[dict[str, Any]], board: dict[str, Any]) -> str:
    """Score against dollars (priced boards), tokens and calls per item for every row, the Pareto
    fronts marked."""
    costs = board_costs(board)
    columns = ("configuration", "task", "metric", "score", *(h for cost in costs for h in COST_HEADINGS[cost]))
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = []
    for r in rows:
        cells = [(label_of(r), None), (task_of(r), None), (r["metric"], None), (points(r, r["score"]), r["score"])]
        for cost in costs:
            cells += [(cost_values(r, cost), r.get(cost)), (on_front(r, cost), None)]
        body.append(f"<tr>{_cells(cells)}</tr>")
    return (f"<div class='scroll'><table class='sortable cost'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>")


def _table(rows: list[dict[str, Any]], correction: str = "holm", priced: bool = False) -> str:
    columns = COLUMNS[:MONEY_AT] + MONEY_COLUMNS + COLUMNS[MONEY_AT:] if priced else COLUMNS
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = []
    for r in rows:
        seconds = r.get("llm_s_per_item")
        cells = [
            (label_of(r), None),
            (points(r, r["score"]), r["score"]),
            (f"{points(r, r['ci_low'])}–{points(r, r['ci_high'])}", r["ci_low"]),
            (points(r, r["std_repeats"]), r["std_repeats"]),
            (str(r["items"]), r["items"]),
            (f"{100 * r['parse_failure_rate']:.1f}%", r["parse_failure_rate"]),
            (f"{100 * r['decision_success_rate']:.0f}%", r["decision_success_rate"]),
            (f"{r['mean_turns']:.2f}", r["mean_turns"]),
            (recorded(r, "calls_per_item", 1), r["calls_per_item"]),
            (recorded(r, "tokens_per_item", 0), r["tokens_per_item"]),
            *(zip(money_cells(r), (r.get("cost_per_item"), r.get("cost_total"))) if priced else ()),
            (recorded(r, "llm_s_per_item", 2), seconds),
            (versus(r, correction), r["delta"]),
            (row_mde(r), r.get("mde")),
        ]
        gain = "gain" if (r.get("delta") or 0) > 0 else "drop"  # against the reference
        tds = _cells(cells, len(cells) - 2 if r.get("significant") else None, gain)
        body.append(f"<tr{' class=ref' if r.get('reference') else ''}>{tds}</tr>")
    return (f"<div class='scroll'><table class='sortable rows'><thead><tr>{head}</tr></thead>"
            f"<tbody>{''.join(body)}</tbody></table></div>")
