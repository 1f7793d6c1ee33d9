"""The blocks of README.md and docs/ that are generated from the code.

Each generated block sits between cog markers in the Markdown file (``<!-- [[[cog`` in README.md,
``% [[[cog`` in docs/, where ``%`` starts a MyST comment) and calls one function of this module.
``make docs-update`` rewrites the blocks (``cog -r -I docs FILES``); tests/docs/test_generated_blocks.py
fails while one differs from what the code produces now. This file is not part of the madeval
package and not a page of the site.
"""

from __future__ import annotations

import functools
import inspect
import io
import itertools
import re
import tempfile
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Any

import click
from click.testing import CliRunner

#: Help is wrapped at this width in the docs, whatever the terminal of who regenerates them.
HELP_WIDTH = 88
#: The component kinds of the README's table, in debate order.
DEBATE_KINDS = ("persona", "responder", "paradigm", "decider")


def cli_help(*command: str) -> str:
    """``madeval COMMAND --help`` as printed, in a ``text`` fence."""
    from madeval.cli.main import cli

    done = CliRunner().invoke(cli, [*command, "--help"], prog_name="madeval", terminal_width=HELP_WIDTH,
                              max_content_width=HELP_WIDTH)
    if done.exit_code != 0:
        raise RuntimeError(f"madeval {' '.join(command)} --help failed: {done.output}")
    return fence(done.output.rstrip())


def commands() -> list[tuple[str, ...]]:
    """Every command of ``madeval`` as a path (``("leaderboard", "show")``), groups before their
    subcommands, in the order ``madeval --help`` lists them."""
    from madeval.cli.main import cli

    found: list[tuple[str, ...]] = []

    def walk(group: click.Group, path: tuple[str, ...]) -> None:
        context = click.Context(group, info_name="madeval")
        for name in group.list_commands(context):
            command = group.get_command(context, name)
            found.append((*path, name))
            if isinstance(command, click.Group):
                walk(command, (*path, name))

    walk(cli, ())
    return found


def cli_reference() -> str:
    """A section per command, each with its ``--help``."""
    parts = ["## madeval\n", cli_help()]
    for path in commands():
        heading = "#" * (len(path) + 2)
        parts += [f"\n{heading} madeval {' '.join(path)}\n", cli_help(*path)]
    return "\n".join(parts)


def fence(text: str, language: str = "text") -> str:
    """``text`` in a fenced code block."""
    return f"```{language}\n{text}\n```"


def _cell(text: Any) -> str:
    """Text for a Markdown table cell: one line, pipes escaped."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _question(kind: str) -> str:
    """What a component kind decides, from its hook's docstring (``Add deciders: when ...``)."""
    from madeval.core import hookspecs

    first = inspect.getdoc(getattr(hookspecs, f"register_{kind}s")).splitlines()[0]
    return first.split(": ", 1)[1].rstrip(".")


def components_table() -> str:
    """The four debate components with what each decides and the built-in names (aliases in brackets)."""
    from madeval.core.plugins import DEFAULT_PLUGINS, registries

    built = registries()
    lines = ["| component | what it decides | built in |", "|---|---|---|"]
    for kind in DEBATE_KINDS:
        entries = [e for e in built.registry(kind).entries.values() if e.plugin in DEFAULT_PLUGINS]
        names = ", ".join(f"`{e.name}`" for e in entries)
        lines.append(f"| {kind} | {_question(kind)} | {names} |")
    return "\n".join(lines)


def components_list(kind: str) -> str:
    """Every built-in component of ``kind``: name, aliases, options with defaults and its summary."""
    from madeval.core.plugins import DEFAULT_PLUGINS, component_info

    lines = ["| name | options (default) | what it does |", "|---|---|---|"]
    for info in component_info():
        if info["kind"] != kind or info["package"] != "madeval" or info["plugin"] not in DEFAULT_PLUGINS:
            continue
        name = f"`{info['name']}`" + (f" ({', '.join(info['aliases'])})" if info["aliases"] else "")
        options = ", ".join(f"`{o['name']}={o['default']}`" for o in info["options"]) or "–"
        lines.append(f"| {name} | {_cell(options)} | {_cell(info['summary'])} |")
    return "\n".join(lines)


def legend() -> str:
    """The board's column legend as the board prints it (every column, money columns included)."""
    from madeval.leaderboard.render import LEGEND

    return "\n".join(f"- **{column}**: {meaning}." for column, meaning in LEGEND.items())


def _default(spec: Any, declared: Any) -> str:
    if declared.shown_default is not None:
        return declared.shown_default
    value = spec.default_factory() if spec.default_factory is not MISSING else spec.default
    if value in (None, [], {}, ""):
        return "–"
    return f"`{value}`"


def settings_table(model: str) -> str:
    """Every option a settings dataclass declares: config-file key, command-line flag, default and help.

    ``model``: ``debate`` (:class:`madeval.settings.config.DebateConfig`), ``run``
    (:class:`madeval.settings.config.RunSettings`) or ``leaderboard``
    (:class:`madeval.settings.board_options.LeaderboardOptions`)."""
    from madeval.cli.settings_options import flag_names
    from madeval.settings.board_options import LeaderboardOptions
    from madeval.settings.config import DebateConfig, RunSettings

    cls = {"debate": DebateConfig, "run": RunSettings, "leaderboard": LeaderboardOptions}[model]
    lines = ["| key | flag | default | meaning |", "|---|---|---|---|"]
    for spec in fields(cls):
        declared = spec.metadata.get("option")
        if declared is None:
            continue
        flags = " ".join(f"`{f}`" for f in flag_names(spec.name, declared)) if declared.cli else "(config file only)"
        if model == "leaderboard" and declared.cli is False:
            flags = "(leaderboard: mapping only)"
        meaning = declared.help + (" Choices: " + ", ".join(declared.choices) + "." if declared.choices else "")
        lines.append(f"| `{spec.name}` | {flags} | {_cell(_default(spec, declared))} | {_cell(meaning)} |")
    return "\n".join(lines)


def hook_signatures() -> list[str]:
    """Every hook of :mod:`madeval.core.hookspecs` as ``name(parameters)``."""
    from madeval.core import hookspecs

    found = []
    for name, function in inspect.getmembers(hookspecs, inspect.isfunction):
        if re.match(r"^[a-z]", name) and getattr(function, "madeval_spec", None) is not None:
            found.append(f"{name}{inspect.signature(function)}")
    return found


ROOT = Path(__file__).resolve().parent.parent
#: The study README.md and docs/getting-started.md show, and the simulator it is shown on.
STUDY = "examples/study.yaml"
STUDY_SIMULATOR = {"accuracy": 0.6, "conformity": 0.3}
#: The columns of the study's board README.md shows (the others are left out for width).
STUDY_COLUMNS = ("configuration", "score", "95% CI", "decided", "turns", "calls/item", "vs ref", "MDE (80% power)")


def study_file() -> str:
    """examples/study.yaml without its comment, in a ``yaml`` fence."""
    text = (ROOT / STUDY).read_text(encoding="utf-8")
    return fence("\n".join(line for line in text.splitlines() if not line.startswith("#")), "yaml")


@functools.cache
def _study() -> tuple[str, list[str]]:
    """The study run on the simulator (``madeval simulator --accuracy 0.6 --conformity 0.3``, seed 0):
    the board as printed and its closing sentences. The simulator is deterministic, so they are too."""
    from madeval.evaluation import evaluate
    from madeval.simulator import simulate
    from madeval.task.definition import load_task

    printed = io.StringIO()
    arith = [load_task("arith_mc")]
    with tempfile.TemporaryDirectory() as folder, simulate(tasks=arith, **STUDY_SIMULATOR) as simulator:
        result = evaluate(config=str(ROOT / STUDY), base_url=simulator.base_url, output_path=folder, cache="off",
                          out=printed)
    return printed.getvalue(), list(result.board["conclusions"])


def study_board() -> str:
    """The study's main table (the first table printed) with :data:`STUDY_COLUMNS` only, in a text fence."""
    lines = _study()[0].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("| "))
    table = [line for line in itertools.takewhile(lambda line: line.startswith("|"), lines[first:])]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table if not line.startswith("|---")]
    keep = [rows[0].index(column) for column in STUDY_COLUMNS]
    rows = [[row[i] for i in keep] for row in rows]
    widths = [max(len(row[i]) for row in rows) for i in range(len(keep))]
    return fence("\n".join("| " + " | ".join(c.ljust(w) for c, w in zip(row, widths)) + " |" for row in rows))


def study_sentences() -> str:
    """The sentences the study's board ends with, as printed."""
    return fence("In short:\n" + "\n".join(f"- {said}" for said in _study()[1]))
