"""The leaderboard's dynamics (madeval.dynamics.board) on run folders of hand-written debates, every
figure computed by hand: early stops carried forward, unparsed turns, repeats, one agent, metrics
without dynamics, merged boards; and how they are shown (Markdown, HTML)."""

from __future__ import annotations

import json

import pytest

from dynamics_records import debate_record, write_run
from madeval.analysis.stats import mcnemar_exact
from madeval.dynamics.board import NO_TRANSCRIPTS, NOT_BINARY, SINGLE_AGENT
from madeval.dynamics.render import html_section as dynamics_html
from madeval.dynamics.render import markdown as dynamics_markdown
from madeval.leaderboard import LeaderboardOptions, build_leaderboard, build_merged_leaderboard, write_outputs

A, B, C = "A", "B", "C"


def four_debates(config="debate"):
    """Four 3-agent debates on items gold A (see the test below for what each one does)."""
    return [
        debate_record([[(0, A), (1, B), (2, A)], [(0, B), (1, B), (2, A)], [(0, B), (1, B), (2, B)]],
                      final=0.0, config=config, item="i1"),
        debate_record([[(0, A), (1, A), (2, C)], [(0, C), (1, C), (2, C)], [(0, A), (1, A), (2, C)]],
                      final=1.0, config=config, item="i2"),
        debate_record([[(0, A), (1, A), (2, A)]], final=1.0, config=config, item="i3"),  # stopped after turn 1
        debate_record([[(0, None), (1, None), (2, None)], [(0, None), (1, A), (2, B)]],
                      final=1.0, config=config, item="i4"),
    ]


def only(board, **wanted):
    found = [e for e in board["dynamics"] if all(e.get(k) == v for k, v in wanted.items())]
    assert len(found) == 1, found
    return found[0]


def test_every_figure_of_a_configuration_matches_the_hand_count(tmp_path):
    folder = write_run(tmp_path / "run", {"debate": "debate"}, four_debates())
    entry = only(build_leaderboard(folder), config="debate", metric="accuracy")
    # votes per turn (carried forward): i1 R W W, i2 R W R, i3 R R R, i4 W R R
    assert entry["items"] == 4 and entry["debates"] == 4 and entry["turns"] == 3
    assert entry["first_turn_vote"] == 0.75
    assert entry["vote_by_turn"] == [0.75, 0.5, 0.75]
    assert entry["final"] == 0.75
    # unanimous per turn: i1 F F T, i2 F T F, i3 T T T, i4 F F F
    assert entry["unanimous_by_turn"] == [0.25, 0.5, 0.5]
    assert entry["agent_transitions"] == {"correct_to_correct": 5, "correct_to_wrong": 2, "wrong_to_correct": 1,
                                          "wrong_to_wrong": 4}
    assert (entry["drift"], entry["recovered"], entry["oracle_gap"]) == (0.5, 0.25, 0.25)
    assert entry["unparsed"] == 4
    versus = entry["final_vs_first_turn_vote"]
    # final [0, 1, 1, 1] against the first-turn vote [1, 1, 1, 0]: one item for the debate, one against
    expected = mcnemar_exact([0, 1, 1, 1], [1, 1, 1, 0])
    assert versus["test"] == "mcnemar" and versus["delta"] == 0.0
    assert versus["p_value"] == expected.p_value == 1.0
    assert versus["items"] == 4 and "mde" in versus
    assert "reason" not in entry


def test_repeats_are_averaged_within_an_item_and_the_test_follows_the_scores(tmp_path):
    records = [
        # item x: repeat 0 first-turn vote right, decision wrong; repeat 1 both right
        debate_record([[(0, A), (1, A), (2, B)], [(0, B), (1, B), (2, B)]], final=0.0, item="x", repeat=0),
        debate_record([[(0, A), (1, A), (2, A)]], final=1.0, item="x", repeat=1),
        # item y: both repeats wrong in turn 1, right at the end
        debate_record([[(0, B), (1, B), (2, A)], [(0, A), (1, A), (2, A)]], final=1.0, item="y", repeat=0),
        debate_record([[(0, C), (1, C), (2, A)], [(0, A), (1, A), (2, C)]], final=1.0, item="y", repeat=1),
    ]
    entry = only(build_leaderboard(write_run(tmp_path / "run", {"c": "c"}, records)), metric="accuracy")
    assert entry["items"] == 2 and entry["debates"] == 4
    assert entry["final"] == (0.5 + 1.0) / 2
    assert entry["first_turn_vote"] == (1.0 + 0.0) / 2
    assert entry["vote_by_turn"] == [0.5, (0.5 + 1.0) / 2]
    assert entry["unanimous_by_turn"] == [0.25, (1.0 + 0.5) / 2]
    assert entry["drift"] == 0.25 and entry["recovered"] == 0.0 and entry["oracle_gap"] == 0.25
    assert entry["final_vs_first_turn_vote"]["test"] == "permutation"  # item means of 0.5 are not 0/1
    assert entry["final_vs_first_turn_vote"]["delta"] == pytest.approx(0.25)


def test_one_agent_has_transitions_but_no_vote_comparison(tmp_path):
    records = [debate_record([[(0, A)], [(0, B)]], agents=1, final=0.0, config="solo", item="i1"),
               debate_record([[(0, B)], [(0, A)]], agents=1, final=1.0, config="solo", item="i2")]
    board = build_leaderboard(write_run(tmp_path / "run", {"solo": "solo"}, records))
    entry = only(board, metric="accuracy")
    assert entry["agent_transitions"] == {"correct_to_correct": 0, "correct_to_wrong": 1, "wrong_to_correct": 1,
                                          "wrong_to_wrong": 0}
    assert entry["reason"] == SINGLE_AGENT
    assert entry["first_turn_vote"] is None and entry["vote_by_turn"] is None
    assert entry["unanimous_by_turn"] is None and entry["final_vs_first_turn_vote"] is None
    assert (entry["final"], entry["drift"], entry["oracle_gap"]) == (0.5, 0.5, 0.5)
    text = dynamics_markdown(board["dynamics"])
    assert "| solo | t | accuracy | 2 | – | 0.500 | – | – | – | – | – | 1 | 1 | 50.0% | 0.0% | 50.0% | 0 |" in text
    assert f"No vote comparison for t, accuracy (solo): {SINGLE_AGENT}." in text
    assert ("solo on t (accuracy, 2 items): final 0.500; no vote to compare (one agent); agents right→wrong 1, "
            "wrong→right 1; drift 50.0%, recovered 0.0%; oracle gap 50.0%; 0 unparsed answers.") in dynamics_html(
                board["dynamics"])


def test_metrics_without_dynamics_say_why(tmp_path):
    scores = [{"accuracy": 1.0, "f1": 0.5, "answer_entropy": 0.0}, {"accuracy": 0.0, "f1": 1.0, "answer_entropy": 1.0}]
    records = [debate_record([[(0, A), (1, A), (2, B)]], item=f"i{n}", metrics=m) for n, m in enumerate(scores)]
    board = build_leaderboard(write_run(tmp_path / "run", {"c": "c"}, records))
    assert only(board, metric="f1") == {"config": "c", "label": "c", "task": "t", "metric": "f1", "items": 2,
                                        "reason": NOT_BINARY}
    assert only(board,
                metric="answer_entropy")["reason"] == "metric answer_entropy scores the whole debate, not one answer"
    assert only(board, metric="accuracy")["first_turn_vote"] == 1.0
    text = (tmp_path / "run" / "leaderboard.md")
    write_outputs(board, tmp_path / "run")
    assert f"No dynamics for t, f1 (c): {NOT_BINARY}." in text.read_text()


def test_records_without_transcripts_have_no_dynamics(tmp_path):
    records = four_debates()
    for record in records:
        del record["transcript"]
    board = build_leaderboard(write_run(tmp_path / "run", {"debate": "debate"}, records))
    assert only(board, metric="accuracy")["reason"] == NO_TRANSCRIPTS
    # nothing to explain: the section is its title and why
    assert dynamics_markdown(board["dynamics"]) == (f"Did the debate beat its first-turn vote?\n\n"
                                                    f"No dynamics for t, accuracy (debate): {NO_TRANSCRIPTS}.\n")


def test_a_merged_board_has_the_dynamics_of_each_run(tmp_path):
    first = write_run(tmp_path / "one", {"debate": "debate"}, four_debates())
    second = write_run(tmp_path / "two", {"other": "other"}, four_debates("other")[:2])
    merged = build_merged_leaderboard([first, second])
    assert only(merged, config="debate")["vote_by_turn"] == [0.75, 0.5, 0.75]
    other = only(merged, config="other")
    assert other["items"] == 2 and other["vote_by_turn"] == [1.0, 0.0, 0.5] and other["final"] == 0.5
    assert other["final_vs_first_turn_vote"]["delta"] == -0.5


def test_the_section_is_shown_in_markdown_and_html_with_labels_as_text(tmp_path):
    label = "<b>debate</b> | x"
    folder = write_run(tmp_path / "run", {"debate": label}, four_debates())
    board = build_leaderboard(folder, LeaderboardOptions())
    write_outputs(board, folder)
    markdown = (folder / "leaderboard.md").read_text()
    assert "Did the debate beat its first-turn vote?" in markdown
    shown = r"\<b>debate\</b> \| x"  # escaped as the board's own cells are: the pipe no longer splits the cell
    line = next(line for line in markdown.splitlines() if line.startswith(f"| {shown} | t | accuracy | 4 |"))
    assert "| 0.750 | 0.750 | +0.000 | McNemar, p=1 |" in line
    assert "| 0.750 / 0.500 / 0.750 | 25.0% → 50.0% | 2 | 1 | 50.0% | 25.0% | 25.0% | 4 |" in line
    page = (folder / "leaderboard.html").read_text()
    assert "<h2>Did the debate beat its first-turn vote?</h2>" in page
    assert ("<li>&lt;b&gt;debate&lt;/b&gt; | x on t (accuracy, 4 items): first-turn vote 0.750 → final 0.750 "
            "(+0.000, McNemar p=1, MDE –); vote by turn 0.750 / 0.500 / 0.750; unanimous 25.0% → 50.0%; "
            "agents right→wrong 2, wrong→right 1; drift 50.0%, recovered 25.0%; oracle gap 25.0%; "
            "4 unparsed answers.</li>") in page
    assert "<b>debate</b>" not in page
    stored = json.loads((folder / "leaderboard.json").read_text())
    assert stored["dynamics"] == json.loads(json.dumps(board["dynamics"]))
