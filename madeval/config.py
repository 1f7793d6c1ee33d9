"""Run settings and debate configurations, from the command line or a YAML file.

A *configuration* (:class:`DebateConfig`) is one choice of every component plus agent count,
turn limit and models: one row of a leaderboard. :class:`RunSettings` adds what the run needs
around it: tasks, sampling, repeats, endpoints, limits and the output folder. The same keys work
on the command line (``--max-turns``) and in a ``--config`` YAML file (``max_turns``).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

import yaml

from .errors import UsageError
from .presets import apply_preset

API_KEY_VARIABLES = ("MADEVAL_API_KEY", "OPENAI_API_KEY")


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
        """Everything that changes the debate (not the display name), for ids and records."""
        data = asdict(self)
        data.pop("name")
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
    endpoint_concurrency: int | None = None
    timeout: float = 120.0
    max_attempts: int = 8
    retry_delay: float = 0.5
    transport: str = "openai"
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
        from .sampling import parse_sample

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
        data.pop("configurations")
        data.pop("leaderboard")  # how results are shown, not what was run (stored apart)
        return data


DEBATE_KEYS = {f.name for f in fields(DebateConfig)}
RUN_KEYS = {f.name for f in fields(RunSettings)} - {"configurations", "leaderboard"}


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
    return {str(key).replace("-", "_"): value for key, value in data.items()}


def build_settings(options: dict[str, Any]) -> RunSettings:
    """Turn merged options (config file, then command line on top) into :class:`RunSettings`.

    A sweep file (``common``, ``grid``, ``runs``; see :mod:`madeval.sweep`) gives several
    configurations; ``leaderboard`` holds the leaderboard options (:mod:`madeval.leaderboard`).
    """
    from .leaderboard.options import LeaderboardOptions
    from .sweep import SWEEP_KEYS, expand, is_sweep

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
    if isinstance(debate.get("challenge"), str):
        debate["challenge"] = [c.strip() for c in debate["challenge"].split(",") if c.strip()]
    if isinstance(debate.get("agent_models"), str):
        debate["agent_models"] = [m.strip() for m in debate["agent_models"].split(",") if m.strip()]
    return DebateConfig(**debate)


def collective_improvement(debate: dict[str, Any]) -> dict[str, Any]:
    """Collective Improvement (seed 001, Section 4.3) is the collective_refinement paradigm."""
    if not debate.get("collective_improvement"):
        return debate
    if debate.get("paradigm", "collective_refinement") not in ("collective_refinement", "cr"):
        raise UsageError("collective improvement replaces the paradigm; leave out --paradigm")
    return {**debate, "paradigm": "collective_refinement"}


def check_settings(settings: RunSettings) -> None:
    """Reject values that cannot work, with one clear line."""
    if not settings.tasks:
        raise UsageError("no tasks given: use --tasks NAME[,NAME...] (see 'madeval tasks')")
    for name, value, low in (
        ("repeats", settings.repeats, 1),
        ("concurrency", settings.concurrency, 1),
        ("max_tokens", settings.max_tokens, 1),
        ("max_attempts", settings.max_attempts, 1),
    ):
        if value < low:
            raise UsageError(f"{name} must be at least {low}, got {value}")
    from .llm.transports import TRANSPORTS

    if settings.transport not in TRANSPORTS:
        raise UsageError(f"transport must be one of {', '.join(TRANSPORTS)}, got '{settings.transport}'")
    if settings.limit is not None and settings.limit < 1:
        raise UsageError(f"limit must be at least 1, got {settings.limit}")
    from .sampling import parse_sample

    settings.sample = str(settings.sample).strip().lower()
    try:
        settings.confidence, settings.margin = float(settings.confidence), float(settings.margin)
    except (TypeError, ValueError):
        raise UsageError(f"confidence and margin must be numbers, got {settings.confidence!r}, {settings.margin!r}") from None
    parse_sample(settings.sample, settings.confidence, settings.margin)
    if settings.timeout <= 0:
        raise UsageError(f"timeout must be positive, got {settings.timeout}")
    if not 0 <= settings.temperature <= 2:
        raise UsageError(f"temperature must be between 0 and 2, got {settings.temperature}")
    if not 0 < settings.top_p <= 1:
        raise UsageError(f"top_p must be in (0, 1], got {settings.top_p}")
    for config in settings.configurations:
        if config.agents < 1:
            raise UsageError(f"agents must be at least 1, got {config.agents}")
        if config.max_turns < 1:
            raise UsageError(f"max_turns must be at least 1, got {config.max_turns}")
        if not 0 <= config.neutral_agents < config.agents:
            raise UsageError("neutral_agents must be between 0 and agents - 1")
        if config.extract not in ("task", "llm"):
            raise UsageError(f"extract must be 'task' or 'llm', got '{config.extract}'")
        if config.agent_models and len(config.agent_models) != config.agents:
            raise UsageError(
                f"agent_models lists {len(config.agent_models)} models for {config.agents} agents"
            )
        config.personas()
