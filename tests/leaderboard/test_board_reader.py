"""What a reader sees on the board's page and charts: a significant gain is not coloured like a
drop, the history chart's title is not clipped, and the demo's board links the debates it wrote."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg

from helpers import run_quietly
from madeval.leaderboard import LeaderboardOptions, build_leaderboard
from madeval.leaderboard.history import FORMAT
from madeval.leaderboard.history_chart import figure
from madeval.leaderboard.html import STYLE, page
from madeval.records.run_file import VIEWER_FILE
from madeval.settings.config import DebateConfig, RunSettings, build_settings, read_config_file
from madeval.simulator import AgentProfile, simulate

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.yaml"


@pytest.fixture(scope="module")
def strong_and_weak(generated_tasks, tmp_path_factory):
    """A run of a strong (accuracy 0.95) and a weak (0.3) configuration on 30 items."""
    folder = tmp_path_factory.mktemp("colours") / "run"
    profiles = {"strong": AgentProfile(accuracy=0.95), "weak": AgentProfile(accuracy=0.3)}
    configurations = [DebateConfig(name=name, max_turns=2, agent_models=[name] * 3) for name in profiles]
    with simulate(tasks=generated_tasks.values(), profiles=profiles) as running:
        run_quietly(RunSettings(base_url=running.base_url, configurations=configurations, tasks=["arith_mc"],
                                limit=30, output_path=str(folder)))
    return folder


def marked_cells(html_text: str, label: str) -> list[str]:
    """The classes of the marked cells of ``label``'s row in the board's table."""
    (row,) = re.findall(rf"<tr[^>]*><td[^>]*>{label}</td>.*?</tr>", html_text.split("<h2>Cost")[0])
    return re.findall(r"<td[^>]* class='(sig[^']*)'", row)


def colour(rule: str) -> str:
    return re.search(rf"td\.{rule}\{{color:(#[0-9a-f]+)\}}", STYLE).group(1)


def test_a_significant_gain_is_green_and_a_drop_red(strong_and_weak):
    gain = build_leaderboard(strong_and_weak, LeaderboardOptions(reference="weak"))
    (strong,) = [r for r in gain["rows"] if r["label"] == "strong"]
    assert strong["significant"] and strong["delta"] > 0
    assert marked_cells(page(gain, []), "strong") == ["sig gain"]  # before: 'sig', red like a drop
    drop = build_leaderboard(strong_and_weak, LeaderboardOptions(reference="strong"))
    (weak,) = [r for r in drop["rows"] if r["label"] == "weak"]
    assert weak["significant"] and weak["delta"] < 0
    assert marked_cells(page(drop, []), "weak") == ["sig drop"]
    assert colour("sig.gain") == "#1a7f37" and colour("sig.drop") == "#b00020"


def entry(commit: str) -> dict:
    row = {"label": "three agents", "task": "arith_mc", "metric": "accuracy", "bounded": True, "score": 0.6,
           "ci_low": 0.45, "ci_high": 0.75, "items": 40, "baseline": 0.6, "delta": 0.0, "p_adjusted": 1.0,
           "status": "ok"}
    return {"format": FORMAT, "commit": commit, "time": "2025-01-01T00:00:00+00:00", "passed": True, "alpha": 0.05,
            "correction": "holm", "rows": [row]}


@pytest.mark.parametrize("count", [1, 2, 5, 12])
def test_the_history_chart_s_title_fits_its_figure(count):
    drawn = figure([entry(f"{n:040x}") for n in range(count)])
    canvas = FigureCanvasAgg(drawn)
    canvas.draw()
    box = drawn._suptitle.get_window_extent(canvas.get_renderer())
    assert 0 <= box.x0 and box.x1 <= drawn.bbox.width  # before: 85 characters on 6 inches, both ends cut
    assert "significant drop against the baseline" in drawn._suptitle.get_text().replace("\n", " ")


def test_the_demo_s_board_links_the_debates_it_wrote(sim, tmp_path):
    folder = tmp_path / "demo"
    settings = build_settings({**read_config_file(DEMO), "base_url": sim.base_url, "output_path": str(folder),
                               "view": True})
    _, printed = run_quietly(settings)
    assert (folder / VIEWER_FILE).is_file()
    assert f"<a href='{VIEWER_FILE}'>" in (folder / "leaderboard.html").read_text()
    assert f"Each debate, turn by turn: {folder / VIEWER_FILE} (10 debates; the board links it)" in printed
