"""Leaderboards: tables, paired significance tests, charts, an HTML page and regression checks.

``build_leaderboard(folder, options)`` turns a run folder into a leaderboard dictionary (the
content of ``leaderboard.json``); ``write_outputs`` writes it as Markdown, CSV, JSON, a
self-contained HTML page and, when asked (the ``charts`` option), charts. One module per job:

* :mod:`.data` reads a run folder (records and rescored records); :mod:`.merge` merges several;
* :mod:`.stats` holds the tests, corrections and intervals (checked against scipy/statsmodels);
* :mod:`.compare` pairs configurations on shared items and corrects each family;
* :mod:`.power` gives each comparison its minimum detectable effect (and ``sample-size --paired`` its n);
* :mod:`.cost` marks the cost-accuracy Pareto front;
* :mod:`.groups` says how a group row combines its tasks;
* :mod:`.table` builds the rows; :mod:`.render` prints them; :mod:`.charts` and :mod:`.html` draw;
* :mod:`.regression` checks a run against a stored baseline leaderboard.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from madeval.records import lock as folder_lock
from madeval.records.folder import write_json_atomically, writing
from madeval.records.run_file import VIEWER_FILE
from madeval.settings.board_options import LeaderboardOptions
from madeval.util.safe_files import write_text_atomically

# The board's machinery (.data, .table, .html, .render: numpy and the statistics, ~0.3 s) is
# imported by the functions below, not here: a command that only needs this package's names must
# not pay for the board before its first call.

OUTPUT_FILES = ("leaderboard.md", "leaderboard.csv", "comparisons.csv", "leaderboard.json", "leaderboard.html")


def build_leaderboard(folder: str | Path, options: LeaderboardOptions | None = None) -> dict[str, Any]:
    """The leaderboard of the run in ``folder``."""
    from madeval.analysis.run_data import load_run
    from madeval.leaderboard.table import build  # scipy, behind it, takes seconds to import: only when a board is built

    options = options or LeaderboardOptions()
    return build(load_run(folder, transcripts=False, priced=bool(options.prices)), options)


def build_merged_leaderboard(folders: list[Path], options: LeaderboardOptions | None = None) -> dict[str, Any]:
    """One leaderboard of the runs in ``folders`` (:mod:`.merge`); of one folder, its own board."""
    from madeval.leaderboard.merge import merge_runs
    from madeval.leaderboard.table import build

    options = options or LeaderboardOptions()
    return build(merge_runs(folders, options.merge_same, bool(options.prices)), options)


def write_outputs(board: dict[str, Any], folder: str | Path,
                  history: list[dict[str, Any]] | None = None) -> list[Path]:
    """Write the board into ``folder``: Markdown, CSV (rows; comparisons), JSON and HTML, and
    ``charts/`` when the board's options ask for charts (``charts: true``, ``--charts``);
    ``history`` (entries of :mod:`.history`) adds the history chart and table to the page."""
    from madeval.leaderboard.html import page
    from madeval.leaderboard.render import comparisons_csv, csv_text, markdown

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)  # a merged board's own folder (--output) may be new
    # Each through a temporary file and a rename: a link named like an output is replaced, never
    # written through (madeval.util.safe_files).
    write_text_atomically(folder / "leaderboard.md", markdown(board))
    write_text_atomically(folder / "leaderboard.csv", csv_text(board))
    write_text_atomically(folder / "comparisons.csv", comparisons_csv(board))
    write_json_atomically(folder / "leaderboard.json", board)
    charts = []
    if board["options"]["charts"]:
        from madeval.leaderboard.charts import draw_all  # matplotlib takes a second or more to import: only when drawn

        charts = draw_all(board, folder / "charts")
    shown = None
    if history:  # asked for by name (--history): drawn whatever the charts option says
        from madeval.leaderboard.history_chart import draw

        shown = (history, draw(history, folder / "charts"))
    viewer = VIEWER_FILE if (folder / VIEWER_FILE).is_file() else None
    write_text_atomically(folder / "leaderboard.html", page(board, charts, shown, folder, viewer))
    return [folder / name for name in OUTPUT_FILES] + charts


def publish_board(folder: str | Path, options: LeaderboardOptions, kept: str,
                  keep_previous: bool = False) -> dict[str, Any]:
    """Build the board of the run in ``folder`` and write it there (:func:`write_outputs`), holding
    the folder's write lock; a write that fails is one line ending with ``kept`` (what is safe and
    how to write the board later). The run, ``madeval rescore`` and ``madeval import`` publish so.
    ``keep_previous`` (a rescore): the board the folder held is first moved into
    ``previous-boards/<n>/`` (:mod:`.previous`), and the new board names that folder
    (``previous_board``)."""
    from madeval.leaderboard.previous import keep_previous as move_previous

    with folder_lock.hold(folder), writing(f"the leaderboard into {folder}", kept):
        board = build_leaderboard(folder, options)
        moved = move_previous(Path(folder), OUTPUT_FILES) if keep_previous else None
        if moved is not None:
            board["previous_board"] = str(moved)
        write_outputs(board, folder)
    return board


__all__ = ["VIEWER_FILE", "LeaderboardOptions", "build_leaderboard", "build_merged_leaderboard", "publish_board",
           "write_outputs"]
