"""``madeval leaderboard``: re-render a run's leaderboard, or check it against a stored baseline."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from ..errors import UsageError
from ..leaderboard.options import LeaderboardOptions
from ..options import given_options
from .settings_options import model_options

#: The options both subcommands take; ``show`` takes every command-line option of the model.
COMMON = ("correction", "test", "alpha")


def _options(run_folder: Path | None, given: dict[str, Any]) -> LeaderboardOptions:
    """Leaderboard options: those stored with the run, then the command line's."""
    stored = {}
    if run_folder is not None and (run_folder / "run.json").is_file():
        stored = json.loads((run_folder / "run.json").read_text(encoding="utf-8")).get("leaderboard") or {}
    stored.update(given_options(given))
    return LeaderboardOptions.from_dict(stored)


@click.group()
def leaderboard() -> None:
    """Leaderboards of finished runs: show them again, or check them against a baseline."""


@leaderboard.command()
@click.argument("run", type=click.Path(path_type=Path))
@model_options(LeaderboardOptions)
def show(run: Path, **given: Any) -> None:
    """Rebuild RUN's leaderboard (Markdown, CSV, JSON, charts, HTML) and print the table."""
    from ..leaderboard import build_leaderboard, write_outputs
    from ..leaderboard.render import markdown
    from ..records import writing

    options = _options(run, given)
    board = build_leaderboard(run, options)
    with writing(f"the leaderboard into {run}"):
        write_outputs(board, run)
    click.echo(markdown(board), nl=False)


@leaderboard.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--baseline", required=True, type=click.Path(path_type=Path),
              help="Stored leaderboard JSON, e.g. leaderboards/ci.json.")
@model_options(LeaderboardOptions, *COMMON)
def check(run: Path, baseline: Path, **given: Any) -> None:
    """Exit 1 when a configuration of RUN scores significantly lower than in BASELINE."""
    from ..leaderboard import build_leaderboard
    from ..leaderboard.regression import check as run_check, markdown

    options = _options(None, given)
    stored = read_board(baseline)
    current = read_board(run) if run.is_file() else build_leaderboard(run, options)
    result = run_check(current, stored, options)
    click.echo(markdown(result, options), nl=False)
    if result.failed:
        sys.exit(1)


def read_board(path: Path) -> dict[str, Any]:
    """A stored leaderboard JSON; anything else is a one-line UsageError."""
    try:
        board = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise UsageError(f"cannot read leaderboard {path}: {error.strerror}") from None
    except json.JSONDecodeError as error:
        raise UsageError(f"{path} is not valid JSON: {error.msg} (line {error.lineno})") from None
    from ..leaderboard.table import FORMAT

    if not isinstance(board, dict) or board.get("format") != FORMAT:
        raise UsageError(f"{path} is not a madeval leaderboard ({FORMAT})")
    return board
