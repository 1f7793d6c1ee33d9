"""The ``madeval`` command line, in lm-evaluation-harness style.

``madeval --tasks a,b --decider unanimity`` runs an evaluation (the ``run`` command is the
default); ``madeval tasks``, ``madeval plugins``, ``madeval simulator``, ``madeval leaderboard``,
``madeval rescore``, ``madeval import``, ``madeval sample-size``, ``madeval view`` and ``madeval export`` are the
other commands.
Bad input prints one line and exits with status 2.

Each command's module is imported only when that command runs (:data:`LAZY_COMMANDS`), and each
command imports the machinery it drives inside its own function, so that the light commands and a
run's way to its first call do not load openai, scipy or matplotlib (each takes a second or more).
"""

from __future__ import annotations

import importlib
import sys

import click

from ..errors import MadevalError, UsageError
from ..shown_text import terminal_text
from .environment import ENVIRONMENT

COMMANDS_WITHOUT_RUN = ("--help", "-h", "--version")

# Command name -> (module of madeval.cli, click command in it). A command's module is imported
# when that command is asked for (click's lazy subcommands pattern), so a run does not import the
# leaderboard command's machinery (numpy, the board's statistics: ~0.25 s) before its first call.
# tests/test_cli_lazy.py checks that each entry names its command; the import graph of
# tests/test_imports.py does not see these imports (they are strings), which is safe here: this
# module is imported by none of them, so no cycle can pass through it.
LAZY_COMMANDS = {
    "run": ("run_cmd", "run"),
    "tasks": ("tasks_cmd", "tasks"),
    "plugins": ("plugins_cmd", "plugins"),
    "simulator": ("simulator_cmd", "simulator"),
    "sample-size": ("sample_size_cmd", "sample_size"),
    "leaderboard": ("leaderboard_cmd", "leaderboard"),
    "rescore": ("rescore_cmd", "rescore"),
    "import": ("import_cmd", "import_"),
    "view": ("view_cmd", "view"),
    "export": ("export_cmd", "export"),
}


class DefaultToRun(click.Group):
    """A group that runs ``run`` when the first argument is not a command name, and imports a
    command's module only when that command is asked for (``--help`` lists them all, so imports all)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*LAZY_COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY_COMMANDS:
            module, attribute = LAZY_COMMANDS[cmd_name]
            self.add_command(getattr(importlib.import_module(f"{__package__}.{module}"), attribute), cmd_name)
        return self.commands.get(cmd_name)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.list_commands(ctx) and args[0] not in COMMANDS_WITHOUT_RUN:
            args = ["run", *args]
        return super().parse_args(ctx, args)


@click.group(cls=DefaultToRun, epilog=ENVIRONMENT)
@click.version_option(package_name="madeval")
def cli() -> None:
    """Evaluate multi-agent debate configurations on benchmark tasks.

    Run 'madeval --tasks TASKS [options]' (the run command: 'madeval run --help' lists its options)
    or one of the commands below ('madeval COMMAND --help' for each).
    """


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
