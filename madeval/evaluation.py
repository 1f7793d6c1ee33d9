"""The pipeline end to end: the run writes its records, the board is built from them, written
into the run folder and printed (:func:`run`).

:func:`evaluate` is the function ``madeval run`` calls, for notebooks and scripts too, as
lm-evaluation-harness has ``simple_evaluate`` and inspect-ai ``eval()``. It takes the options of
the command line and of a ``--config`` file, by the same snake_case names, and returns the run's
result instead of printing it.
"""

from __future__ import annotations

import io
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from madeval.core.options import given_options
from madeval.settings.config import build_settings, read_config_file

if TYPE_CHECKING:
    from madeval.run.engine import RunRecords
    from madeval.run.scheduler import RunOutcome
    from madeval.settings.config import RunSettings


@dataclass
class RunResult:
    """What a finished run produced: its folder, how its units went and its leaderboard."""

    folder: Path
    outcome: RunOutcome
    rows: list[dict[str, Any]]
    board: dict[str, Any]


def evaluate(
    tasks: str | list[str] | None = None,
    *,
    decider: str | None = None,
    base_url: str | None = None,
    output_path: str | Path | None = None,
    config: str | Path | None = None,
    show_progress: bool = False,
    out: TextIO | None = None,
    **options: Any,
) -> RunResult:
    """Run debates on tasks, write the run folder and return what the run produced.

    ``tasks`` names tasks, groups or tags (a list, or one text separated by commas); ``decider``,
    ``base_url`` (an OpenAI-compatible endpoint; without one the embedded model is started) and
    ``output_path`` (the run folder; running into it again resumes) are the most used options.
    Every other option of ``madeval run`` is a keyword argument with its config-file name and
    type: ``agents=3``, ``max_turns=2``, ``limit=20``, ``decider_args={"after_turns": 2}``,
    ``paradigm="collective_refinement"``, ``cache="off"``... ``config`` reads a ``--config`` YAML
    file (a sweep file too) first; keyword arguments win over its values, as on the command line.
    An option given as ``None`` (or an empty tuple, a repeatable option left out) is not given.

    Nothing is printed unless asked: ``show_progress=True`` draws the progress bar and ``out``
    (e.g. ``sys.stdout``) receives the leaderboard table, one sentence per comparison and the
    summary line (the whole board with ``explain=True``).

    Returns a :class:`madeval.RunResult`: ``folder`` (the run folder), ``rows`` (the leaderboard
    rows as plain dicts: ``label``, ``task``, ``metric``, ``score``, ``ci_low``/``ci_high``,
    ``items``, ``units``, ...), ``outcome`` (``finished``, ``skipped`` as already done,
    ``failed``) and ``board`` (the whole leaderboard, as in ``leaderboard.json``). Units that
    failed for good are counted in ``outcome.failed`` and listed in the folder's ``errors.jsonl``;
    running again into the same folder retries them.

    Bad options (an unknown name, a value of the wrong type or out of range, an unknown task or
    component) raise :class:`madeval.UsageError` with one line, before anything is written.
    """
    given = {"tasks": tasks, "decider": decider, "base_url": base_url, "output_path": output_path, **options}
    merged: dict[str, Any] = read_config_file(config) if config is not None else {}
    merged.update(given_options(given))
    if merged.get("output_path") is not None:
        merged["output_path"] = str(merged["output_path"])
    settings = build_settings(merged)
    return run(settings, show_progress=show_progress, out=out if out is not None else io.StringIO())


def run(settings: RunSettings, *, show_progress: bool = True, out: TextIO = sys.stdout) -> RunResult:
    """Run ``settings`` into its folder (:func:`madeval.run.engine.run_records`), then build the
    board from the records, write it into the folder and print it with the run's summary line: the
    table and one sentence per comparison, or with ``settings.explain`` the whole board
    (:func:`madeval.leaderboard.render.printed`)."""
    from madeval.leaderboard.render import printed  # the engine and the board load only for a run
    from madeval.run.engine import run_records
    from madeval.util.shown_text import terminal_text

    records = run_records(settings, show_progress=show_progress)
    viewer = write_debates(records.folder) if settings.view else None  # first: the board links it
    board = finish(records.folder, settings)
    # labels may hold escape sequences (OSC 52 ...)
    out.write(terminal_text(printed(board, settings.explain, records.folder)))
    out.write(summary_line(records, board))
    if viewer:
        out.write(terminal_text(viewer))
    return RunResult(records.folder, records.outcome, board["rows"], board)


def write_debates(folder: Path) -> str:
    """Write the run's debate viewer (``debates.html``, :func:`madeval.viewer.write_viewer`) into
    ``folder`` for ``--view``; returns the lines that say where, and what it left out."""
    from madeval.viewer import write_viewer

    written = write_viewer(folder)
    notes = "".join(f"madeval: {note}\n" for note in written["notes"])
    return notes + f"Each debate, turn by turn: {written['path']} ({written['debates']} debates; the board links it)\n"


def finish(folder: Path, settings: RunSettings) -> dict[str, Any]:
    """Build the run's leaderboard and write it (Markdown, CSV, JSON, charts, HTML) into ``folder``;
    note in run.json how many calls the response cache answered and what the run paid (``paid``: calls
    and tokens made against those its debates used, see :func:`madeval.analysis.run_data.paid_share`);
    log it to W&B when asked."""
    from madeval.leaderboard import LeaderboardOptions, publish_board
    from madeval.records.run_file import note_in_run_file

    board = publish_board(folder, LeaderboardOptions.from_dict(settings.leaderboard),
                          f"every record is kept: run 'madeval leaderboard show {folder}' when there is room")
    if settings.wandb_args:
        from madeval.export.wandb_log import log_run

        log_run(folder, board, settings.wandb_args)
    note_in_run_file(folder, "cached_calls", board["cached_calls"])
    note_in_run_file(folder, "paid", board["paid"])
    return board


def summary_line(records: RunRecords, board: dict[str, Any]) -> str:
    """The run's last line: units run, already done and failed; calls the response cache answered;
    records skipped on reading; replies cut; where the results are. What shared calls saved is the
    printed board's "Paid:" note, just above it."""
    outcome = records.outcome
    skipped = board["records_read"]["summary"]  # broken lines and duplicates, each unit counted once
    cached = ""
    if records.cache_used:
        asked = outcome.calls + outcome.cached_calls
        cached = f"{outcome.cached_calls} of {asked} calls answered from the response cache; "
    cut = records.cut_replies
    cut_note = (f"{cut} {'reply' if cut == 1 else 'replies'} longer than max_tokens allows cut (an endpoint "
                "fault: see the calls' errors); " if cut else "")
    return (f"\n{outcome.finished} units run, {outcome.skipped} already done, {outcome.failed} failed; "
            f"{cached}{skipped + '; ' if skipped else ''}{cut_note}results in {records.folder}\n")
