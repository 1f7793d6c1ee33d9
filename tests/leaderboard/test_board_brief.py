"""A board that leads with its conclusion (issue 31, item 4): a run and ``leaderboard show`` print the
table and one sentence per comparison, about 300 words for four configurations; the column legend,
the cost, the dynamics and the methods are printed on request (``--explain``) and stay in
leaderboard.md and the page, where the sentences come right after the table (the page: before it)."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from helpers import run_quietly
from madeval.cli.leaderboard_cmd import leaderboard
from madeval.settings.config import build_settings
from madeval.simulator import simulate

#: Four configurations on 40 generated items: three deciders of a three-agent debate and one model alone.
FOUR = {
    "name": "four configurations",
    "tasks": ["arith_mc"],
    "limit": 40,
    "seed": 7,
    "cache": "off",
    "common": {"paradigm": "memory", "agents": 3, "max_turns": 3},
    "grid": {"decider": ["majority_consensus", "unanimity_consensus", "simple_voting"]},
    "runs": [{"preset": "baseline_direct"}],
}
#: What only the whole board says (leaderboard.md, the page, --explain).
EXPLAINED = ("Columns:", "Cost and accuracy", "Did the debate beat its first-turn vote?",
             "How the numbers were computed")


def words(text: str) -> int:
    """Words as a reader counts them: whitespace-separated, a Markdown table's own marks (``|``,
    ``|---|---:|``) not counted."""
    return sum(1 for token in text.split() if not re.fullmatch(r"[|:\-]+", token))


@pytest.fixture(scope="module")
def changing_minds(generated_tasks):
    """A simulator whose agents change their minds now and then (the same one for a resumed run)."""
    with simulate(tasks=generated_tasks.values(), accuracy=0.6, conformity=0.3, persuasion=0.3) as sim:
        yield sim


@pytest.fixture(scope="module")
def four(changing_minds, tmp_path_factory):
    """The four-configuration sweep run on the simulator: (result, what the run printed)."""
    folder = tmp_path_factory.mktemp("brief") / "run"
    return run_quietly(build_settings({**FOUR, "base_url": changing_minds.base_url, "output_path": str(folder)}))


def test_a_run_prints_its_table_and_sentences_in_about_300_words(four):
    result, printed = four
    board = result.board
    assert len(board["rows"]) == 4 and len(board["conclusions"]) == 4
    lines = printed.splitlines()
    assert lines[0].startswith("| configuration | task | metric | score |")
    assert [line.split(" | ")[0] for line in lines[2:6]] == [f"| {r['label']}" for r in board["rows"]]
    said = printed[printed.index("In short:"):].split("\n\n")[0].splitlines()[1:]
    assert said == [f"- {sentence}" for sentence in board["conclusions"]]
    for part in EXPLAINED:
        assert part not in printed, part
    assert board["statement"] not in printed
    assert f"{result.folder / 'leaderboard.md'} and .html; --explain prints them." in printed
    assert lines[-1].startswith("160 units run, 0 already done, 0 failed")
    assert words(printed) <= 300, words(printed)


def test_leaderboard_md_puts_the_sentences_under_the_table_and_the_methods_last(four):
    result, _ = four
    written = (result.folder / "leaderboard.md").read_text()
    places = [written.index(part) for part in ("| configuration |", "In short:", *EXPLAINED)]
    assert places == sorted(places)
    assert written.rstrip().endswith(result.board["statement"])


def test_explain_prints_the_whole_board(four, changing_minds):
    """Run again into the same folder (every unit already done) with explain: leaderboard.md, then the
    summary line."""
    result, _ = four
    settings = build_settings({**FOUR, "base_url": changing_minds.base_url, "output_path": str(result.folder),
                               "explain": True})
    again, printed = run_quietly(settings)
    assert again.outcome.skipped == 160
    board, summary = printed.rsplit("\n\n", 1)
    assert board + "\n" == (result.folder / "leaderboard.md").read_text()
    assert summary.startswith("0 units run, 160 already done")


def test_leaderboard_show_prints_the_brief_and_with_explain_the_whole_board(four):
    result, printed = four
    runner = CliRunner()
    shown = runner.invoke(leaderboard, ["show", str(result.folder)], catch_exceptions=False)
    assert shown.exit_code == 0
    assert shown.output == printed.rsplit("\n\n", 1)[0] + "\n"  # the run's own board, without its summary line
    explained = runner.invoke(leaderboard, ["show", str(result.folder), "--explain"], catch_exceptions=False)
    assert explained.output == (result.folder / "leaderboard.md").read_text()


def test_the_page_says_what_it_found_before_its_tables_charts_and_methods(four):
    result, _ = four
    page = (result.folder / "leaderboard.html").read_text()
    found = page.index("<h2>In short</h2>")
    assert found < page.index("<table") < page.index("No charts drawn") < page.index("How the numbers were computed")
    for sentence in result.board["conclusions"]:
        assert page.index(sentence.split(":")[0]) > found
