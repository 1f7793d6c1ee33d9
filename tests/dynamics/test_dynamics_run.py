"""The dynamics of a real run: a sweep on the simulator with conformity, checked against the deciders'
own plurality count (madeval.builtins.counting) and the transcripts' trajectories; the chart is drawn."""

from __future__ import annotations

import pytest

from helpers import run_quietly
from madeval.builtins.counting import plurality
from madeval.core.transcript import Transcript
from madeval.settings.config import DebateConfig, RunSettings
from madeval.simulator import simulate

CONFIGS = [
    DebateConfig(name="count-3", paradigm="collective_refinement", decider="counting", max_turns=3),
    DebateConfig(name="count-1", paradigm="collective_refinement", decider="counting", max_turns=1),
    DebateConfig(name="consensus", paradigm="memory", decider="majority_consensus", max_turns=3),
    DebateConfig(name="solo", paradigm="collective_refinement", decider="counting", agents=1, max_turns=2),
]


@pytest.fixture(scope="module")
def conformity_run(generated_tasks, tmp_path_factory):
    folder = tmp_path_factory.mktemp("dynamics") / "run"
    with simulate(tasks=generated_tasks.values(), accuracy=0.55, conformity=0.7) as sim:
        settings = RunSettings(base_url=sim.base_url, configurations=CONFIGS, tasks=["arith_mc"], limit=12,
                               repeats=1, cache="off", output_path=str(folder), leaderboard={"charts": True})
        result, printed = run_quietly(settings)
    return result, printed


def entry_of(board, name):
    return next(e for e in board["dynamics"] if e["label"] == name and e["metric"] == "accuracy")


def test_the_vote_of_each_turn_is_the_deciders_own_plurality(conformity_run):
    result, _ = conformity_run
    from madeval.records.folder import read_records

    records = list(read_records(result.folder))
    board = result.board
    ids = {c["label"]: cid for cid, c in board["configurations"].items()}
    for name in ("count-3", "count-1", "consensus"):
        mine = [r for r in records if r["unit"]["config"] == ids[name]]
        entry = entry_of(board, name)
        longest = max(r["turns"] for r in mine)
        right_by_turn = [0] * longest
        unanimous_by_turn = [0] * longest
        for record in mine:  # the agents speak in agent order, so the decider's tie rule is ours
            rows = Transcript.from_dict(record["transcript"]).trajectory()
            for turn in range(longest):
                row = rows[min(turn, len(rows) - 1)]
                winner, _, _ = plurality(row)
                right_by_turn[turn] += winner == record["target"]
                unanimous_by_turn[turn] += None not in row and len(set(row)) == 1
        assert entry["vote_by_turn"] == pytest.approx([n / len(mine) for n in right_by_turn])
        assert entry["unanimous_by_turn"] == pytest.approx([n / len(mine) for n in unanimous_by_turn])
        assert entry["first_turn_vote"] == entry["vote_by_turn"][0]
        spoke = sum(len({m["agent"] for m in r["transcript"]["messages"]}) for r in mine)
        assert sum(entry["agent_transitions"].values()) == spoke  # every agent that spoke, once
        row = next(r for r in board["rows"] if r["label"] == name and r["metric"] == "accuracy")
        assert entry["final"] == pytest.approx(row["score"]) and entry["items"] == row["items"] == 12
    # counting after the last turn decides by that turn's vote; after turn 1, by the first-turn vote
    assert entry_of(board, "count-3")["final"] == pytest.approx(entry_of(board, "count-3")["vote_by_turn"][-1])
    one = entry_of(board, "count-1")
    assert one["final"] == one["first_turn_vote"] and one["final_vs_first_turn_vote"]["delta"] == 0.0
    assert one["drift"] == 0.0 and one["agent_transitions"]["correct_to_wrong"] == 0


def test_conformity_makes_the_agents_agree(conformity_run):
    entry = entry_of(conformity_run[0].board, "count-3")
    assert entry["unanimous_by_turn"][-1] > entry["unanimous_by_turn"][0]
    assert entry["final_vs_first_turn_vote"]["test"] == "mcnemar"


def test_one_agent_has_no_vote_comparison_and_every_output_shows_the_section(conformity_run):
    result, printed = conformity_run
    solo = entry_of(result.board, "solo")
    assert solo["final_vs_first_turn_vote"] is None and sum(solo["agent_transitions"].values()) == 12
    assert "Did the debate beat its first-turn vote?" not in printed  # the terminal shows table and sentences
    assert "Did the debate beat its first-turn vote?" in (result.folder / "leaderboard.md").read_text()
    assert "Did the debate beat its first-turn vote?" in (result.folder / "leaderboard.html").read_text()
    chart = result.folder / "charts" / "dynamics.png"
    assert chart.stat().st_size > 10_000


def test_the_charts_title_and_legend_lie_inside_the_figure(conformity_run):
    from madeval.dynamics.chart import dynamics_figure
    from madeval.leaderboard.charts import style

    board = conformity_run[0].board
    figure = dynamics_figure(board, style)
    figure.draw_without_rendering()  # runs the constrained layout
    frame = figure.bbox
    for box in (figure._suptitle.get_window_extent(), figure.legends[0].get_window_extent()):
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1
    (ax,) = figure.axes
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels == ["1", "2", "3", "final"]  # the longest debate of the board, then the decision
    lines = {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
    three = next(e for e in board["dynamics"] if e["label"] == "count-3")
    assert list(lines["count-3"].get_ydata()) == three["vote_by_turn"]
    assert "solo" not in lines  # one agent: no vote to draw
