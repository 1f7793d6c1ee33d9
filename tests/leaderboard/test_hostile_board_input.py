"""Hostile values in the files a board reads (issue 33, item 12): a record's Infinity score or
absurd turn count is a broken line, skipped and counted, never a traceback or a figure; an lm-eval
file's numeric filter is one line; a label's control characters never reach stderr through
matplotlib.

Before: ``leaderboard show`` ended in a traceback (statistics.stdev of Infinity with two repeats),
a record's ``"turns": 2e14`` showed as 2e14 turns per item, an lm-eval filter ``5`` was named as
"several filters (5, 5)", and matplotlib's missing-glyph warnings printed raw ESC and BEL."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from helpers import madeval_in_process, run_quietly, settings_for

HERE = Path(__file__).parent
FIXTURES = HERE.parent / "importers" / "fixtures" / "lmeval"


def madeval(*args) -> subprocess.CompletedProcess:
    return madeval_in_process(*args)


def test_hostile_infinity_score_and_turn_count_are_skipped_lines_not_a_traceback(sim, tmp_path):
    result, _ = run_quietly(settings_for(sim.base_url, tmp_path, limit=3, repeats=2, cache="off", max_turns=2))
    path = result.folder / "records.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert len(records) == 6
    records[0]["metrics"]["accuracy"] = float("inf")  # Python's JSON writer writes Infinity
    records[1]["turns"] = 2 * 10**14
    records[2]["wall_s"] = float("nan")
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    done = madeval("leaderboard", "show", result.folder)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr
    assert "3 broken lines skipped (records.jsonl:1, records.jsonl:2, records.jsonl:3)" in done.stdout
    board = json.loads((result.folder / "leaderboard.json").read_text())
    (row,) = [r for r in board["rows"] if r["scope"] == "task"]
    assert row["units"] == 3 and 1 <= row["mean_turns"] <= 2  # the three whole records, each of 1 or 2 turns
    kept = records[3:]
    assert row["mean_turns"] == sum(r["turns"] for r in kept) / 3


def test_hostile_numeric_lm_eval_filter_is_one_line(tmp_path):
    source = next((FIXTURES / "sim-acc80").glob("samples_gsm8k_*.jsonl.gz"))
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        lines = [json.loads(line) for line in handle if line.strip()]
    for line in lines:
        line["filter"] = 5
    path = tmp_path / "samples_gsm8k.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    done = madeval("import", "lm-eval", path, "--task", "gsm8k", "--output-path", tmp_path / "out")
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line == 'madeval: error: samples_gsm8k.jsonl: line 1: filter "5" is not a filter\'s name'
    assert not (tmp_path / "out").exists()


def test_hostile_control_characters_in_labels_never_reach_stderr_through_the_charts(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        sys.path[:0] = [{str(HERE)!r}, {str(HERE.parent)!r}]
        from pathlib import Path
        from test_hostile_chart_text import board_with_dollars
        from madeval.leaderboard import charts
        from madeval.leaderboard.history_chart import draw

        board = board_with_dollars()
        label = "evil\\x1b]0;pwned\\x07\\x1b[31m red\\x9b"
        board["configurations"]["c1"]["label"] = board["rows"][0]["label"] = label
        for row in board["rows"]:
            row["task"] = "t\\x1b[2Jask"
        written = charts.draw_all(board, Path({str(tmp_path / "charts")!r}))
        entry = {{"commit": "abc\\x07def", "rows": [{{"task": "t\\x1b[2J", "metric": "accuracy",
                  "label": label, "score": 0.5, "ci_low": 0.4, "ci_high": 0.6, "status": "ok"}}]}}
        draw([entry, entry], Path({str(tmp_path / "history")!r}))
        print(len(written))
    """)
    done = subprocess.run([sys.executable, "-W", "always", "-c", script], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout) >= 4
    controls = sorted({c for c in done.stderr if ord(c) < 32 and c not in "\n\t" or 0x7F <= ord(c) <= 0x9F})
    assert controls == [], (controls, done.stderr[-2000:])
