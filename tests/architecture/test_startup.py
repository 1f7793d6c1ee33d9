"""Start-up and wrap-up stay light: a run imports its heavy libraries only when it needs them.

datasets (a hub or JSONL task), openai (the ``openai`` transport), scipy.stats and statsmodels (a
paired test), matplotlib (charts, drawn only when asked) each take from half a second to seconds to
import; a one-item run needs none of them. Each check starts a fresh interpreter, since this test
session has long imported them all. The speed itself is measured by ``python -m bench startup``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from madeval.testing import HEAVY_MODULES as HEAVY


def imported_after(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; return the heavy modules it left loaded, and its output."""
    probe = textwrap.dedent(code) + textwrap.dedent(f"""
        import json, sys
        print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))
    """)
    env = {**os.environ, "MADEVAL_LOAD_PLUGINS": ""}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_importing_madeval_and_the_run_path_loads_no_heavy_library():
    loaded = imported_after("""
        import madeval, madeval.cli.main, madeval.run.engine, madeval.evaluation, madeval.run.scheduler
        import madeval.llm.client, madeval.llm.transports, madeval.leaderboard, madeval.leaderboard.table
        import madeval.task.sources
    """)
    assert loaded == []


def test_a_one_item_run_loads_no_heavy_library_and_draws_no_chart_unless_asked(sim, tmp_path):
    """A whole run through the command line (default transport, a generated task, 0/1 scores):
    none of the heavy libraries is imported, no chart is drawn and the page says how to draw them;
    ``madeval leaderboard show --charts`` then draws them into the page."""
    folder = tmp_path / "run"
    loaded = imported_after(f"""
        from madeval.cli.main import main
        try:
            main(["--tasks", "arith_mc", "--limit", "1", "--base-url", {sim.base_url!r}, "--cache", "off",
                  "--no-progress", "--output-path", {str(folder)!r}])
        except SystemExit as done:
            assert done.code in (0, None), done.code
    """)
    assert loaded == []
    assert json.loads((folder / "leaderboard.json").read_text())["options"]["charts"] is False
    assert not (folder / "charts").exists()
    page = (folder / "leaderboard.html").read_text()
    assert f"madeval leaderboard show {folder} --charts" in page and "<img" not in page

    shown = subprocess.run([sys.executable, "-m", "madeval", "leaderboard", "show", str(folder), "--charts"],
                           capture_output=True, text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr[-2000:]
    assert (folder / "charts" / "score.png").stat().st_size > 5_000
    page = (folder / "leaderboard.html").read_text()
    assert "<img alt='score' src='data:image/png;base64," in page and "No charts drawn" not in page
