"""Run settings and debate configurations, from the command line or a YAML file.

A *configuration* (:class:`DebateConfig`) is one choice of every component plus agent count,
turn limit and models: one row of a leaderboard. :class:`RunSettings` adds what the run needs
around it: tasks, sampling, repeats, endpoints, limits and the output folder. The same keys work
on the command line (``--max-turns``) and in a ``--config`` YAML file (``max_turns``).
"""

from __future__ import annotations

import difflib
import hashlib
import json
import math
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable

import yaml

from .errors import UsageError
from .leaderboard.options import LeaderboardOptions
from .llm.endpoint_url import public_url
from .plugins import components
from .presets import apply_preset
from .sampling import parse_sample
from .sweep import SWEEP_KEYS, expand, is_sweep

API_KEY_VARIABLES = ("MADEVAL_API_KEY", "OPENAI_API_KEY")
#: Options whose values are never shown in an error message.
SECRET_KEYS = frozenset({"api_key"})


@dataclass
class DebateConfig:
    """One debate configuration: components, their options, agents, turns and models."""

    persona: str | list[str] = "none"
    responder: str = "simple"
    paradigm: str = "memory"
    decider: str = "majority_consensus"
    persona_args: dict[str, Any] = field(default_factory=dict)
    responder_args: dict[str, Any] = field(default_factory=dict)
    paradigm_args: dict[str, Any] = field(default_factory=dict)
    decider_args: dict[str, Any] = field(default_factory=dict)
    agents: int = 3
    neutral_agents: int = 0
    max_turns: int = 10
    agent_models: list[str] = field(default_factory=list)
    judge_model: str | None = None
    extract: str = "task"
    all_agents_draft_first: bool = False
    collective_improvement: bool = False
    challenge: list[str] = field(default_factory=list)
    #: Extra metrics (registered names) scored on every debate besides the task's ``metric_list``:
    #: a debate metric such as Free-MAD's ``token_cost`` reads the transcript.
    metrics: list[str] = field(default_factory=list)
    preset: str | None = None
    name: str | None = None

    def personas(self) -> list[str]:
        """One persona generator name per agent."""
        if isinstance(self.persona, str):
            return [self.persona] * self.agents
        if len(self.persona) != self.agents:
            raise UsageError(f"persona lists {len(self.persona)} generators for {self.agents} agents")
        return list(self.persona)

    def identity(self) -> dict[str, Any]:
        """Everything that changes the debate or its scores (not the display name), for ids and
        records. ``metrics`` appears only when it names a metric, so configurations without extra
        metrics keep the ids they had before the option existed."""
        data = asdict(self)
        data.pop("name")
        if not data["metrics"]:
            data.pop("metrics")
        return data

    def config_id(self) -> str:
        """A short stable id of :meth:`identity`."""
        blob = json.dumps(self.identity(), sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:10]

    def label(self) -> str:
        """The display name: the given name, the preset, or the components joined by slashes."""
        if self.name or self.preset:
            return self.name or self.preset
        persona = self.persona if isinstance(self.persona, str) else "+".join(self.persona)
        return f"{persona}/{self.responder}/{self.paradigm}/{self.decider}/{self.agents}a"


@dataclass
class RunSettings:
    """Everything a run needs besides its configurations."""

    tasks: list[str] = field(default_factory=list)
    configurations: list[DebateConfig] = field(default_factory=list)
    repeats: int = 1
    limit: int | None = None
    sample: str = "all"
    confidence: float = 0.95
    margin: float = 0.05
    seed: int = 1234
    model: str | None = None
    base_url: str | None = None
    endpoints: dict[str, str] = field(default_factory=dict)
    concurrency: int = 64
    endpoint_concurrency: int | dict[str, int] | None = None  # one limit, or a limit per endpoint name
    timeout: float = 120.0
    max_attempts: int = 8
    retry_delay: float = 0.5
    transport: str = "aiohttp"
    max_response_mb: float = 16.0  # the largest response body accepted, in MiB
    temperature: float = 1.0
    top_p: float = 1.0
    max_tokens: int = 1024
    output_path: str | None = None
    include_path: list[str] = field(default_factory=list)
    cache: str | None = None
    api_key: str | None = field(default=None, repr=False)
    leaderboard: dict[str, Any] = field(default_factory=dict)

    def sample_spec(self):
        """The parsed ``sample`` setting (:class:`madeval.sampling.SampleSpec`)."""
        return parse_sample(self.sample, self.confidence, self.margin)

    def generation(self) -> dict[str, Any]:
        """Sampling parameters sent with every call (defaults: MALLM paper, Appendix E)."""
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "presence_penalty": 0.0,
            "frequency_penalty": 0.0,
            "max_tokens": self.max_tokens,
        }

    def resolved_api_key(self) -> str:
        """The API key: ``MADEVAL_API_KEY``, else ``OPENAI_API_KEY``, else the config file's."""
        for name in API_KEY_VARIABLES:
            if os.environ.get(name):
                return os.environ[name]
        return self.api_key or "-"

    def public(self) -> dict[str, Any]:
        """The settings as stored with results: no API key, configurations listed separately."""
        data = asdict(self)
        data.pop("api_key")
        # A base URL may carry credentials (user info, ?api-key=): never stored.
        data["base_url"] = public_url(self.base_url) if self.base_url else self.base_url
        data["endpoints"] = {name: public_url(url) for name, url in self.endpoints.items()}
        data.pop("configurations")
        data.pop("leaderboard")  # how results are shown, not what was run (stored apart)
        return data


DEBATE_KEYS = {f.name for f in fields(DebateConfig)}
RUN_KEYS = {f.name for f in fields(RunSettings)} - {"configurations", "leaderboard"}


# Option rules. Every option has one: it turns a value into the option's type (config-file values
# arrive with YAML's types, so ``"2"`` is read like ``--limit 2`` and ``three`` is refused like
# ``--agents three``) and checks its range. read_config_file applies them to a file's values and
# check_settings to the finished settings, so the command line and a file get the same limits.
# A rule raises ValueError with the end of a sentence: "must be an integer, got 'three'".


def _shown(value: Any) -> str:
    """A value as the user wrote it: text quoted, YAML's words for null and booleans."""
    if isinstance(value, str):
        return repr(value)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (dict, list)):
        text = json.dumps(value, default=str)
        return text if len(text) <= 60 else text[:59] + "…"
    return str(value)


def _integer(value: Any) -> int:
    if not isinstance(value, bool) and isinstance(value, (int, str)):
        try:
            return int(value)
        except ValueError:
            pass
    raise ValueError(f"must be an integer, got {_shown(value)}")


def _number(value: Any) -> float:
    if not isinstance(value, bool) and isinstance(value, (int, float, str)):
        try:
            number = float(value)
        except ValueError:
            pass
        else:
            if math.isfinite(number):
                return number
    raise ValueError(f"must be a number, got {_shown(value)}")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"must be text, got {_shown(value)}")


def _flag(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "yes", "on", "1"):
        return True
    if isinstance(value, str) and value.strip().lower() in ("false", "no", "off", "0"):
        return False
    raise ValueError(f"must be true or false, got {_shown(value)}")


def _names(value: Any) -> list[str]:
    """``"a,b"`` or a list of names (``None`` is no names)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) and v.strip() for v in value):
        return [v.strip() for v in value]
    raise ValueError(f"must be a name, names separated by commas or a list of names, got {_shown(value)}")


def _registered_metrics(names: list[str]) -> str | None:
    """Every name must be a registered metric (``madeval plugins`` lists them)."""
    for name in names:
        try:
            components().metrics.resolve(name)
        except UsageError as error:
            return f"must name registered metrics: {error}"
    return None


def _persona(value: Any) -> str | list[str]:
    """One generator for every agent, or one per agent (``"a,b,c"`` or a list)."""
    names = _names(value)
    if not names:
        raise ValueError(f"must name a persona generator, got {_shown(value)}")
    return names[0] if isinstance(value, str) and len(names) == 1 else names


def _paths(value: Any) -> list[str]:
    """One folder or a list of folders (not split at commas: a path may hold one)."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (list, tuple)) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ValueError(f"must be a folder or a list of folders, got {_shown(value)}")


def key_values(text: str) -> dict[str, str]:
    """``"a=1,b=x"`` -> ``{"a": "1", "b": "x"}`` (component options written on one line)."""
    options = {}
    for part in text.split(","):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise UsageError(f"expected key=value, got '{part}'")
        options[key.strip()] = value.strip()
    return options


def _options(value: Any) -> dict[str, Any]:
    """Component options: a mapping, or ``key=value,...`` as on the command line."""
    if value is None:
        return {}
    if isinstance(value, str):
        try:
            return key_values(value) if value.strip() else {}
        except UsageError as error:
            raise ValueError(f"must be a mapping of options or key=value,...; {error}") from None
    if isinstance(value, dict):
        return {str(key): option for key, option in value.items()}
    raise ValueError(f"must be a mapping of options (key: value), got {_shown(value)}")


def parse_endpoints(values: Any) -> dict[str, str]:
    """Named endpoints from ``["local=http://...", ...]`` (``--endpoint``) or a mapping."""
    if isinstance(values, dict):
        if all(isinstance(k, str) and k and isinstance(v, str) and v for k, v in values.items()):
            return dict(values)
        raise ValueError(f"must map endpoint names to URLs, got {_shown(values)}")
    if isinstance(values, str):
        values = [values]
    if not isinstance(values, (list, tuple)):
        raise ValueError(f"must map endpoint names to URLs, got {_shown(values)}")
    table = {}
    for value in values:
        name, eq, url = str(value).partition("=")
        if not eq or not name.strip() or not url.strip():
            raise ValueError(f"expects NAME=URL, got {_shown(value)}")
        table[name.strip()] = url.strip()
    return table


def _limits(value: Any) -> int | dict[str, int] | None:
    """``N`` for every endpoint, or a limit per endpoint: ``{name: N}`` or ``"name=N,..."``."""
    if value is None:
        return None
    if isinstance(value, str) and "=" in value:
        try:
            value = key_values(value)
        except UsageError:
            raise ValueError(f"must be a number or NAME=N,..., got {_shown(value)}") from None
    if isinstance(value, dict):
        limits = {}
        for name, limit in value.items():
            try:
                limits[str(name)] = _integer(limit)
            except ValueError:
                raise ValueError(f"of endpoint {name} must be an integer, got {_shown(limit)}") from None
        return limits
    try:
        return _integer(value)
    except ValueError:
        raise ValueError(f"must be an integer or NAME=N,..., got {_shown(value)}") from None


def _at_least(low: int) -> Callable[[Any], str | None]:
    def check(value: Any) -> str | None:
        if isinstance(value, dict):  # a limit per endpoint
            bad = [(name, v) for name, v in value.items() if v < low]
            return f"of endpoint {bad[0][0]} must be at least {low}, got {bad[0][1]}" if bad else None
        return None if value >= low else f"must be at least {low}, got {value}"

    return check


def _between(low: float, high: float) -> Callable[[Any], str | None]:
    return lambda value: None if low <= value <= high else f"must be between {low} and {high}, got {value}"


def _inside(low: float, high: float) -> Callable[[Any], str | None]:
    return lambda value: None if low < value < high else (
        f"must be between {low} and {high} (exclusive), got {value}"
    )


def _positive(value: float) -> str | None:
    return None if value > 0 else f"must be positive, got {value}"


def _top_p(value: float) -> str | None:
    return None if 0 < value <= 1 else f"must be in (0, 1], got {value}"


def _one_of(*allowed: str) -> Callable[[Any], str | None]:
    return lambda value: None if value in allowed else (
        f"must be one of {', '.join(allowed)}, got '{value}'"
    )


def _transport_name(value: Any) -> str:
    """A transport name, its old alias replaced (``direct`` is now ``aiohttp``)."""
    from .llm.transports import canonical_transport  # openai, behind it, takes a second: only when named

    return canonical_transport(_text(value))


def _transport(value: str) -> str | None:
    from .llm.transports import TRANSPORTS  # as above

    return _one_of(*TRANSPORTS)(value)


def _sample(value: str) -> str | None:
    text = value.strip().lower()
    if text in ("all", "fpc"):
        return None
    try:
        count = int(text)
    except ValueError:
        return f"must be 'all', 'fpc' or a number of items, got '{value}'"
    return None if count >= 1 else f"must be at least 1 item, got {count}"


@dataclass(frozen=True)
class Rule:
    """How one option is read (``convert``), which values are allowed (``check``) and whether it
    may be left empty (``nullable``: YAML ``null`` means the default)."""

    convert: Callable[[Any], Any]
    check: Callable[[Any], str | None] | None = None
    nullable: bool = False


RULES: dict[str, Rule] = {
    # run settings
    "tasks": Rule(_names),
    "repeats": Rule(_integer, _at_least(1)),
    "limit": Rule(_integer, _at_least(1), nullable=True),
    "sample": Rule(_text, _sample),
    "confidence": Rule(_number, _inside(0, 1)),
    "margin": Rule(_number, _inside(0, 1)),
    "seed": Rule(_integer),
    "model": Rule(_text, nullable=True),
    "base_url": Rule(_text, nullable=True),
    "endpoints": Rule(parse_endpoints),
    "concurrency": Rule(_integer, _at_least(1)),
    "endpoint_concurrency": Rule(_limits, _at_least(1), nullable=True),
    "timeout": Rule(_number, _positive),
    "max_attempts": Rule(_integer, _at_least(1)),
    "retry_delay": Rule(_number, _at_least(0)),
    "transport": Rule(_transport_name, _transport),
    "max_response_mb": Rule(_number, _positive),
    "temperature": Rule(_number, _between(0, 2)),
    "top_p": Rule(_number, _top_p),
    "max_tokens": Rule(_integer, _at_least(1)),
    "output_path": Rule(_text, nullable=True),
    "include_path": Rule(_paths),
    "cache": Rule(_text, nullable=True),
    "api_key": Rule(_text, nullable=True),
    # one configuration
    "persona": Rule(_persona),
    "responder": Rule(_text),
    "paradigm": Rule(_text),
    "decider": Rule(_text),
    "persona_args": Rule(_options),
    "responder_args": Rule(_options),
    "paradigm_args": Rule(_options),
    "decider_args": Rule(_options),
    "agents": Rule(_integer, _at_least(1)),
    "neutral_agents": Rule(_integer, _at_least(0)),
    "max_turns": Rule(_integer, _at_least(1)),
    "agent_models": Rule(_names),
    "judge_model": Rule(_text, nullable=True),
    "extract": Rule(_text, _one_of("task", "llm")),
    "all_agents_draft_first": Rule(_flag),
    "collective_improvement": Rule(_flag),
    "challenge": Rule(_names),
    "metrics": Rule(_names, _registered_metrics),
    "preset": Rule(_text, nullable=True),
    "name": Rule(_text, nullable=True),
}


def check_option(key: str, value: Any) -> Any:
    """``value`` converted by the rule of option ``key`` and checked; ValueError if it is not."""
    rule = RULES.get(key)
    if rule is None:
        return value
    if value is None and rule.nullable:
        return None
    value = rule.convert(value)
    problem = rule.check(value) if rule.check is not None else None
    if problem:
        raise ValueError(problem)
    return value


def _checked(key: str, value: Any, where: str) -> Any:
    try:
        return check_option(key, value)
    except ValueError as error:
        message = str(error)
        if key in SECRET_KEYS:  # never echo what may be a key
            message = message.split(", got ")[0]
        raise UsageError(f"{where}{key} {message}") from None


def check_config(options: dict[str, Any], where: str) -> dict[str, Any]:
    """A config file's options with every value converted and checked (sweep parts included).

    ``where`` names the file in the one-line error, e.g. ``config run.yaml: agents must be an
    integer, got 'three'``.
    """
    known = sorted(DEBATE_KEYS | RUN_KEYS | {"leaderboard", *SWEEP_KEYS})
    unknown = sorted(set(options) - set(known))
    if unknown:
        close = difflib.get_close_matches(unknown[0], known, n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else ""
        raise UsageError(f"{where}: unknown option {', '.join(unknown)}{hint}")
    checked: dict[str, Any] = {}
    for key, value in options.items():
        if key == "leaderboard":
            if value is not None and not isinstance(value, dict):
                raise UsageError(f"{where}: leaderboard must be a mapping of leaderboard options, got {_shown(value)}")
            checked[key] = value
        elif key in ("common", "runs", "grid"):
            checked[key] = _check_sweep_part(key, value, where)
        else:  # at the top of a sweep, ``name`` is the sweep's title: text all the same
            checked[key] = _checked(key, value, f"{where}: ")
    return checked


def _check_sweep_part(part: str, value: Any, where: str) -> Any:
    """``common`` and each of ``runs`` are option mappings; ``grid`` maps options to value lists.
    Shapes are left to :mod:`madeval.sweep` to report; values of known options are checked."""

    def mapping(data: Any, at: str) -> Any:
        if not isinstance(data, dict):
            return data
        normal = {str(k).replace("-", "_"): v for k, v in data.items()}
        return {k: _checked(k, v, f"{where}: {at} ") if k in DEBATE_KEYS else v for k, v in normal.items()}

    if part == "common":
        return mapping(value, "common")
    if part == "runs":
        return [mapping(run, f"runs[{i}]") for i, run in enumerate(value)] if isinstance(value, list) else value
    if not isinstance(value, dict):
        return value
    grid = {}
    for key, values in ((str(k).replace("-", "_"), v) for k, v in value.items()):
        if key in DEBATE_KEYS and isinstance(values, list):
            values = [_checked(key, v, f"{where}: grid ") for v in values]
        grid[key] = values
    return grid


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The options of a ``--config`` YAML file, with keys in snake_case."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = yaml.safe_load(handle) or {}
    except OSError as error:
        raise UsageError(f"cannot read config {path}: {error.strerror}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise UsageError(f"malformed YAML in {path}{where}: {getattr(error, 'problem', error)}") from None
    if not isinstance(data, dict):
        raise UsageError(f"config {path} must be a mapping of options")
    options = {str(key).replace("-", "_"): value for key, value in data.items()}
    return check_config(options, f"config {path}")


def build_settings(options: dict[str, Any]) -> RunSettings:
    """Turn merged options (config file, then command line on top) into :class:`RunSettings`.

    A sweep file (``common``, ``grid``, ``runs``; see :mod:`madeval.sweep`) gives several
    configurations; ``leaderboard`` holds the leaderboard options (:mod:`madeval.leaderboard`).
    """
    options = dict(options)
    leaderboard = LeaderboardOptions.from_dict(options.pop("leaderboard", None))
    unknown = sorted(set(options) - DEBATE_KEYS - RUN_KEYS - set(SWEEP_KEYS))
    if unknown:
        raise UsageError(f"unknown option {', '.join(unknown)}")
    if is_sweep(options):
        debates, sweep_name = expand(options, DEBATE_KEYS)
        leaderboard.title = leaderboard.title or sweep_name
    else:
        debates = [{k: v for k, v in options.items() if k in DEBATE_KEYS}]
    run = {key: value for key, value in options.items() if key in RUN_KEYS}
    if isinstance(run.get("tasks"), str):
        run["tasks"] = [t.strip() for t in run["tasks"].split(",") if t.strip()]
    if isinstance(run.get("include_path"), str):
        run["include_path"] = [run["include_path"]]
    settings = RunSettings(**run, leaderboard=leaderboard.to_dict())
    settings.configurations = [debate_config(debate) for debate in debates]
    labels = [config.label() for config in settings.configurations]
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise UsageError(f"two configurations are both labelled {twice[0]}; give them distinct names")
    check_settings(settings)
    return settings


def debate_config(options: dict[str, Any]) -> DebateConfig:
    """One :class:`DebateConfig` from component options (presets applied, lists parsed)."""
    debate = collective_improvement(apply_preset(dict(options)))
    for key in ("challenge", "metrics"):
        if isinstance(debate.get(key), str):
            debate[key] = [c.strip() for c in debate[key].split(",") if c.strip()]
    if isinstance(debate.get("agent_models"), str):
        debate["agent_models"] = [m.strip() for m in debate["agent_models"].split(",") if m.strip()]
    return DebateConfig(**debate)


def collective_improvement(debate: dict[str, Any]) -> dict[str, Any]:
    """``--collective-improvement`` selects the collective_improvement paradigm (seed 001, 4.3).

    The flag is then cleared, so that the configuration (and its id, its cached calls and its
    leaderboard row) is the same as one written ``--paradigm collective_improvement``."""
    if not debate.get("collective_improvement"):
        return debate
    if (debate.get("paradigm") or "collective_improvement") not in ("collective_improvement", "ci"):
        raise UsageError("collective improvement replaces the paradigm; leave out --paradigm")
    return {**debate, "paradigm": "collective_improvement", "collective_improvement": False}


def check_settings(settings: RunSettings) -> None:
    """Reject values that cannot work, with one clear line.

    Every option is converted and checked by its rule (:data:`RULES`, the same as for a config
    file), then what depends on several options is checked.
    """
    for key in (f.name for f in fields(RunSettings)):
        if key in RULES:
            setattr(settings, key, _checked(key, getattr(settings, key), ""))
    if not settings.tasks:
        raise UsageError("no tasks given: use --tasks NAME[,NAME...] (see 'madeval tasks')")
    settings.sample = settings.sample.strip().lower()
    parse_sample(settings.sample, settings.confidence, settings.margin)
    for config in settings.configurations:
        for key in (f.name for f in fields(DebateConfig)):
            if key in RULES:
                setattr(config, key, _checked(key, getattr(config, key), ""))
        if not 0 <= config.neutral_agents < config.agents:
            raise UsageError("neutral_agents must be between 0 and agents - 1")
        if config.agent_models and len(config.agent_models) != config.agents:
            raise UsageError(
                f"agent_models lists {len(config.agent_models)} models for {config.agents} agents"
            )
        config.personas()
