"""The HTML page of a merged board with a CI history, in headless Chromium at 1400 and 800 px."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from browser import run_chromium, screenshots
from helpers import run_quietly
from madeval.cli.main import cli
from madeval.leaderboard import build_leaderboard, build_merged_leaderboard, write_outputs
from madeval.leaderboard.history import read
from madeval.settings.config import DebateConfig, RunSettings


def small_run(sim, folder, config, limit):
    settings = RunSettings(base_url=sim.base_url, tasks=["arith_mc"], limit=limit, output_path=str(folder),
                           configurations=[config])
    return run_quietly(settings)[0].folder


def history_of(run, folder):
    """Four checks of ``run`` against itself; the third on a copy with 8 right answers made wrong."""
    lowered = folder / "lowered"
    shutil.copytree(run, lowered)
    records = [json.loads(line) for line in (lowered / "records.jsonl").read_text().splitlines()]
    right = [r for r in records if r["metrics"]["accuracy"] == 1.0][:8]
    assert len(right) == 8
    for record in right:
        record["metrics"]["accuracy"] = 0.0
    (lowered / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (lowered / "board.json").write_text(json.dumps(build_leaderboard(lowered)))
    path = folder / "history.jsonl"
    for index in range(4):
        board = lowered / "board.json" if index == 2 else run / "leaderboard.json"
        CliRunner().invoke(cli, ["leaderboard", "check", str(board), "--baseline", str(run / "leaderboard.json"),
                                 "--history", str(path), "--commit", f"commit{index}"], catch_exceptions=False)
    return read(path)[0]


def test_across_page_shows_the_merged_board_and_the_history_in_chromium(sim, tmp_path):
    first = small_run(sim, tmp_path / "first", DebateConfig(name="two agents", agents=2, max_turns=2), 24)
    second = small_run(sim, tmp_path / "second", DebateConfig(name="three agents", agents=3, max_turns=2), 16)
    entries = history_of(first, tmp_path)
    assert [i for i, e in enumerate(entries) if not e["passed"]] == [2]
    board = build_merged_leaderboard([first, second])
    write_outputs(board, tmp_path / "merged", entries)
    page = tmp_path / "merged" / "leaderboard.html"
    text = page.read_text()
    assert "<h2>Runs merged</h2>" in text and f"<code>{first}</code>: two agents" in text
    assert "<th>units</th>" in text and "<h2>History of checks</h2>" in text
    assert text.count("class='sig drop'") == 1 and "alt='history'" in text  # the drop, red

    dom = run_chromium(page, tmp_path / "profile-dom", "--dump-dom")
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert 'data-sortable="ready"' in dom.stdout and "Uncaught" not in dom.stderr
    screenshots(page, tmp_path, height=3200)
