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
from typing import NamedTuple

import click

from madeval.cli.environment import ENVIRONMENT
from madeval.errors import MadevalError, UsageError
from madeval.util.shown_text import terminal_text

COMMANDS_WITHOUT_RUN = ("--help", "-h", "--version")

class LazyCommand(NamedTuple):
    """Where a command lives and what ``madeval --help`` says of it without importing it."""

    module: str  # module of madeval.cli
    attribute: str  # the click command in it
    summary: str  # the command's docstring's first paragraph on one line (tests/cli/test_cli_lazy.py checks)


# Command name -> where it lives and its summary. A command's module is imported when that command
# is asked for (click's lazy subcommands pattern), so a run does not import the leaderboard
# command's machinery (numpy, the board's statistics: ~0.25 s) before its first call, and
# ``madeval --help`` imports none of them. tests/cli/test_cli_lazy.py checks that each entry names its
# command and repeats its summary; the import graph of tests/architecture/test_imports.py does not see these
# imports (they are strings), which is safe here: this module is imported by none of them, so no
# cycle can pass through it.
LAZY_COMMANDS = {
    "run": LazyCommand("run_cmd", "run", "Run debates on tasks and print the leaderboard table."),
    "tasks": LazyCommand("tasks_cmd", "tasks", "List tasks with their answer type, row count (when known) and "
                         "where their data comes from here."),
    "plugins": LazyCommand("plugins_cmd", "plugins",
                           "List the components of every loaded plugin: kind, name, package, what it does and "
                           "its options (type = default). With NAME, one component in full. Tasks are listed "
                           "by 'madeval tasks'."),
    "simulator": LazyCommand("simulator_cmd", "simulator", "Serve synthetic agents with known accuracy, "
                             "conformity, persuasion, self-doubt, latency and faults."),
    "sample-size": LazyCommand("sample_size_cmd", "sample_size", "Print how many of POPULATION items "
                               "'--sample fpc' draws (Voting or Consensus, App. B.1)."),
    "leaderboard": LazyCommand("leaderboard_cmd", "leaderboard", "Leaderboards of finished runs: show them "
                               "again (or several merged), check them against a baseline, and draw the "
                               "history of checks."),
    "rescore": LazyCommand("rescore_cmd", "rescore",
                           "Apply transcript-only deciders to RUN's debates without new discussion calls."),
    "import": LazyCommand("import_cmd", "import_", "Read FILES of FORMAT (mallm, lm-eval, or a plugin's; see "
                          "'madeval plugins') as a run folder that 'leaderboard show', 'rescore' and every "
                          "other command read like madeval's own. Each file is one configuration; a second "
                          "import of the same file adds nothing."),
    "view": LazyCommand("view_cmd", "view", "Write one self-contained HTML page to read every debate of RUN "
                        "(opens from disk, no network)."),
    "export": LazyCommand("export_cmd", "export", "Export RUN's debates: one sample per (item, configuration, "
                          "repeat) with every message."),
}


class DefaultToRun(click.Group):
    """A group that runs ``run`` when the first argument is not a command name, and imports a
    command's module only when that command is asked for (``--help`` lists them from their summaries)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*LAZY_COMMANDS, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in LAZY_COMMANDS:
            module, attribute, _ = LAZY_COMMANDS[cmd_name]
            self.add_command(getattr(importlib.import_module(f"{__package__}.{module}"), attribute), cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The Commands section of ``--help``, as click writes it, from the summaries of commands not
        imported yet: a stand-in command with the summary as its help is shortened the same way."""
        commands = [(name, self.commands.get(name) or click.Command(name, help=LAZY_COMMANDS[name].summary))
                    for name in self.list_commands(ctx)]
        commands = [(name, command) for name, command in commands if not command.hidden]
        if commands:
            limit = formatter.width - 6 - max(len(name) for name, _ in commands)  # as click.Group does
            with formatter.section("Commands"):
                formatter.write_dl([(name, command.get_short_help_str(limit)) for name, command in commands])

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
