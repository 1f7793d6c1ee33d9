"""The command line imports a command's module only when that command is asked for.

A run's way to its first call must not pay for the leaderboard's machinery (numpy, the board's
statistics) or the other commands; ``madeval --help`` still lists every command."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

from madeval.cli.main import LAZY_COMMANDS, cli


@pytest.mark.parametrize("name", sorted(LAZY_COMMANDS))
def test_each_lazy_entry_names_its_command(name):
    command = cli.get_command(click.Context(cli), name)
    assert isinstance(command, click.Command) and command.name == name


@pytest.mark.parametrize("name", sorted(LAZY_COMMANDS))
def test_each_summary_is_its_commands_first_docstring_paragraph(name):
    """``--help`` shows the table's summaries without importing the commands: they must say what
    the commands' own docstrings say, or the two would drift apart."""
    command = cli.get_command(click.Context(cli), name)
    assert LAZY_COMMANDS[name].summary == " ".join(command.help.partition("\n\n")[0].split())


HELP_PROBE = """
import json, sys, click
from madeval.cli.main import LAZY_COMMANDS, cli

def commands_section(format_commands, width):
    formatter = click.HelpFormatter(width=width)
    format_commands(cli, click.Context(cli, info_name="madeval"), formatter)
    return formatter.getvalue()

lazy = {width: commands_section(type(cli).format_commands, width) for width in (50, 80, 200)}
imported = sorted(m for m in sys.modules if m.startswith("madeval.cli.") and m.endswith("_cmd"))
for name in LAZY_COMMANDS:
    cli.get_command(click.Context(cli), name)
eager = {width: commands_section(click.Group.format_commands, width) for width in (50, 80, 200)}
print(json.dumps({"imported": imported, "lazy": lazy, "eager": eager}))
"""


def test_help_imports_no_command_and_lists_them_as_click_would():
    """The Commands section written from the summaries equals click's own, written from the
    imported commands, at narrow and wide terminals; and writing it imports no command module."""
    done = subprocess.run([sys.executable, "-c", HELP_PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    shown = json.loads(done.stdout.splitlines()[-1])
    assert shown["imported"] == []
    assert shown["lazy"] == shown["eager"]
    assert "Run debates on tasks and print the leaderboard table." in shown["lazy"]["80"]
    done = subprocess.run([sys.executable, "-c",
                           "import sys\nfrom madeval.cli.main import main\ntry:\n main(['--help'])\n"
                           "except SystemExit:\n pass\nprint([m for m in sys.modules if m.endswith('_cmd')])"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.splitlines()[-1] == "[]", done.stderr[-2000:]


def test_help_lists_every_command():
    shown = CliRunner().invoke(cli, ["--help"]).output
    section = shown.split("Commands:\n")[1].split("\n\n")[0]  # up to the environment epilog
    listed = [line.split()[0] for line in section.splitlines() if line.startswith("  ") and line[2] != " "]
    assert listed == sorted(LAZY_COMMANDS)


def modules_after(code: str) -> dict:
    probe = (f"import sys, json\n{code}\n"
             "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('madeval.cli.', 'madeval.leaderboard', "
             "'madeval.run.', 'madeval.analysis', 'numpy', 'scipy')))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return set(json.loads(done.stdout.splitlines()[-1]))


def test_a_run_loads_neither_other_commands_nor_the_board_before_it_starts():
    """Everything ``madeval --tasks ...`` imports up to running: the group, the run command and
    the run machinery; the board (the stage above the run's records) loads only once they are written."""
    loaded = modules_after("from madeval.cli.main import cli\nimport click\n"
                           "cli.get_command(click.Context(cli), 'run')\nimport madeval.run.engine, madeval.evaluation")
    assert "madeval.cli.run_cmd" in loaded and "madeval.run.engine" in loaded  # the probe did import
    assert not {m for m in loaded if m.startswith("madeval.cli.") and m.endswith("_cmd")} - {"madeval.cli.run_cmd"}
    assert not {"numpy", "scipy", "madeval.analysis.run_data", "madeval.leaderboard", "madeval.leaderboard.table",
                "madeval.leaderboard.html"} & loaded


def test_an_unknown_first_word_is_still_a_run_option():
    result = CliRunner().invoke(cli, ["--tasks", "no_such_task_here"], standalone_mode=False)
    assert "no_such_task_here" in str(result.exception)
