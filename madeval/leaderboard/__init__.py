"""Leaderboards: tables, paired significance tests, charts, an HTML page and regression checks.

``build_leaderboard(folder, options)`` turns a run folder into a leaderboard dictionary (the
content of ``leaderboard.json``); ``write_outputs`` writes it as Markdown, CSV, JSON, a
self-contained HTML page and, when asked (the ``charts`` option), charts. One module per job:

* :mod:`.data` reads a run folder (records and rescored records);
* :mod:`.stats` holds the tests, corrections and intervals (checked against scipy/statsmodels);
* :mod:`.compare` pairs configurations on shared items and corrects each family;
* :mod:`.groups` says how a group row combines its tasks;
* :mod:`.table` builds the rows; :mod:`.render` prints them; :mod:`.charts` and :mod:`.html` draw;
* :mod:`.regression` checks a run against a stored baseline leaderboard.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..records import write_json_atomically
from .data import load_run
from .html import page
from .options import LeaderboardOptions
from .render import comparisons_csv, csv_text, markdown

OUTPUT_FILES = ("leaderboard.md", "leaderboard.csv", "comparisons.csv", "leaderboard.json", "leaderboard.html")


def build_leaderboard(folder: str | Path, options: LeaderboardOptions | None = None) -> dict[str, Any]:
    """The leaderboard of the run in ``folder``."""
    from .table import build  # scipy, behind it, takes seconds to import: only when a board is built

    return build(load_run(folder, transcripts=False), options or LeaderboardOptions())


def write_outputs(board: dict[str, Any], folder: str | Path) -> list[Path]:
    """Write the board into ``folder``: Markdown, CSV (rows; comparisons), JSON and HTML, and
    ``charts/`` when the board's options ask for charts (``charts: true``, ``--charts``)."""
    folder = Path(folder)
    (folder / "leaderboard.md").write_text(markdown(board), encoding="utf-8")
    (folder / "leaderboard.csv").write_text(csv_text(board), encoding="utf-8")
    (folder / "comparisons.csv").write_text(comparisons_csv(board), encoding="utf-8")
    write_json_atomically(folder / "leaderboard.json", board)
    charts = []
    if board["options"]["charts"]:
        from .charts import draw_all  # matplotlib takes a second or more to import: only when drawn

        charts = draw_all(board, folder / "charts")
    (folder / "leaderboard.html").write_text(page(board, charts), encoding="utf-8")
    return [folder / name for name in OUTPUT_FILES] + charts


__all__ = ["LeaderboardOptions", "build_leaderboard", "write_outputs"]
