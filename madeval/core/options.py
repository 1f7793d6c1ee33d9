"""How option values are read and checked: the one place a run option or a component option is
converted from text (the command line) or from YAML's types (a config file).

A run option is declared once, as a field of :class:`madeval.settings.config.DebateConfig` or
:class:`madeval.settings.config.RunSettings` made by :func:`option`: its default, its help text and its
:class:`Option` rule (how a value is converted, which values are allowed). The command line
(:mod:`madeval.cli.settings_options`), the config-file keys and the run record are derived from
those fields. Component options (``--decider-args after_turns=2``) have no declaration of their
own: :func:`convert_component_option` reads them by the type of the factory's default.

A rule raises ValueError with the end of a sentence ("must be an integer, got 'three'"); the caller
puts the option's name in front.
"""

from __future__ import annotations

import json
import math
from dataclasses import MISSING, Field, dataclass, field
from typing import Any, Callable, Iterator

from madeval.errors import UsageError

#: Characters of a value an error message shows at most (:func:`shown`).
SHOWN_CHARACTERS = 60


def shown(value: Any, limit: int = SHOWN_CHARACTERS) -> str:
    """A value as the user wrote it: text quoted, YAML's words for null and booleans, lists and
    mappings as JSON; cut to about ``limit`` characters with ``…``.

    Only the start of a value is ever rendered, so a message about a huge or deeply nested value
    (a YAML alias bomb, a reply of megabytes) costs what ``limit`` costs, not what the value does."""
    if isinstance(value, str):
        return repr(value) if len(value) <= limit else repr(value[:limit]) + "…"
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if not isinstance(value, (dict, list)):
        text = str(value)
        return text if len(text) <= limit else text[: limit - 1] + "…"
    pieces, size = [], 0
    for piece in _json_pieces(value, limit):
        pieces.append(piece)
        size += len(piece)
        if size > limit:
            return "".join(pieces)[: limit - 1] + "…"
    return "".join(pieces)


def _json_pieces(value: Any, limit: int) -> Iterator[str]:
    """``value`` as JSON (``default=str``), a piece at a time, for :func:`shown` to stop early.
    Strings are cut past ``limit`` characters (the caller cuts there anyway)."""
    if value is None or isinstance(value, bool):
        yield json.dumps(value)
    elif isinstance(value, dict):
        yield "{"
        for index, (key, item) in enumerate(value.items()):
            yield ", " if index else ""
            yield from _json_pieces(key if isinstance(key, str) else str(key), limit)
            yield ": "
            yield from _json_pieces(item, limit)
        yield "}"
    elif isinstance(value, (list, tuple)):
        yield "["
        for index, item in enumerate(value):
            yield ", " if index else ""
            yield from _json_pieces(item, limit)
        yield "]"
    elif isinstance(value, str):
        yield json.dumps(value[: limit + 1])
    elif isinstance(value, (int, float)):
        yield json.dumps(value)
    else:  # as json.dumps(default=str) would: the text, quoted
        yield json.dumps(str(value)[: limit + 1])


def snake_keys(mapping: dict[Any, Any]) -> dict[str, Any]:
    """``mapping`` with its keys written in snake_case (``max-turns`` -> ``max_turns``)."""
    return {str(key).replace("-", "_"): value for key, value in mapping.items()}


def given_options(options: dict[str, Any]) -> dict[str, Any]:
    """The options given: those left out (None, or a repeatable option with no value) dropped, so
    their defaults apply. The command line and :func:`madeval.evaluate` both read options so."""
    return {key: value for key, value in options.items() if value not in (None, ())}


def comma_parts(text: str) -> list[str]:
    """``"a, b,,c"`` -> ``["a", "b", "", "c"]``: the one place text is split at commas."""
    return [part.strip() for part in text.split(",")]


def comma_names(text: str) -> list[str]:
    """``"a, b,,c"`` -> ``["a", "b", "c"]``: names separated by commas, empty parts left out."""
    return [part for part in comma_parts(text) if part]


# Converters: a value (text or a YAML value) -> the option's type.


def integer(value: Any) -> int:
    """An integer, from an int or its text."""
    if not isinstance(value, bool) and isinstance(value, (int, str)):
        try:
            return int(value)
        except ValueError:
            pass
    raise ValueError(f"must be an integer, got {shown(value)}")


def number(value: Any) -> float:
    """A finite number, from an int, a float or its text."""
    if not isinstance(value, bool) and isinstance(value, (int, float, str)):
        try:
            result = float(value)
        except ValueError:
            pass
        else:
            if math.isfinite(result):
                return result
    raise ValueError(f"must be a number, got {shown(value)}")


def text(value: Any) -> str:
    """Text; a YAML number is read as its text (``model: 7`` is ``"7"``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"must be text, got {shown(value)}")


def flag(value: Any) -> bool:
    """True or false, from a boolean or a word (true/yes/on/1, false/no/off/0)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "on", "1"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "no", "off", "0"):
        return False
    raise ValueError(f"must be true or false, got {shown(value)}")


def names(value: Any) -> list[str]:
    """``"a,b"`` or a list of names (``None`` is no names)."""
    if value is None:
        return []
    if isinstance(value, str):
        return comma_names(value)
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) and v.strip() for v in value):
        return [v.strip() for v in value]
    raise ValueError(f"must be a name, names separated by commas or a list of names, got {shown(value)}")


def persona(value: Any) -> str | list[str]:
    """One generator for every agent, or one per agent (``"a,b,c"`` or a list)."""
    listed = names(value)
    if not listed:
        raise ValueError(f"must name a persona generator, got {shown(value)}")
    return listed[0] if isinstance(value, str) and len(listed) == 1 else listed


def paths(value: Any) -> list[str]:
    """One folder or a list of folders (not split at commas: a path may hold one)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ValueError(f"must be a folder or a list of folders, got {shown(value)}")


def key_values(text: str) -> dict[str, str]:
    """``"a=1,b=x"`` -> ``{"a": "1", "b": "x"}`` (component options written on one line)."""
    options = {}
    for part in comma_parts(text):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise UsageError(f"expected key=value, got '{part}'")
        options[key.strip()] = value.strip()
    return options


def count_or_fraction(value: Any) -> int | float:
    """A number of items (an integer) or a fraction of them (a number between 0 and 1, as lm-eval's
    ``--limit 0.1``)."""
    if isinstance(value, (int, str)) and not isinstance(value, bool):
        try:
            return int(value)
        except ValueError:
            pass
    try:
        fraction = number(value)
    except ValueError:
        raise ValueError(f"must be an integer or a fraction between 0 and 1, got {shown(value)}") from None
    if 0 < fraction < 1:
        return fraction
    raise ValueError(f"must be an integer, got {shown(value)} (or a fraction between 0 and 1)")


def count_or_fraction_check(value: int | float) -> str | None:
    """At least one item, or a fraction (converted already)."""
    if isinstance(value, int) and value < 1:
        return f"must be at least 1, got {value}"
    return None


#: Per-call generation parameters ``--gen-kwargs`` may set, and lm-eval's names for two of them.
GENERATION_KEYS = ("temperature", "top_p", "max_tokens", "stop", "presence_penalty", "frequency_penalty")
LM_EVAL_GENERATION_NAMES = {"until": "stop", "max_gen_toks": "max_tokens"}


def generation_kwargs(value: Any) -> dict[str, Any]:
    """``"temperature=0,until=Question:"`` (or a mapping) -> OpenAI request parameters. lm-eval's
    names are accepted (``until``, ``max_gen_toks``; ``do_sample=false`` is ``temperature=0``)."""
    params: dict[str, Any] = {}
    for key, raw in component_options(value).items():
        key = LM_EVAL_GENERATION_NAMES.get(str(key), str(key))
        if key == "do_sample":
            if not flag(raw):
                params.setdefault("temperature", 0.0)
            continue
        if key not in GENERATION_KEYS:
            raise ValueError(f"has no key '{key}' (keys: {', '.join(GENERATION_KEYS)}, until, max_gen_toks, do_sample)")
        if key == "stop":
            params[key] = raw if isinstance(raw, list) else text(raw)
        elif key == "max_tokens":
            params[key] = integer(raw)
        else:
            params[key] = number(raw)
    return params


def key_value_texts(value: Any) -> dict[str, str]:
    """``"a=1,b=x"`` or a mapping -> ``{"a": "1", "b": "x"}`` (every value text)."""
    return {key: text(v) for key, v in component_options(value).items()}


def component_options(value: Any) -> dict[str, Any]:
    """Component options (and any other key=value option): a mapping, or ``key=value,...`` as on
    the command line; a malformed one is a ValueError, so the error names the option."""
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            return key_values(value) if value.strip() else {}
        except UsageError as error:
            raise ValueError(f"must be a mapping of options or key=value,...; {error}") from None
    if isinstance(value, dict):
        return {str(key): option for key, option in value.items()}
    raise ValueError(f"must be a mapping of options (key: value), got {shown(value)}")


def parse_endpoints(values: Any) -> dict[str, str]:
    """Named endpoints from ``["local=http://...", ...]`` (``--endpoint``) or a mapping."""
    if isinstance(values, dict):
        if all(isinstance(k, str) and k and isinstance(v, str) and v for k, v in values.items()):
            return dict(values)
        raise ValueError(f"must map endpoint names to URLs, got {shown(values)}")
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, (list, tuple)):
        raise ValueError(f"must map endpoint names to URLs, got {shown(values)}")
    table = {}
    for value in values:
        name, eq, url = str(value).partition("=")
        if not eq or not name.strip() or not url.strip():
            raise ValueError(f"expects NAME=URL, got {shown(value)}")
        table[name.strip()] = url.strip()
    return table


def limits(value: Any) -> int | dict[str, int] | None:
    """``N`` for every endpoint, or a limit per endpoint: ``{name: N}`` or ``"name=N,..."``."""
    if value is None:
        return None
    if isinstance(value, str) and "=" in value:
        try:
            value = key_values(value)
        except UsageError:
            raise ValueError(f"must be a number or NAME=N,..., got {shown(value)}") from None
    if isinstance(value, dict):
        table = {}
        for name, limit in value.items():
            try:
                table[str(name)] = integer(limit)
            except ValueError:
                raise ValueError(f"of endpoint {name} must be an integer, got {shown(limit)}") from None
        return table
    try:
        return integer(value)
    except ValueError:
        raise ValueError(f"must be an integer or NAME=N,..., got {shown(value)}") from None


def transport_name(value: Any) -> str:
    """A transport name, its old alias replaced (``direct`` is now ``aiohttp``)."""
    from madeval.llm.transports import canonical_transport  # openai, behind it, takes a second: only when named

    return canonical_transport(text(value))


# Checks: a converted value -> None, or what is wrong with it.


def at_least(low: int) -> Callable[[Any], str | None]:
    """At least ``low`` (for a limit per endpoint: each of them)."""

    def check(value: Any) -> str | None:
        if isinstance(value, dict):  # a limit per endpoint
            bad = [(name, v) for name, v in value.items() if v < low]
            return f"of endpoint {bad[0][0]} must be at least {low}, got {bad[0][1]}" if bad else None
        return None if value >= low else f"must be at least {low}, got {value}"

    return check


def between(low: float, high: float) -> Callable[[Any], str | None]:
    """From ``low`` to ``high``, both included."""
    return lambda value: None if low <= value <= high else f"must be between {low} and {high}, got {value}"


def inside(low: float, high: float) -> Callable[[Any], str | None]:
    """Strictly between ``low`` and ``high``."""
    return lambda value: None if low < value < high else (
        f"must be between {low} and {high} (exclusive), got {value}"
    )


def positive(value: float) -> str | None:
    """Above zero."""
    return None if value > 0 else f"must be positive, got {value}"


def top_p(value: float) -> str | None:
    """In (0, 1]."""
    return None if 0 < value <= 1 else f"must be in (0, 1], got {value}"


def one_of(*allowed: str) -> Callable[[Any], str | None]:
    """One of the ``allowed`` words."""
    return lambda value: None if value in allowed else (
        f"must be one of {', '.join(allowed)}, got '{value}'"
    )


def known_transport(value: str) -> str | None:
    """A transport madeval has (:data:`madeval.llm.transports.TRANSPORTS`)."""
    from madeval.llm.transports import TRANSPORTS  # as above

    return one_of(*TRANSPORTS)(value)


def sample_size(value: str) -> str | None:
    """``all``, ``fpc`` or a number of items (at least 1)."""
    word = value.strip().lower()
    if word in ("all", "fpc"):
        return None
    try:
        count = int(word)
    except ValueError:
        return f"must be 'all', 'fpc' or a number of items, got '{value}'"
    return None if count >= 1 else f"must be at least 1 item, got {count}"


@dataclass(frozen=True)
class Option:
    """One run option's declaration besides its type and default: how a value is read
    (``convert``), which values are allowed (``check``), whether YAML ``null`` means the default
    (``nullable``), and how the command line shows it.

    ``help`` is the ``--help`` text (the default is appended to it, see :meth:`help_text`);
    ``shown_default`` describes a default that is not a plain value (``"agent 1's"``);
    ``flags`` are extra spellings (``-t``) or replace the derived one (``--endpoint``);
    ``cli=False`` keeps an option to config files (secrets, rarely changed tuning);
    ``secret`` options never appear in messages or records;
    ``results=False`` marks an option that cannot change a run's results (limits, transport, where
    files go): the run folder's fingerprint leaves it out, so a resume may change it;
    ``added_later`` marks a result option added after run folders and configuration ids were first
    written: while it holds its default it is left out of the configuration's identity (and id) or
    the run's fingerprint, so older ids stay and older folders still resume;
    ``negatable`` gives a yes/no option off by default its ``--no-`` form too (one that may be on
    by other means than its default: the embedded model's fitted settings).
    """

    convert: Callable[[Any], Any]
    check: Callable[[Any], str | None] | None = None
    nullable: bool = False
    help: str = ""
    shown_default: str | None = None
    flags: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    multiple: bool = False
    cli: bool = True
    secret: bool = False
    results: bool = True
    added_later: bool = False
    negatable: bool = False

    def read(self, value: Any) -> Any:
        """``value`` converted and checked; ValueError saying what is wrong if it is not."""
        if value is None and self.nullable:
            return None
        value = self.convert(value)
        problem = self.check(value) if self.check is not None else None
        if problem:
            raise ValueError(problem)
        return value

    def help_text(self, default: Any) -> str:
        """The help with the default in brackets before its final period: ``Number of agents [3].``"""
        if self.shown_default is not None:
            value = self.shown_default
        elif default is None or isinstance(default, bool) or default in ("", [], {}):
            return self.help
        else:
            value = str(default)
        body, period = (self.help[:-1], ".") if self.help.endswith(".") else (self.help, "")
        return f"{body} [{value}]{period}"


def option(default: Any = MISSING, *, factory: Callable[[], Any] | None = None, help: str,
           convert: Callable[[Any], Any], check: Callable[[Any], str | None] | None = None,
           choices: tuple[str, ...] = (), repr: bool = True, **declared: Any) -> Field:
    """A dataclass field declaring one run option (see :class:`Option` for ``declared``).

    ``choices`` both checks the value and lists the words in ``--help``."""
    if choices:
        check = one_of(*choices)
    nullable = default is None
    rule = Option(convert, check, nullable, help, choices=choices, **declared)
    if factory is not None:
        return field(default_factory=factory, repr=repr, metadata={"option": rule})
    return field(default=default, repr=repr, metadata={"option": rule})


def declared_option(spec: Field) -> Option | None:
    """The :class:`Option` a dataclass field declares, or None for a field that is no option."""
    return spec.metadata.get("option")


# Component options: typed by the factory's default, read by the same converters.


def _strict_text(value: Any) -> str:
    """A text option of a component takes text only (quote a number in YAML)."""
    if isinstance(value, str):
        return value
    raise ValueError(f"must be text, got {shown(value)}")


def _items(value: Any) -> list[Any]:
    """A list option of a component: a list, or items separated by ``;`` on the command line."""
    if isinstance(value, str):
        return [part.strip() for part in value.split(";") if part.strip()]
    if isinstance(value, (list, tuple)):
        return list(value)
    raise ValueError(f"must be a list (items separated by ';'), got {shown(value)}")


def _converter_for(default: Any) -> Callable[[Any], Any] | None:
    """The converter of a component option whose default is ``default`` (None: anything goes)."""
    if isinstance(default, bool):
        return flag
    for kind, convert in ((int, integer), (float, number), (str, _strict_text), ((list, tuple), _items)):
        if isinstance(default, kind):
            return convert
    return None


def convert_component_option(kind: str, name: str, key: str, value: Any, default: Any) -> Any:
    """Option ``key`` of component ``name`` (a ``kind``) read by the type of its ``default``.

    Text (the command line's ``key=value``) is converted; a typed value (a config file's YAML) must
    already have the type and is kept as it is. A bad value is a one-line UsageError naming the
    component and the option: ``decider 'counting' option after_turns must be an integer, got 'abc'``.
    Options without a typed default (required, or ``None``) are passed on unchanged.
    """
    convert = _converter_for(default)
    if convert is None:
        return value
    try:
        converted = convert(value)
    except ValueError as error:
        raise UsageError(f"{kind} '{name}' option {key} {error}") from None
    return converted if isinstance(value, str) else value
