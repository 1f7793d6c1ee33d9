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

import contextlib
from pathlib import Path
from typing import Any, Callable

from madeval.analysis.run_data import read_run_description
from madeval.errors import StorageError
from madeval.records.folder import ReadReport
from madeval.records.run_file import VIEWER_FILE  # the page's name in the run folder, which the leaderboard links
from madeval.viewer.debates import left_out, read_debates, run_records
from madeval.viewer.page import write_page
from madeval.viewer.questions import load_questions

#: The size up to which one page stays quick to open: the browser reads the whole file when it
#: opens it (about 2 to 5 s for 80 MB, 10,000 MALLM-length debates, measured with
#: ``python -m bench viewer``); above it, ``madeval view`` says so and how to split the run.
PAGE_LIMIT_BYTES = 160_000_000

#: Characters of a task or configuration name in the line that says a slice is empty.
NAME_CHARS = 80


def write_viewer(run: str | Path, output: str | Path | None = None, *, tasks: list[str] | None = None,
                 configs: list[str] | None = None) -> dict[str, Any]:
    """Write the viewer page of the run folder ``run`` to ``output`` (default ``RUN/debates.html``).

    ``tasks`` and ``configs`` (configuration labels) keep only those debates: a page of a slice of
    a run too large for one page (see the size limit in docs/records.md).

    Returns ``path``, ``debates`` (how many the page holds), ``bytes`` (its size) and ``notes``
    (records skipped, questions that could not be read). A folder that is no run, or a slice with
    no debate, is a one-line :class:`madeval.UsageError`; nothing is written then. The missing
    folders of ``output`` are made (as a run's ``--output-path`` and a board's ``--output``), and
    removed again when no page is kept.
    """
    folder = Path(run)
    described = read_run_description(folder)
    target = Path(output) if output is not None else folder / VIEWER_FILE
    labels = _labels(described)  # the run's configuration labels, then any only its records name
    imported = {str(cid) for cid, c in (described.get("configurations") or {}).items()
                if isinstance(c, dict) and c.get("imported")}
    present = _present(described, labels)
    if tasks:
        described = {**described, "tasks": {k: v for k, v in (described.get("tasks") or {}).items() if k in tasks}}
    questions = load_questions(described)  # each task read when a debate first asks for its questions
    report = ReadReport()
    unreadable: list[str] = []

    def finished_notes() -> list[str]:  # known once every record has been read
        return questions.notes + left_out(report, unreadable)

    def kept(record: dict[str, Any]) -> bool:
        label = _label(record)
        labels.setdefault(label[: NAME_CHARS + 1], None)  # enough to show it cut: a hostile label costs no more
        return _kept(record, label, tasks, configs)

    records = (r for r in run_records(folder, report) if kept(r))
    sliced = ", ".join(f"{name} {', '.join(chosen)}"
                       for name, chosen in (("task", tasks), ("configuration", configs)) if chosen)
    made = _missing_parents(target.parent)
    try:
        written = write_page(target, f"madeval debates: {folder.name}" + (f" ({sliced})" if sliced else ""),
                             read_debates(records, questions, unreadable, imported), finished_notes,
                             empty=(lambda: f"no debate of {folder} is of {sliced} "
                                            f"(it has {present()})") if sliced else None)
    except BaseException:
        for made_folder in made:  # nothing half-written: not even the folders made for the page
            with contextlib.suppress(OSError):
                made_folder.rmdir()
        raise
    return {"path": target, **written, "notes": finished_notes()}


def _missing_parents(folder: Path) -> list[Path]:
    """Make ``folder`` and its missing parents, as a run's and a board's ``--output`` do; returns
    the folders made, deepest first (a page that fails removes them again). A path that cannot be
    a folder is a one-line :class:`madeval.StorageError`."""
    missing = [parent for parent in (folder, *folder.parents) if not parent.exists()]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StorageError(f"cannot make the folder {folder}: {error.strerror or error}") from None
    return missing


def _labels(described: dict[str, Any]) -> dict[str, None]:
    """The configuration labels run.json lists, in order (a dict: an ordered set)."""
    return {str((c or {}).get("label", cid)) if isinstance(c, dict) else str(cid): None
            for cid, c in (described.get("configurations") or {}).items()}


def _present(described: dict[str, Any], labels: dict[str, None], shown: int = 10) -> Callable[[], str]:
    """The run's tasks and configuration labels, for the line that says a slice is empty: asked
    once the records are read, so ``labels`` holds the labels only records name too."""
    tasks = [str(name) for name in described.get("tasks") or {}]

    def listed(names: list[str]) -> str:  # a label is a record's text: each cut, so the line stays one line's worth
        cut = [name if len(name) <= NAME_CHARS else name[: NAME_CHARS - 1] + "…" for name in names[:shown]]
        return ", ".join(cut) + (f" and {len(names) - shown} more" if len(names) > shown else "")

    return lambda: f"task {listed(tasks)}; configuration {listed(list(labels))}"


def _label(record: dict[str, Any]) -> str:
    return str(record.get("config_label") or record["unit"]["config"])


def _kept(record: dict[str, Any], label: str, tasks: list[str] | None, configs: list[str] | None) -> bool:
    return (not tasks or record["unit"]["task"] in tasks) and (not configs or label in configs)


__all__ = ["PAGE_LIMIT_BYTES", "VIEWER_FILE", "write_viewer"]
