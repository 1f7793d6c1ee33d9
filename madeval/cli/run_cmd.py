"""``madeval run`` (the default command): evaluate debate configurations on tasks."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..evaluation import evaluate
from .environment import ENVIRONMENT
from .settings_options import settings_options


@click.command(epilog=ENVIRONMENT)
@settings_options
@click.option("--config", "config_file", help="YAML file with any of these options (command line wins).")
@click.option("--no-progress", is_flag=True, help="Do not draw the progress bar.")
def run(config_file: str | None, no_progress: bool, **given: Any) -> None:
    """Run debates on tasks and print the leaderboard table."""
    result = evaluate(config=config_file, show_progress=not no_progress, out=sys.stdout, **given)
    if result.outcome.failed:
        click.echo(
            f"madeval: {result.outcome.failed} units failed for good (see errors.jsonl); "
            "run the same command again to retry them",
            err=True,
        )
        sys.exit(1)
