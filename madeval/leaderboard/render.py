"""The leaderboard as Markdown (``leaderboard.md``; the end of a run prints its :func:`brief`), CSV and JSON.

Every score is on the metric's own scale, 0 to 1 for accuracy-like metrics, in every output
(tables, charts, CSV, JSON, ``evaluate().rows``, the closing sentences): the scale the records,
rescoring, ``sample-size --delta`` and lm-eval's own results use, so a number copied from any
output means the same as in any other, and metrics outside [0, 1] need no second rule. Each
column is defined once, in :data:`LEGEND` (under the sentences in ``leaderboard.md`` and the page;
docs/leaderboard.md repeats it, generated from it). The table is followed by one sentence per comparison
(:mod:`.sentences`), so the board says what it found before it says how: a terminal shows only the
table and the sentences (:func:`brief`, about 300 words for four configurations), ``--explain`` the
whole board.

Costs and times are per item (one debate on an item, its repeats averaged). The time shown is the
**LLM time** (``LLM s/item``): the sum of the debate's calls' own latencies, measured from the moment
a call holds a concurrency slot. The elapsed wall time of a debate (``wall_s_per_item`` in the CSV
and JSON) also counts the waits for a slot while other debates hold them, so it mostly measures
how busy the run was, not the configuration.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

from madeval.dynamics.render import markdown as dynamics_markdown
from madeval.leaderboard.cost import COSTS, board_costs, front_key
from madeval.leaderboard.money import dollars, prices_note
from madeval.settings.board_options import CORRECTION_NAMES
from madeval.util.shown_text import csv_cell
from madeval.util.shown_text import markdown_cell as cell

CSV_FIELDS = (
    "config", "label", "source", "replay_of", "scope", "task", "aggregation", "metric", "score", "ci_low",
    "ci_high", "ci_method", "population", "std_repeats", "items", "units", "repeats", "parse_failure_rate",
    "decision_success_rate", "mean_turns", "calls_per_item", "tokens_per_item", "cost_per_item", "cost_total",
    "llm_s_per_item", "wall_s_per_item", "oracle", "reference", "delta", "test", "p_value", "p_adjusted",
    "significant", "mde", *(front_key(cost) for cost in COSTS), front_key("cost_per_item"),
)
#: Row values a run imported from another harness did not record: "not recorded" wherever shown.
RECORDED_ONLY = ("calls_per_item", "tokens_per_item", "llm_s_per_item", "wall_s_per_item")
#: The money columns, shown when the board has a price file.
MONEY_COLUMNS = ("cost/item", "cost (total)")
COMPARISON_FIELDS = (
    "scope", "task", "metric", "a", "label_a", "b", "label_b", "items", "delta", "delta_ci_low", "delta_ci_high",
    "test", "method", "p_value",
    "p_adjusted", "family", "adjusted_over", "significant", "mde", "mde_method",
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


def adjusted_by(correction: str) -> str:
    """How an adjusted p-value is named: ``after Holm``, ``after Benjamini-Hochberg``, ``uncorrected``."""
    return "uncorrected" if correction == "none" else f"after {CORRECTION_NAMES[correction]}"


def versus(row: dict[str, Any], correction: str = "holm") -> str:
    """The comparison with the reference: ``ref``, or the difference, the adjusted p (named by its
    correction), the test and a star."""
    if row.get("reference"):
        return "ref"
    if row.get("delta") is None:
        return ""
    star = "*" if row["significant"] else ""
    return (f"{points(row, row['delta'], sign=True)}{star} (p={row['p_adjusted']:.3g} {adjusted_by(correction)}, "
            f"{test_name(row.get('test'))})")


def mde_text(mde: float | None, bounded: bool = True) -> str:
    """A minimum detectable effect as shown: ``±`` the difference on the metric's scale, or ``–``."""
    if mde is None:
        return "–"
    return f"±{mde:.3f}" if bounded else f"±{mde:.3g}"


def row_mde(row: dict[str, Any]) -> str:
    """The row's minimum detectable effect against the reference as shown; empty without a comparison."""
    return mde_text(row.get("mde"), row.get("bounded", True)) if row.get("delta") is not None else ""


def points(row: dict[str, Any], value: float, sign: bool = False) -> str:
    """A score (or a difference of scores) as shown: on the metric's own scale, three decimals for
    scores in [0, 1], three significant digits otherwise (see the module's note on the scale)."""
    plus = "+" if sign else ""
    return f"{value:{plus}.3f}" if row.get("bounded", True) else f"{value:{plus}.3g}"


#: Each column of the board, defined once: printed under the Markdown table, on the HTML page and in
#: docs/leaderboard.md (a generated block; tests/docs/test_generated_blocks.py keeps it in step).
LEGEND = {
    "score": "the metric averaged over items (each item's repeats averaged first), on the metric's own "
             "scale: 0 to 1 for accuracy (0.732 = 73.2% of items right)",
    "95% CI": "95% confidence interval of the score (how it is computed: the notes at the end)",
    "std (repeats)": "standard deviation of the score across repeats of the whole run (0 with one repeat)",
    "items": "items scored (a group row: of all its tasks)",
    "parse fail": "share of debates whose final answer could not be read as an answer to the item "
                  "(scored as wrong)",
    "decided": "share of debates in which the decider reached its decision (consensus, a vote's winner); "
               "the rest ended without one (at the turn limit, or a tie) and kept the current draft",
    "turns": "mean number of debate turns (rounds in which the agents answer) per debate",
    "calls/item": "mean number of model calls per item (\"not recorded\" for a run imported from another "
                  "harness, whose output holds no calls or tokens)",
    "tokens/item": "mean prompt + completion tokens per item",
    "cost/item": "mean dollars per item at the prices of the price file (--prices): list prices, or batch "
                 "prices for the calls that went through --transport batch, and cached_input for the prompt "
                 "tokens the provider served from its cache; calls answered from the response cache cost "
                 "nothing; \"not priced\" when a model of the row has no price",
    "cost (total)": "dollars spent on all the row's debates (every item and repeat)",
    TIME_COLUMN: "mean seconds per item the model spent on the debate's calls (their own latencies, not "
                 "time spent waiting for a free slot)",
    "vs ref": "difference from the reference configuration (this row minus the reference), then its "
              "p-value adjusted for the family's comparisons by the correction named (Holm by default), "
              "and the paired test; * = significant after the correction",
    "MDE (80% power)": "minimum detectable effect: the smallest difference from the reference the test "
                       "finds 4 times in 5 on these items; – when no difference would",
}


def legend_markdown(board: dict[str, Any]) -> str:
    """The legend as a Markdown list (not a table), the ``vs ref`` entry naming the board's correction."""
    correction = board["options"].get("correction", "holm")
    lines = ["Columns:"]
    for column, meaning in LEGEND.items():
        if column in MONEY_COLUMNS and not board.get("prices"):
            continue
        if column == "vs ref":
            meaning = meaning.replace("by the correction named (Holm by default)", f"({adjusted_by(correction)})")
        lines.append(f"- **{column}**: {meaning}.")
    return "\n".join(lines) + "\n"


def _num(value: float | None, digits: int = 1, scale: float = 1.0) -> str:
    return "–" if value is None else f"{scale * value:.{digits}f}"


def recorded(row: dict[str, Any], key: str, digits: int) -> str:
    """A row's calls, tokens or time as shown: ``not recorded`` for an imported run, ``–`` when missing."""
    if not row.get("costs_recorded", True):
        return "not recorded"
    return _num(row.get(key), digits)


def money_cells(row: dict[str, Any]) -> tuple[str, str]:
    """A row's cost per item and in all as shown (``not priced``, ``not recorded`` when it has none)."""
    status = row.get("cost_status")
    return dollars(row.get("cost_per_item"), status), dollars(row.get("cost_total"), status)


def table_markdown(board: dict[str, Any]) -> str:
    """The board's rows as a Markdown table: one row per configuration, task and metric."""
    correction = board["options"].get("correction", "holm")
    priced = bool(board.get("prices"))
    money_head = "".join(f" {column} |" for column in MONEY_COLUMNS) if priced else ""
    header = (
        "| configuration | task | metric | score | 95% CI | std (repeats) | items | parse fail "
        f"| decided | turns | calls/item | tokens/item |{money_head} {TIME_COLUMN} | vs ref | MDE (80% power) |\n"
        "|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|" + ("---:|---:|" if priced else "")
        + "---:|---|---:|\n"
    )
    lines = [
        f"| {cell(label_of(r))} | {cell(task_of(r))} | {cell(r['metric'])} "
        f"| {points(r, r['score'])} | {points(r, r['ci_low'])}–{points(r, r['ci_high'])} "
        f"| {points(r, r['std_repeats'])} | {r['items']} | {100 * r['parse_failure_rate']:.1f}% "
        f"| {100 * r['decision_success_rate']:.0f}% | {r['mean_turns']:.2f} | {recorded(r, 'calls_per_item', 1)} "
        f"| {recorded(r, 'tokens_per_item', 0)} |" + ("".join(f" {m} |" for m in money_cells(r)) if priced else "")
        + f" {recorded(r, 'llm_s_per_item', 2)} | {versus(r, correction)} | {row_mde(r)} |"
        for r in board["rows"]
    ]
    return header + "\n".join(lines) + "\n"


def conclusions_markdown(board: dict[str, Any]) -> str:
    """``In short:`` and one sentence per comparison (:mod:`.sentences`); ``""`` when there is none."""
    said = board.get("conclusions") or []
    # sentences quote labels: text, never Markdown of theirs
    return "In short:\n" + "".join(f"- {cell(sentence)}\n" for sentence in said) if said else ""


def notes_markdown(board: dict[str, Any]) -> str:
    """What qualifies the table's numbers, each a paragraph: the prices used, the records skipped on
    reading, the calls the response cache answered; ``""`` when there is nothing to say."""
    notes = [cell(prices_note(board.get("prices")))]
    if (board.get("records_read") or {}).get("summary"):  # each unit counted once, whatever is on disk
        notes.append(f"Records: {board['records_read']['summary']}; each unit counts once.")
    notes.append(cache_note(board))
    notes.append(paid_note(board))
    return "".join(f"\n{note}\n" for note in notes if note)


def markdown(board: dict[str, Any]) -> str:
    """The whole board as Markdown (``leaderboard.md``; printed with ``--explain``): the rows and
    the sentences that say what they mean first, then the column legend, the notes, the comparisons,
    cost and accuracy, the dynamics, and how the numbers were computed (once)."""
    correction = board["options"].get("correction", "holm")
    text = table_markdown(board)
    if said := conclusions_markdown(board):
        text += "\n" + said
    text += "\n" + legend_markdown(board) + notes_markdown(board)
    if board.get("merged"):
        text += "\n" + merged_markdown(board)
    elif board["options"]["compare"] == "all" and board["comparisons"]:
        text += "\n" + comparisons_markdown(board["comparisons"], correction)
    dynamics = dynamics_markdown(board.get("dynamics") or [])
    text += "\n" + cost_markdown(board["rows"], board) + (f"\n{dynamics}" if dynamics else "")
    return text + "\nHow the numbers were computed: " + board["statement"] + "\n"


#: What the printed board leaves out, named under it with where to read it.
LEFT_OUT = "Column legend, cost, dynamics and methods"


def brief(board: dict[str, Any], folder: str | Path | None = None) -> str:
    """The board as the terminal shows it after a run and by ``madeval leaderboard show``: the table,
    what qualifies its numbers (:func:`notes_markdown`; for runs merged, which runs and what did not
    pair), and one sentence per comparison, then one line saying where the rest is: ``folder``'s
    ``leaderboard.md`` and ``leaderboard.html`` (None: no files were written), or ``--explain``,
    which prints the whole board (:func:`markdown`)."""
    text = table_markdown(board)
    if board.get("merged"):
        text += "\n" + merged_markdown(board, comparisons=False)
    if said := conclusions_markdown(board):
        text += "\n" + said
    text += notes_markdown(board)  # after the conclusion, as in leaderboard.md
    where = f"{Path(folder) / 'leaderboard.md'} and .html; " if folder is not None else ""
    return text + f"\n{LEFT_OUT}: {where}--explain prints them.\n"


def printed(board: dict[str, Any], explain: bool, folder: str | Path | None = None) -> str:
    """The board as a command prints it: the whole of it with ``explain``, else :func:`brief`."""
    return markdown(board) if explain else brief(board, folder)


def cache_note(board: dict[str, Any]) -> str:
    """A sentence saying how many calls the response cache answered, or ``""`` when none did."""
    share = board.get("cached_calls") or {}
    cached, calls = share.get("cached", 0), share.get("calls", 0)
    if not cached:
        return ""
    return (f"Cache: {cached} of {calls} calls ({100 * cached / max(calls, 1):.0f}%) were answered from the "
            "response cache; their tokens and LLM time are those of the original calls.")


def shared_statement(paid: dict[str, int]) -> str:
    """For the methods paragraph: that the configurations shared identical calls (common random
    numbers), when any call was shared (:mod:`madeval.llm.shared`); ``""`` otherwise."""
    shared, calls = paid.get("shared", 0), paid.get("calls", 0)
    if not shared:
        return ""
    return (f" The configurations shared identical calls: {shared:,} of the {calls:,} calls their debates used "
            f"({100 * shared / max(calls, 1):.0f}%) reused the reply to the same request (model, messages, sampling "
            "parameters and seed) made for another configuration's debate of the same item and repeat, so the "
            "configurations were compared on common random numbers; each configuration's calls, tokens and cost "
            "count every call its debates used, shared or not.")


def paid_note(board: dict[str, Any]) -> str:
    """A sentence saying what the run paid against what its debates used, when calls were shared;
    ``""`` otherwise."""
    paid = board.get("paid") or {}
    if not paid.get("shared"):
        return ""
    calls, made, tokens, made_tokens = paid["calls"], paid["made"], paid["tokens"], paid["made_tokens"]
    return (f"Paid: {made:,} calls made for the {calls:,} the debates used ({paid['shared']:,} shared between "
            f"configurations, {100 * (calls - made) / max(calls, 1):.0f}% saved); {made_tokens:,} of "
            f"{tokens:,} tokens.")


def on_front(row: dict[str, Any], cost: str) -> str:
    """``front`` when the row is on the cost-accuracy Pareto front against ``cost`` (see :mod:`.cost`)."""
    return "front" if row.get(front_key(cost)) else ""


#: The cost section's columns per cost: the value's heading and its front's.
COST_HEADINGS = {"cost_per_item": ("cost/item", "front (cost)"), "tokens_per_item": ("tokens/item", "front (tokens)"),
                 "calls_per_item": ("calls/item", "front (calls)")}


def cost_values(row: dict[str, Any], cost: str) -> str:
    """One cost of a row as the cost section shows it."""
    if cost == "cost_per_item":
        return money_cells(row)[0]
    return recorded(row, cost, 0 if cost == "tokens_per_item" else 1)


def cost_markdown(rows: list[dict[str, Any]], board: dict[str, Any] | None = None) -> str:
    """Score against dollars (with a price file), tokens and calls per item, with each family's
    Pareto front marked."""
    costs = board_costs(board or {})
    heads = [heading for cost in costs for heading in COST_HEADINGS[cost]]
    lines = [
        "Cost and accuracy (front: no other configuration of the task scores at least as high for at most "
        "the cost; a row without a cost is off it):\n",
        "| configuration | task | metric | score | " + " | ".join(heads) + " |",
        "|---|---|---|---:|" + "---:|---|" * len(costs),
    ]
    for r in rows:
        cells = "".join(f" {cost_values(r, cost)} | {on_front(r, cost)} |" for cost in costs)
        lines.append(f"| {cell(label_of(r))} | {cell(task_of(r))} | {cell(r['metric'])} | {points(r, r['score'])} |"
                     + cells)
    return "\n".join(lines) + "\n"


def merged_markdown(board: dict[str, Any], comparisons: bool = True) -> str:
    """Which runs a merged board holds, what did not pair, and (with ``comparisons``) every
    comparison with its shared units."""
    held = [cell(f"{run} ({', '.join(labels)})") for run, labels in board["merged"]["runs"].items()]
    text = "Runs merged: " + "; ".join(held) + ". Each comparison pairs the (task, item, repeat) "
    text += "units both configurations recorded.\n"
    text += "".join(f"\nNote: {cell(note)}.\n" for note in board["merged"]["notes"])
    correction = board["options"].get("correction", "holm")
    shown = comparisons and board["comparisons"]
    return text + ("\n" + comparisons_markdown(board["comparisons"], correction) if shown else "")


def comparisons_markdown(comparisons: list[dict[str, Any]], correction: str = "holm") -> str:
    """Every pairwise comparison as a Markdown table; the adjusted p's column names its correction."""
    lines = [
        "| task | metric | A | B | items | A − B | 95% CI of A − B | MDE (80% power) | test | p "
        f"| p {adjusted_by(correction)} | significant |",
        "|---|---|---|---|---:|---:|---|---:|---|---:|---:|---|",
    ]
    if any("units" in c for c in comparisons):  # a merged board: the units each pair shared
        lines = [lines[0].replace("| items |", "| items | units |"), lines[1].replace("|---:|", "|---:|---:|", 1)]
    for c in comparisons:
        units = f" | {c['units']}" if "units" in c else ""
        lines.append(
            f"| {cell(c['task'])} | {cell(c['metric'])} | {cell(c['label_a'])} | {cell(c['label_b'])} "
            f"| {c['items']}{units} "
            f"| {c['delta']:+.3f} | {difference_interval(c)} | {mde_text(c.get('mde'))} | {test_name(c['test'])} "
            f"| {c['p_value']:.3g} "
            f"| {c['p_adjusted']:.3g} | {'yes' if c['significant'] else 'no'} |"
        )
    return "\n".join(lines) + "\n"


def difference_interval(comparison: dict[str, Any]) -> str:
    """A comparison's 95% interval of the difference as shown, or ``–`` when it has none."""
    low, high = comparison.get("delta_ci_low"), comparison.get("delta_ci_high")
    return "–" if low is None or high is None else f"{low:+.3f} to {high:+.3f}"


def _csv(rows: list[dict[str, Any]], fields: tuple[str, ...]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=fields, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        # Text a spreadsheet would run as a formula (a label '=HYPERLINK(...)') is neutralised.
        writer.writerow({k: ("" if row.get(k) is None else csv_cell(row.get(k))) for k in fields})
    return buffer.getvalue()


def csv_text(board: dict[str, Any]) -> str:
    """The rows as CSV (raw numbers, scores as fractions; dollars as numbers). What a row has no value
    for is said, never 0: ``not recorded`` (calls, tokens, times and cost of an imported run), ``not
    priced`` (its cost when a model has no price); without a price file the cost cells are empty."""
    rows = []
    for row in board["rows"]:
        row = dict(row)
        if not row.get("costs_recorded", True):
            row.update(dict.fromkeys(RECORDED_ONLY, "not recorded"))
        if row.get("cost_status") in ("not priced", "not recorded"):
            row.update(cost_per_item=row["cost_status"], cost_total=row["cost_status"])
        rows.append(row)
    return _csv(rows, CSV_FIELDS)


def comparisons_csv(board: dict[str, Any]) -> str:
    """Every comparison of the board (against the reference or all pairs) as CSV, with its test."""
    fields = COMPARISON_FIELDS
    if board.get("merged"):  # the (task, item, repeat) units each pair of a merged board shared
        at = fields.index("items") + 1
        fields = fields[:at] + ("units",) + fields[at:]
    return _csv(board["comparisons"], fields)
