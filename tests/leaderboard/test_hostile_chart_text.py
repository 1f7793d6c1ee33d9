"""Text is text in charts (issue 25, item 7): a ``$...$`` in a configuration label or a task name is
drawn as written, never read by matplotlib as TeX math (where a malformed formula ended the run
after every debate had run, with no leaderboard.html)."""

from __future__ import annotations

import textwrap

import pytest

from helpers import run_quietly, settings_for

LABEL = r"cost $\frac{1}{$ per item"  # a malformed formula between two dollars: mathtext raises on it
TASK = "price_$x^2$"


@pytest.fixture
def dollar_task(tmp_path, generated_tasks):
    """arith_mc's items under a task name with dollars in it."""
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "dollar.yaml").write_text(textwrap.dedent(f"""
        task: "{TASK}"
        include: {generated_tasks["arith_mc"].path}
    """))
    return folder


def test_hostile_dollar_label_and_task_name_draw_charts(sim, tmp_path, dollar_task):
    settings = settings_for(sim.base_url, tmp_path, limit=3, cache="off", name=LABEL, tasks=[TASK],
                            include_path=[str(dollar_task)], leaderboard={"charts": True})
    result, printed = run_quietly(settings)
    folder = result.folder
    assert result.outcome.finished == 3
    assert (folder / "leaderboard.html").is_file()
    for chart in ("score", "turns", "decisions", "llm-time"):
        assert (folder / "charts" / f"{chart}.png").stat().st_size > 0
        svg = (folder / "charts" / f"{chart}.svg").read_text()
        assert "<svg" in svg
    from madeval.util.shown_text import markdown_cell

    assert markdown_cell(LABEL) in printed  # the Markdown table escapes its backslash: shown as written


def test_hostile_every_chart_text_is_plain_text(tmp_path):
    """Every Text artist of every chart (titles, ticks, legends, annotations) has mathtext off."""
    import matplotlib
    from matplotlib.text import Text

    from madeval.leaderboard import charts

    made = []
    real_save = charts._save

    def keep(figure, folder, name):
        made.append(figure)
        return real_save(figure, folder, name)

    board = board_with_dollars()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(charts, "_save", keep)
        written = charts.draw_all(board, tmp_path / "charts")
    assert len(written) == len(made) >= 4
    assert matplotlib.rcParams["text.parse_math"] is True  # the setting is the charts' own, not global
    for figure in made:
        texts = [t for t in figure.findobj(Text) if t.get_text()]
        assert any("$" in t.get_text() for t in texts)
        assert all(not t.get_parse_math() for t in texts), [t.get_text() for t in texts if t.get_parse_math()]


def board_with_dollars() -> dict:
    row = {"config": "c1", "label": LABEL, "scope": "task", "task": TASK, "metric": "accuracy", "score": 0.5,
           "ci_low": 0.2, "ci_high": 0.8, "significant": False, "decision_success_rate": 0.5,
           "llm_s_per_item": 1.0, "turns_histogram": {"1": 2, "2": 1}, "turns_decided": {"1": 1},
           "mean_turns": 1.3, "tokens_per_item": 100.0, "calls_per_item": 3.0, "units": 3, "items": 3}
    other = {**row, "config": "c2", "label": "$$", "score": 0.7, "tokens_per_item": 300.0, "calls_per_item": 9.0}
    return {"rows": [row, other], "configurations": {"c1": {"label": LABEL}, "c2": {"label": "$$"}},
            "reference": "c1"}
