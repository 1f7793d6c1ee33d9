"""The board's words (issue 24, items 5 and 6): each column defined once (on the board and in
docs/leaderboard.md), the adjusted p named as adjusted, one score scale everywhere, the long note once and short
with one configuration, one quotable sentence per comparison (best against runner-up always among
them), ``--compare all`` keeping the "vs ref" column, and a merged board's own title and a charts
command that works when pasted."""

from __future__ import annotations

import csv
import json
import shlex
import statistics
from pathlib import Path

import pytest

from helpers import madeval_in_process, run_quietly
from madeval.analysis.difference import mcnemar_interval
from madeval.leaderboard import LeaderboardOptions, build_leaderboard, build_merged_leaderboard, write_outputs
from madeval.leaderboard.render import LEGEND, markdown
from madeval.leaderboard.sentences import sentence
from madeval.settings.board_options import INTERVALS
from madeval.settings.config import build_settings
from madeval.simulator import simulate

ROOT = Path(__file__).resolve().parents[2]
SWEEP = {
    "name": "three ways",
    "tasks": ["arith_mc"],
    "limit": 12,
    "cache": "off",
    "runs": [
        {"preset": "baseline_direct", "name": "single"},
        {"agents": 3, "decider": "majority_consensus", "max_turns": 3, "name": "debate3"},
        {"agents": 5, "decider": "simple_voting", "max_turns": 3, "name": "vote5"},
    ],
}


@pytest.fixture(scope="module")
def sweep(generated_tasks, tmp_path_factory):
    """A sweep of three configurations on the simulator (12 arith_mc items)."""
    folder = tmp_path_factory.mktemp("words") / "run"
    with simulate(tasks=generated_tasks.values(), accuracy=0.5, conformity=0.3) as sim:
        result, printed = run_quietly(build_settings({**SWEEP, "base_url": sim.base_url, "output_path": str(folder)}))
    return result, printed


def main_table_columns(text: str) -> list[str]:
    return [c.strip() for c in text.splitlines()[0].strip("|").split("|")]


def test_every_column_is_defined_once_on_the_board_and_in_the_docs(sweep):
    result, printed = sweep
    written = (result.folder / "leaderboard.md").read_text()
    assert written.count("Columns:") == 1 and "Columns:" not in printed  # the terminal: --explain
    for column in main_table_columns(printed)[3:]:  # configuration, task, metric explain themselves
        assert column in LEGEND, column
        assert written.count(f"- **{column}**:") == 1
    documented = (ROOT / "docs" / "leaderboard.md").read_text()
    for column, meaning in LEGEND.items():
        assert f"**{column}**: {meaning}." in documented, column
    page = (result.folder / "leaderboard.html").read_text()
    assert page.count("<dt>decided</dt>") == 1 and page.count("<dt>LLM s/item</dt>") == 1


def test_the_adjusted_p_says_it_is_adjusted_and_by_which_method(sweep):
    result, printed = sweep
    debate = next(r for r in result.rows if r["label"] == "debate3")
    assert f"(p={debate['p_adjusted']:.3g} after Holm, McNemar)" in printed
    written = (result.folder / "leaderboard.md").read_text()
    assert "- **vs ref**:" in written and "(after Holm)" in written
    board = build_leaderboard(result.folder, LeaderboardOptions(correction="bh", compare="all"))
    text = markdown(board)
    assert "after Benjamini-Hochberg" in text and "| p after Benjamini-Hochberg |" in text
    assert "after Holm" not in text


def test_one_score_scale_in_the_table_json_csv_and_rows(sweep):
    result, printed = sweep
    stored = json.loads((result.folder / "leaderboard.json").read_text())["rows"]
    with open(result.folder / "leaderboard.csv") as handle:
        listed = list(csv.DictReader(handle))
    for row, kept, line in zip(result.rows, stored, listed):
        assert 0 <= row["score"] <= 1 and kept["score"] == row["score"] and float(line["score"]) == row["score"]
        cells = next(text for text in printed.splitlines() if text.startswith(f"| {row['label']} |"))
        assert f"| {row['score']:.3f} | {row['ci_low']:.3f}–{row['ci_high']:.3f} |" in cells
    for row in result.rows:
        if row["delta"] is not None:
            assert f"{row['delta']:+.3f}" in printed and (row["mde"] is None or f"±{row['mde']:.3f}" in printed)


def test_the_long_note_comes_once_at_the_end_and_is_short_with_one_configuration(sweep, generated_tasks, tmp_path):
    result, printed = sweep
    board = result.board
    written = (result.folder / "leaderboard.md").read_text()
    assert written.count(board["statement"]) == 1 and "McNemar" in board["statement"]
    assert written.index(board["statement"]) > written.index("Cost and accuracy")
    assert board["statement"] not in printed  # printed on request (--explain)
    with simulate(tasks=generated_tasks.values(), accuracy=0.5) as sim:
        alone, _ = run_quietly(build_settings({"tasks": ["arith_mc"], "limit": 4, "cache": "off",
                                               "base_url": sim.base_url, "output_path": str(tmp_path / "one")}))
    text = (alone.folder / "leaderboard.md").read_text()
    assert alone.board["statement"] == INTERVALS["population"]
    # no comparison between configurations to explain (the dynamics section's own test of the debate
    # against its first-turn vote is explained in that section's legend)
    between = text.split("Did the debate beat its first-turn vote?")[0]
    assert "McNemar" not in between and "In short" not in text and alone.board["conclusions"] == []


def test_one_sentence_per_comparison_follows_the_table_with_its_numbers(sweep):
    result, printed = sweep
    board = result.board
    comparisons = board["comparisons"]
    # reference mode: each against the reference, and the best against the runner-up when neither is it
    ranked = sorted(result.rows, key=lambda r: -r["score"])
    best, second = ranked[0]["config"], ranked[1]["config"]
    top = [c for c in comparisons if {c["a"], c["b"]} == {best, second}]
    assert len(top) == 1 and top[0]["top_two"]
    assert len(board["conclusions"]) == len(comparisons) == 2 + (board["options"]["reference"] not in (best, second))
    written = (result.folder / "leaderboard.md").read_text()
    said_in = [text[text.index("In short:"):].split("\n\n")[0].splitlines()[1:] for text in (written, printed)]
    assert said_in == [[f"- {s}" for s in board["conclusions"]]] * 2
    # right under the table, in the file and on the terminal
    assert written.index("In short:") < written.index("Columns:") and printed.index("In short:") > printed.index("|---")
    said = dict(zip((id(c) for c in comparisons), board["conclusions"]))
    for c in comparisons:
        text = said[id(c)]
        assert f"p={c['p_adjusted']:.2g} after Holm" in text
        assert text.startswith("Best against runner-up: ") == c["top_two"]
    # the interval of each difference belongs to its test (0/1 scores: McNemar's compatible interval)
    # and leaves out 0 exactly when the test's own p-value is below 0.05
    scores = board["item_scores"]["arith_mc"]["accuracy"]
    for c in comparisons:
        items = sorted(scores[c["a"]])
        a, b = [scores[c["a"]][k] for k in items], [scores[c["b"]][k] for k in items]
        assert c["test"] == "mcnemar"
        n10, n01 = sum(x > y for x, y in zip(a, b)), sum(x < y for x, y in zip(a, b))
        expected = mcnemar_interval(n10, n01, len(items))
        assert (c["delta_ci_low"], c["delta_ci_high"]) == (expected.low, expected.high)
        assert (c["delta_ci_low"] <= 0 <= c["delta_ci_high"]) == (c["p_value"] >= 0.05)


def test_sentences_say_who_wins_or_how_large_a_difference_the_items_could_see():
    won = {"label_a": "A", "label_b": "B", "delta": -0.122, "delta_ci_low": -0.2, "delta_ci_high": -0.044,
           "p_adjusted": 0.0021, "significant": True, "items": 30, "mde": 0.086, "top_two": False}
    assert sentence(won, "holm") == ("B beats A by 0.122 (95% CI 0.044 to 0.200, p=0.0021 after Holm); "
                                     "on 30 items a difference of 0.086 is found 4 times in 5.")
    small = {**won, "delta": 0.05, "p_adjusted": 0.41, "significant": False, "mde": 0.219, "top_two": True}
    # below the MDE a difference is found less often, not never: the sentence says so
    assert sentence(small, "bh", where=" on gsm8k (exact_match)") == (
        "Best against runner-up: too few items to tell A from B on gsm8k (exact_match) reliably: 30 items find a "
        "difference of 0.219 4 times in 5, smaller ones less often (A − B = +0.050, p=0.41 after Benjamini-Hochberg).")
    large = {**small, "delta": 0.25, "top_two": False}
    assert sentence(large, "holm") == ("A and B differ by 0.250, but not significantly (A − B = +0.250, p=0.41 "
                                       "after Holm); 30 items find a difference of 0.219 4 times in 5.")
    none = {**small, "mde": None, "top_two": False}
    assert sentence(none, "none") == ("Too few items to tell A from B: with 30 items no difference would reliably "
                                      "be seen (A − B = +0.050, p=0.41 uncorrected).")


def test_a_sentence_opening_with_a_label_quotes_it_exactly_as_it_is():
    from madeval.leaderboard.sentences import capitalised

    # before: "Simple_voting beats majority_consensus", an identifier that names nothing
    won = {"label_a": "simple_voting", "label_b": "majority_consensus", "delta": 0.122, "delta_ci_low": 0.044,
           "delta_ci_high": 0.2, "p_adjusted": 0.0021, "significant": True, "items": 30, "mde": None, "top_two": False}
    assert sentence(won, "holm") == (
        "simple_voting beats majority_consensus by 0.122 (95% CI 0.044 to 0.200, p=0.0021 after Holm).")
    assert sentence({**won, "delta": -0.122, "delta_ci_low": -0.2, "delta_ci_high": -0.044}, "holm").startswith(
        "majority_consensus beats simple_voting by 0.122"
    )
    apart = {**won, "delta": 0.3, "significant": False, "p_adjusted": 0.06, "mde": 0.25}
    assert sentence(apart, "none") == (
        "simple_voting and majority_consensus differ by 0.300, but not significantly "
        "(simple_voting − majority_consensus = +0.300, p=0.06 uncorrected); 30 items find a "
        "difference of 0.250 4 times in 5."
    )
    assert sentence({**apart, "top_two": True}, "none").startswith(
        "Best against runner-up: simple_voting and majority_consensus")
    for label in ("3 agents", '"fast" run', "<b>x</b>", "ßig", "élan", "Already", "日本", "baseline_direct"):
        assert sentence({**won, "label_a": label}, "holm").startswith(f"{label} beats majority_consensus"), label
    # the board's own words still open with a capital
    small = {**won, "delta": 0.05, "p_adjusted": 0.41, "significant": False, "mde": None}
    assert sentence(small, "holm").startswith("Too few items to tell simple_voting from majority_consensus")
    assert capitalised("ǆemal") == "ǅemal" and capitalised("") == "" and capitalised("x") == "X"


def test_compare_all_keeps_the_vs_ref_column(sweep):
    result, _ = sweep
    board = build_leaderboard(result.folder, LeaderboardOptions(compare="all"))
    scores = board["item_scores"]["arith_mc"]["accuracy"]
    reference = board["options"]["reference"]
    others = [r for r in board["rows"] if not r["reference"]]
    assert len(others) == 2
    for row in others:  # this row minus the reference, whichever way round the pair was tested
        items = sorted(scores[reference])
        expected = statistics.fmean(scores[row["config"]][k] - scores[reference][k] for k in items)
        assert row["delta"] == pytest.approx(expected) and row["p_adjusted"] is not None
        line = next(text for text in markdown(board).splitlines() if text.startswith(f"| {row['label']} |"))
        assert f"{row['delta']:+.3f}" in line and "after Holm" in line
    assert len(board["comparisons"]) == 3 and sum(c["top_two"] for c in board["comparisons"]) == 1


def test_a_merged_board_has_its_own_title_and_a_charts_command_that_works(sweep, generated_tasks, tmp_path):
    first, _ = sweep
    with simulate(tasks=generated_tasks.values(), accuracy=0.7) as sim:
        other = {**SWEEP, "name": "another sweep", "runs": [{"agents": 2, "decider": "counting", "name": "pair"}],
                 "base_url": sim.base_url, "output_path": str(tmp_path / "second run")}
        second, _ = run_quietly(build_settings(other))
    out = tmp_path / "merged board"
    done = madeval_in_process("leaderboard", "show", str(first.folder), str(second.folder), "-o", str(out))
    assert done.returncode == 0, done.stderr
    board = json.loads((out / "leaderboard.json").read_text())
    assert board["title"] == f"madeval leaderboard: {first.folder.name} + {second.folder.name}"
    page = (out / "leaderboard.html").read_text()
    import html

    hint = html.unescape(page.split("No charts drawn: <code>")[1].split("</code>")[0])
    assert hint.startswith("madeval leaderboard show ") and "," not in hint
    pasted = madeval_in_process(*shlex.split(hint)[1:])
    assert pasted.returncode == 0, pasted.stderr
    assert (out / "charts" / "score.png").stat().st_size > 10_000


def test_a_single_run_s_charts_command_names_its_folder_and_where_the_page_is(sweep, tmp_path):
    folder = sweep[0].folder
    assert f"madeval leaderboard show {shlex.quote(str(folder))} --charts" in (folder / "leaderboard.html").read_text()
    write_outputs(build_merged_leaderboard([folder]), tmp_path / "a copy")
    page = (tmp_path / "a copy" / "leaderboard.html").read_text()
    import html

    assert html.escape(f"madeval leaderboard show {shlex.quote(str(folder))} -o "
                       f"{shlex.quote(str(tmp_path / 'a copy'))} --charts") in page
