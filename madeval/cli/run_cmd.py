"""``madeval run`` (the default command): evaluate debate configurations on tasks."""

from __future__ import annotations

import sys
from typing import Any

import click

from madeval.cli.environment import ENVIRONMENT
from madeval.cli.settings_options import settings_options
from madeval.evaluation import evaluate


@click.command(epilog=ENVIRONMENT)
@settings_options
@click.option("--config", "config_file", help="YAML file with any of these options (command line wins).")
@click.option("--no-progress", is_flag=True, help="Do not draw the progress bar.")
def run(config_file: str | None, no_progress: bool, **given: Any) -> None:
    """Run debates on tasks and print the leaderboard table."""
    result = evaluate(config=config_file, show_progress=not no_progress, out=sys.stdout, **given)
    if result.outcome.failed:
        click.echo(failure_advice(result.outcome), err=True)
        sys.exit(1)


def failure_advice(outcome: Any) -> str:
    """The run's last words about units that failed for good: a re-run retries what a re-run can
    fix (retries ran out: rate limits, timeouts, server errors), and is never advised for what it
    cannot (the endpoint refused the request, a component failed), whose first error is quoted."""
    failed, unfixable = outcome.failed, outcome.unfixable
    head = f"madeval: {failed} units failed for good (see errors.jsonl)"
    if not unfixable:
        return f"{head}; run the same command again to retry them"
    why = (f"a re-run will not fix {'them' if unfixable == failed else f'{unfixable} of them'}: "
           f"{outcome.first_unfixable}")
    if unfixable == failed:
        return f"{head}; {why}"
    return f"{head}; running the same command again retries {failed - unfixable} of them, but {why}"
