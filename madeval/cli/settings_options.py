"""Command-line options derived from the settings model (:mod:`madeval.settings.config`).

Each run option declared there becomes one click option: ``max_turns`` is ``--max-turns``, its help
ends with the declared default (``[10]``), an integer or number option is typed as such, a yes/no
option is a flag (one that is on by default also has its ``--no-`` form: ``--no-share-calls``), and a
repeatable one (``--endpoint``) may be given several times. Nothing here
names an option: a new field of :class:`~madeval.settings.config.DebateConfig` or
:class:`~madeval.settings.config.RunSettings` appears on the command line by itself.
"""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any, Callable

import click

from madeval.core import options as rule
from madeval.core.options import Option, given_options
from madeval.settings.config import DebateConfig, RunSettings, checked

#: Click types of the converters that have one (the others take text and are read by their rule).
CLICK_TYPES = {rule.integer: int, rule.number: float}


def declared_fields(*models: type) -> list[tuple[str, Option, Any]]:
    """Every option of ``models`` (by default the run's: DebateConfig and RunSettings) meant for the
    command line: (field name, declaration, default); ``tasks`` (the one every run needs) first,
    then in the order of the declarations."""
    found = []
    for cls in models or (DebateConfig, RunSettings):
        for spec in fields(cls):
            declared = spec.metadata.get("option")
            if declared is not None and declared.cli:
                default = spec.default_factory() if callable(spec.default_factory) else spec.default
                found.append((spec.name, declared, default))
    return sorted(found, key=lambda found_option: found_option[0] != "tasks")


def flag_names(name: str, declared: Option, default: Any = None) -> list[str]:
    """The spellings of option ``name``: ``--max-turns``, or the declared ones (``--endpoint``),
    plus short forms (``-t``); a yes/no option on by default (or ``negatable``) is
    ``--share-calls/--no-share-calls``."""
    long_form = [f for f in declared.flags if f.startswith("--")] or [f"--{name.replace('_', '-')}"]
    if declared.convert is rule.flag and (default is True or declared.negatable):
        long_form = [f"{long_form[0]}/--no-{long_form[0][2:]}", *long_form[1:]]
    return [*long_form, *(f for f in declared.flags if not f.startswith("--"))]


def settings_option(name: str, declared: Option, default: Any, *, help: str | None = None,
                    shown_default: str | None = None) -> Callable:
    """The click option of one declared run option; ``help`` and ``shown_default`` replace the
    declared ones where another command uses the option differently (``rescore``)."""
    if help is not None or shown_default is not None:
        declared = replace(declared, help=help or declared.help, shown_default=shown_default or declared.shown_default)
    text = declared.help_text(default)
    kwargs: dict[str, Any] = {"help": text}
    if declared.convert is rule.flag:
        kwargs.update(is_flag=True, default=None)
    elif declared.choices:
        kwargs["type"] = click.Choice(list(declared.choices))
    elif declared.convert in CLICK_TYPES:
        kwargs["type"] = CLICK_TYPES[declared.convert]
    if declared.multiple:
        kwargs["multiple"] = True
    return click.option(*flag_names(name, declared, default), name, **kwargs)


def settings_options(command: Callable) -> Callable:
    """Decorate ``command`` with a click option for every run option of the settings model."""
    for name, declared, default in reversed(declared_fields()):
        command = settings_option(name, declared, default)(command)
    return command


def model_options(model: type, *names: str) -> Callable[[Callable], Callable]:
    """A decorator adding the click options of ``model``'s declared options (only ``names``, if
    given), e.g. ``madeval leaderboard``'s from :class:`~madeval.settings.board_options.LeaderboardOptions`."""

    def decorate(command: Callable) -> Callable:
        for name, declared, default in reversed(declared_fields(model)):
            if not names or name in names:
                command = settings_option(name, declared, default)(command)
        return command

    return decorate


def shared_option(name: str, **overrides: Any) -> Callable:
    """The click option of run option ``name`` for another command (same flag, type and rule)."""
    for field_name, declared, default in declared_fields():
        if field_name == name:
            return settings_option(field_name, declared, default, **overrides)
    raise KeyError(name)


def read_given(given: dict[str, Any]) -> dict[str, Any]:
    """The given options read by their rules (for commands that use a few run options as they are)."""
    return {key: checked(key, value) for key, value in given_options(given).items()}
