"""The debate viewer: one self-contained HTML page to read every debate of a run.

``madeval view RUN`` writes ``RUN/debates.html`` (or ``--output FILE``): a list of the run's
debates, filterable by configuration, task, right or wrong, "right in turn 1, wrong at the end",
drift and unparsed answers, and each debate as a grid of turns by agents. Modules, one job each:

* :mod:`.questions`: the question of each debate, read again from the run's tasks;
* :mod:`.debates`: each record as a row of the list and the data of its view (with the
  turn-by-turn facts of :mod:`madeval.dynamics`);
* :mod:`.page`: the HTML file, with its script (``viewer.js``) and style (``viewer.css``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: The page's file name in the run folder (the leaderboard page links to it when it is there).
VIEWER_FILE = "debates.html"


def write_viewer(run: str | Path, output: str | Path | None = None) -> dict[str, Any]:
    """Write the viewer page of the run folder ``run`` to ``output`` (default ``RUN/debates.html``).

    Returns ``path``, ``debates`` (how many the page holds), ``bytes`` (its size) and ``notes``
    (records skipped, questions that could not be read). A folder that is no run is a one-line
    :class:`madeval.UsageError`; nothing is written then.
    """
    from ..records import ReadReport
    from .debates import read_debates, read_run_description, run_records
    from .page import write_page
    from .questions import load_questions

    folder = Path(run)
    described = read_run_description(folder)
    target = Path(output) if output is not None else folder / VIEWER_FILE
    questions = load_questions(described)
    report = ReadReport()
    notes = list(questions.notes)

    def finished_notes() -> list[str]:  # known once every record has been read
        return notes + ([f"records left out: {report.summary()}"] if report else [])

    written = write_page(target, f"madeval debates: {folder.name}",
                         read_debates(run_records(folder, report), questions), finished_notes)
    return {"path": target, **written, "notes": finished_notes()}


__all__ = ["VIEWER_FILE", "write_viewer"]
