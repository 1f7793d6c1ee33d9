"""``madeval leaderboard``: re-render a run's leaderboard (or several runs' merged), or check it against a
stored baseline."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import click

from madeval.cli.settings_options import model_options, shared_option
from madeval.core.options import given_options
from madeval.errors import UsageError
from madeval.settings.board_options import LeaderboardOptions
from madeval.util.shown_text import terminal_text

#: The options both subcommands take; ``show`` takes every command-line option of the model.
COMMON = ("correction", "test", "alpha")


def _options(run_folder: Path | None, given: dict[str, Any], merged: bool = False) -> LeaderboardOptions:
    """Leaderboard options: those stored with the run, then the command line's. A ``merged`` board
    does not take the first run's title (its sweep's name): it is named after all its runs."""
    from madeval.analysis.run_data import read_run_description

    stored = {}
    if run_folder is not None and (run_folder / "run.json").is_file():
        stored = dict(read_run_description(run_folder).get("leaderboard") or {})
    if merged:
        stored.pop("title", None)
    stored.update(given_options(given))
    return LeaderboardOptions.from_dict(stored)


@click.group()
def leaderboard() -> None:
    """Leaderboards of finished runs: show them again (or several merged), check them against a baseline,
    and draw the history of checks."""


@leaderboard.command()
@click.argument("runs", nargs=-1, required=True)
@click.option("--output", "-o", type=click.Path(path_type=Path),
              help="Folder for the board's files [default: the run's folder; for several runs, print the table only].")
@click.option("--history", "history_file", type=click.Path(path_type=Path),
              help="A history file of 'leaderboard check --history': its chart and table go on the page.")
@model_options(LeaderboardOptions)
@shared_option("explain")
def show(runs: tuple[str, ...], output: Path | None, history_file: Path | None, explain: bool | None,
         **given: Any) -> None:
    """Rebuild the leaderboard (Markdown, CSV, JSON, charts, HTML) of RUNS (folders or globs) and print
    the table with one sentence per comparison (--explain: the whole board). One run is written into
    its folder; several are merged into one board, each two configurations paired on the (task, item,
    repeat) units they share."""
    from madeval.leaderboard import build_merged_leaderboard, write_outputs
    from madeval.leaderboard.history import read
    from madeval.leaderboard.merge import run_folders
    from madeval.leaderboard.render import printed
    from madeval.records.folder import writing

    folders = run_folders(list(runs))
    options = _options(folders[0], given, merged=len(folders) > 1)
    board = build_merged_leaderboard(folders, options)
    history = read(history_file)[0] if history_file is not None else None
    target = output or (folders[0] if len(folders) == 1 else None)
    if target is not None:
        with writing(f"the leaderboard into {target}"):
            write_outputs(board, target, history)
    click.echo(terminal_text(printed(board, bool(explain), target)), nl=False)  # labels may hold escape sequences


@leaderboard.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--baseline", required=True, type=click.Path(path_type=Path),
              help="Stored leaderboard JSON, e.g. leaderboards/ci.json.")
@click.option("--history", "history_file", type=click.Path(path_type=Path),
              help="Append the result to this JSON Lines file (see 'madeval leaderboard history').")
@click.option("--commit", help="Commit of the entry appended to --history [default: GITHUB_SHA, else git HEAD].")
@click.option("--format", "output_format", type=click.Choice(["markdown", "github"]), default="markdown",
              show_default=True, help="github: Markdown for a CI job summary, appended to $GITHUB_STEP_SUMMARY "
              "when set (else printed).")
@model_options(LeaderboardOptions, *COMMON)
def check(run: Path, baseline: Path, history_file: Path | None, commit: str | None, output_format: str,
          **given: Any) -> None:
    """Exit 1 when a configuration of RUN scores significantly lower than in BASELINE."""
    from madeval.leaderboard import build_leaderboard, step_summary
    from madeval.leaderboard.history import current_commit, entry
    from madeval.leaderboard.history_file import append, check_target
    from madeval.leaderboard.regression import check as run_check
    from madeval.leaderboard.regression import github_markdown, markdown

    options = _options(None, given)
    if history_file is not None:
        check_target(history_file)  # before any work: a folder, a FIFO, another tool's file are refused
    summary = os.environ.get("GITHUB_STEP_SUMMARY") if output_format == "github" else None
    if summary:
        step_summary.check_target(Path(summary))  # likewise
    stored = read_board(baseline)
    current = read_board(run) if run.is_file() else build_leaderboard(run, options)
    result = run_check(current, stored, options)
    commit = current_commit(commit) if history_file is not None or output_format == "github" else None
    if history_file is not None:
        append(history_file, entry(result, current, options, commit))  # atomically, one line when it cannot
    if summary:
        step_summary.append(Path(summary), github_markdown(result, options, commit))  # one write, whole
    if output_format == "github" and not summary:
        click.echo(terminal_text(github_markdown(result, options, commit)), nl=False)
    else:
        click.echo(terminal_text(markdown(result, options)), nl=False)
    if result.failed:
        sys.exit(1)


@leaderboard.command()
@click.argument("history_file", metavar="FILE", type=click.Path(path_type=Path))
@click.option("--output", "-o", type=click.Path(path_type=Path),
              help="Folder for history.md, history.html and charts/history.png [default: FILE's folder].")
def history(history_file: Path, output: Path | None) -> None:
    """Score over commits from a history FILE that 'leaderboard check --history' appends to: a table,
    a chart with 95% intervals and the significant drops marked, and an HTML page."""
    from madeval.leaderboard.history import markdown, read
    from madeval.leaderboard.history_chart import draw
    from madeval.leaderboard.html import history_page
    from madeval.records.folder import writing
    from madeval.util.safe_files import write_text_atomically

    entries, broken = read(history_file)
    folder = output or history_file.parent
    text = markdown(entries, broken)
    with writing(f"the history into {folder}"):
        folder.mkdir(parents=True, exist_ok=True)
        chart = draw(entries, folder / "charts")
        write_text_atomically(folder / "history.md", text)
        write_text_atomically(folder / "history.html", history_page(history_file.name, entries, chart))
    click.echo(terminal_text(text), nl=False)


def read_board(path: Path) -> dict[str, Any]:
    """A stored leaderboard JSON; anything else is a one-line UsageError."""
    try:
        board = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise UsageError(f"cannot read leaderboard {path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise UsageError(f"{path} is not valid JSON: {error.msg} (line {error.lineno})") from None
    from madeval.leaderboard.table import FORMAT

    if not isinstance(board, dict) or board.get("format") != FORMAT:
        raise UsageError(f"{path} is not a madeval leaderboard ({FORMAT})")
    return board
