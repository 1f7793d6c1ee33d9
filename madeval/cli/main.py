"""The ``madeval`` command line, in lm-evaluation-harness style.

``madeval --tasks a,b --decider unanimity`` runs an evaluation (the ``run`` command is the
default); ``madeval tasks``, ``madeval plugins``, ``madeval simulator``, ``madeval leaderboard``,
``madeval rescore``, ``madeval import``, ``madeval sample-size``, ``madeval view`` and ``madeval export`` are the
other commands.
Bad input prints one line and exits with status 2.

Each command imports the machinery it drives inside its own function, so that ``madeval --help``
and the light commands do not load openai, scipy or matplotlib (each takes a second or more).
"""

from __future__ import annotations

import sys

import click

from ..errors import MadevalError, UsageError
from ..shown_text import terminal_text
from .export_cmd import export
from .import_cmd import import_
from .environment import ENVIRONMENT
from .leaderboard_cmd import leaderboard
from .plugins_cmd import plugins
from .rescore_cmd import rescore
from .run_cmd import run
from .sample_size_cmd import sample_size
from .simulator_cmd import simulator
from .tasks_cmd import tasks
from .view_cmd import view

COMMANDS_WITHOUT_RUN = ("--help", "-h", "--version")


class DefaultToRun(click.Group):
    """A group that runs ``run`` when the first argument is not a command name."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in COMMANDS_WITHOUT_RUN:
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultToRun, epilog=ENVIRONMENT)
@click.version_option(package_name="madeval")
def cli() -> None:
    """Evaluate multi-agent debate configurations on benchmark tasks.

    Run 'madeval --tasks TASKS [options]' (the run command: 'madeval run --help' lists its options)
    or one of the commands below ('madeval COMMAND --help' for each).
    """


def _register_commands() -> None:
    for command in (run, tasks, plugins, simulator, sample_size, leaderboard, rescore, import_, view, export):
        cli.add_command(command)


_register_commands()


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI, turning every expected error into one line and a status."""
    try:
        cli.main(args=argv, prog_name="madeval", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("madeval: interrupted", err=True)
        sys.exit(130)
    except KeyboardInterrupt:
        click.echo("madeval: interrupted", err=True)
        sys.exit(130)
    except click.UsageError as error:
        click.echo(terminal_text(f"madeval: error: {error.format_message()}"), err=True)
        sys.exit(2)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.ClickException as error:
        click.echo(terminal_text(f"madeval: error: {error.format_message()}"), err=True)
        sys.exit(error.exit_code)
    except UsageError as error:
        click.echo(terminal_text(f"madeval: error: {error}"), err=True)
        sys.exit(2)
    except MadevalError as error:
        click.echo(terminal_text(f"madeval: error: {error}"), err=True)
        sys.exit(1)
