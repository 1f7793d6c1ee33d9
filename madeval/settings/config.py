"""Run settings and debate configurations, from the command line or a YAML file.

A *configuration* (:class:`DebateConfig`) is one choice of every component plus agent count,
turn limit and models: one row of a leaderboard. :class:`RunSettings` adds what the run needs
around it: tasks, sampling, repeats, endpoints, limits and the output folder.

Every run option is declared once, here, as a field made by :func:`madeval.core.options.option`: its
type, default, help text and rule. The command line (``--max-turns``, derived by
:mod:`madeval.cli.settings_options`), the config-file keys (``max_turns``), their checks and the
settings stored with results (:meth:`RunSettings.public`) all come from these declarations.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
import json
import os
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path
from typing import Any

from madeval.core import options as rule
from madeval.core.options import convert_component_option, declared_option, option, parse_endpoints, shown, snake_keys
from madeval.core.plugins import registries
from madeval.errors import UsageError
from madeval.llm.batch.settings import BatchSettings
from madeval.llm.batch.settings import parse_batch_options as batch_options
from madeval.llm.endpoint_url import public_url
from madeval.llm.routing import GRAINS, SGLANG_ROUTER_HEADER, VLLM_ROUTER_HEADER, header_name_problem
from madeval.settings.board_options import LeaderboardOptions
from madeval.settings.presets import apply_preset
from madeval.settings.sampling import parse_sample
from madeval.settings.sweep import SWEEP_KEYS, expand, is_sweep
from madeval.util.yaml_loader import read_yaml_file

API_KEY_VARIABLES = ("MADEVAL_API_KEY", "OPENAI_API_KEY")
#: LLM calls in flight at most when --concurrency is not given (and the transport is not batch).
DEFAULT_CONCURRENCY = 64


def _component(kind: str, default: str, what: str) -> Any:
    return option(default, help=f"{kind}: {what}.", convert=rule.text)


def _component_args(kind: str) -> Any:
    return option(factory=dict, help=f"{kind} options, key=value,...", convert=rule.component_options)


def registered_metrics(listed: list[str]) -> str | None:
    """Every name must be a registered metric (``madeval plugins`` lists them)."""
    for name in listed:
        try:
            registries().metrics.resolve(name)
        except UsageError as error:
            return f"must name registered metrics: {error}"
    return None


@dataclass
class DebateConfig:
    """One debate configuration: components, their options, agents, turns and models."""

    persona: str | list[str] = option(
        "none", help="Persona generator, or one per agent separated by commas.", convert=rule.persona)
    responder: str = _component("Responder", "simple", "how agents write")
    paradigm: str = _component("Paradigm", "memory", "turn order and visibility")
    decider: str = _component("Decider", "majority_consensus", "when to stop and what the answer is")
    persona_args: dict[str, Any] = _component_args("Persona generator")
    responder_args: dict[str, Any] = _component_args("Responder")
    paradigm_args: dict[str, Any] = _component_args("Paradigm")
    decider_args: dict[str, Any] = _component_args("Decider")
    agents: int = option(3, help="Number of agents.", convert=rule.integer, check=rule.at_least(1))
    neutral_agents: int = option(0, help="Agents that speak but do not vote or agree.",
                                 convert=rule.integer, check=rule.at_least(0))
    max_turns: int = option(10, help="Turn limit; a debate without decision falls back.",
                            convert=rule.integer, check=rule.at_least(1))
    agent_models: list[str] = option(
        factory=list, help="One model per agent, comma separated, each MODEL or MODEL@ENDPOINT.",
        convert=rule.names)
    judge_model: str | None = option(None, help="Model for judge calls (MODEL or MODEL@ENDPOINT).",
                                     convert=rule.text, shown_default="agent 1's")
    extract: str = option("task", help="Final answers by the task's extractor or by MALLM's LLM "
                          "extraction prompt.", convert=rule.text, choices=("task", "llm"))
    all_agents_draft_first: bool = option(
        False, help="All-Agents Drafting: independent first drafts (Voting or Consensus?, 4.3).", convert=rule.flag)
    collective_improvement: bool = option(
        False, help="Collective Improvement: agents see only the previous turn's solutions "
                    "(Voting or Consensus?, 4.3).",
        convert=rule.flag)
    challenge: list[str] = option(
        factory=list, help="Challenge the final answer afterwards: plain,history,wrong (Voting or Consensus?, 4.2).",
        convert=rule.names)
    #: Extra metrics (registered names) scored on every debate besides the task's ``metric_list``:
    #: a debate metric such as Free-MAD's ``token_cost`` reads the transcript.
    metrics: list[str] = option(
        factory=list, help="Extra metrics scored on every debate, comma separated (see 'madeval plugins').", cli=False,
        convert=rule.names, check=registered_metrics, added_later=True)
    structured_answers: bool = option(
        False, help="Ask for solutions, votes and agreement in a JSON schema (response_format); the text "
        "prompts stay as published. The embedded model takes it unless --no-structured-answers is given.",
        convert=rule.flag, added_later=True, negatable=True)  # the embedded model's is on: --no- turns it off
    preset: str | None = option(None, help="A named bundle of options, e.g. baseline_cot, self_consistency "
                                "(see 'madeval plugins').", convert=rule.text)
    preset_args: dict[str, Any] = option(
        factory=dict, help="Options of the preset, key=value,... (self_consistency_matched: run=FOLDER,match=CONFIG).",
        convert=rule.component_options, added_later=True)
    name: str | None = option(None, help="Display name of the configuration.", convert=rule.text)

    def personas(self) -> list[str]:
        """One persona generator name per agent."""
        if isinstance(self.persona, str):
            return [self.persona] * self.agents
        if len(self.persona) != self.agents:
            raise UsageError(f"persona lists {len(self.persona)} generators for {self.agents} agents")
        return list(self.persona)

    def identity(self) -> dict[str, Any]:
        """Everything that changes the debate or its scores (not the display name), for ids and
        records. Options declared ``added_later`` appear only when they differ from their default,
        so configurations that leave them out keep the ids they had before the options existed."""
        data = _field_values(self)  # not asdict: its deep copy of *_args costs what their size does
        data.pop("name")
        return without_later_defaults(data, DebateConfig)

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

    tasks: list[str] = option(factory=list, help="Tasks, groups or tags, comma separated (see 'madeval tasks').",
                              convert=rule.names, flags=("-t",))
    configurations: list[DebateConfig] = field(default_factory=list)
    repeats: int = option(1, help="Run every item this many times with distinct seeds.",
                          convert=rule.integer, check=rule.at_least(1))
    limit: int | float | None = option(None, help="Use only the first N items of each task (for testing), or "
                                       "a fraction of them (0.1: the first 10%, rounded up, as lm-eval does).",
                                       convert=rule.count_or_fraction, check=rule.count_or_fraction_check)
    sample: str = option("all", help="Items per task: 'all', a number N (seeded random draw) or 'fpc' "
                         "(Cochran's size with finite-population correction).", convert=rule.text,
                         check=rule.sample_size)
    confidence: float = option(0.95, help="Confidence level for --sample fpc.", convert=rule.number,
                               check=rule.inside(0, 1))
    margin: float = option(0.05, help="Margin of error for --sample fpc.", convert=rule.number,
                           check=rule.inside(0, 1))
    seed: int = option(1234, help="Run seed: item choice and sampling seeds.", convert=rule.integer)
    num_fewshot: int = option(0, help="Few-shot examples in the prompts of lm-eval tasks (lm_eval:NAME), "
                              "chosen by lm-eval's sampler seeded with --seed.", convert=rule.integer,
                              check=rule.at_least(0), added_later=True)
    model: str | None = option(None, help="Model name for all agents.", convert=rule.text,
                               shown_default="the embedded model, or the endpoint's only model")
    base_url: str | None = option(None, help="OpenAI-compatible endpoint. Without one (nor --endpoint) the embedded "
                                  "model is started, and where they are not given it takes the settings that fit "
                                  "it: short replies, structured answers, few turns.", convert=rule.text,
                                  shown_default="start the embedded model")
    endpoints: dict[str, str] = option(factory=dict, help="Extra endpoint NAME=URL (repeatable).",
                                       convert=parse_endpoints, flags=("--endpoint",), multiple=True)
    concurrency: int | None = option(
        None, help="LLM calls in flight at most. With --transport batch each call holds a slot until its "
        "batch is back, so this also caps the lines of a batch.", convert=rule.integer, check=rule.at_least(1),
        shown_default=f"{DEFAULT_CONCURRENCY}; with --transport batch: the batch's max_lines", results=False)
    # one limit, or a limit per endpoint name
    endpoint_concurrency: int | dict[str, int] | None = option(
        None, help="LLM calls in flight per endpoint at most: N for every endpoint, or NAME=N,... per "
        "endpoint ('default' is --base-url).", convert=rule.limits, check=rule.at_least(1),
        shown_default="--concurrency; the embedded model: 1", results=False)
    timeout: float = option(120.0, help="Seconds a call may take in all (connect, send, read the whole "
                            "reply) before it is retried.", convert=rule.number, check=rule.positive, results=False)
    max_attempts: int = option(8, help="Attempts per call before the unit fails.", convert=rule.integer,
                               check=rule.at_least(1), results=False)
    retry_delay: float = option(0.5, help="Seconds before the first retry (doubling after each).",
                                convert=rule.number, check=rule.at_least(0), cli=False, results=False)
    transport: str = option("aiohttp", help="How calls travel: 'aiohttp' (a third of the official client's "
                            "CPU per call), 'openai' (the official client) or 'batch' (calls gathered into the "
                            "endpoint's Batch API, half price, hours per turn: see --batch-options); 'direct' "
                            "is an old name of aiohttp.", convert=rule.transport_name, check=rule.known_transport,
                            results=False)
    batch_options: dict[str, Any] = option(
        factory=dict, help="With --transport batch: key=value,... of flush_s (seconds without a new call "
        "before a batch is sent), max_lines and max_bytes (per request file), poll_s (longest pause between "
        "status looks), window (completion window).", convert=batch_options, results=False, added_later=True)
    # the largest response body accepted, in MiB
    max_response_mb: float = option(16.0, help="Largest response body accepted, in MiB; a larger one fails "
                                    "the call without retry.", convert=rule.number, check=rule.positive, results=False)
    routing_header: str = option(
        VLLM_ROUTER_HEADER, help=f"Header carrying each call's routing key, so a router's consistent-hash "
        f"policy keeps a conversation on one replica ({VLLM_ROUTER_HEADER}: vllm-router; {SGLANG_ROUTER_HEADER}: "
        "sglang-router); 'off' sends none.", convert=rule.text, check=header_name_problem, results=False)
    routing_grain: str = option("agent", help="Routing key per debate and agent ('agent') or per debate "
                                "('debate').", convert=rule.text, choices=GRAINS, results=False)
    temperature: float = option(1.0, help="Sampling temperature.", convert=rule.number,
                                check=rule.between(0, 2))
    top_p: float = option(1.0, help="Nucleus sampling top_p.", convert=rule.number, check=rule.top_p)
    max_tokens: int = option(1024, help="Tokens per reply at most.", convert=rule.integer, check=rule.at_least(1))
    gen_kwargs: dict[str, Any] = option(
        factory=dict,
        help="Generation parameters sent with every call, "
        "key=value,... (temperature, top_p, max_tokens, stop, presence_penalty, "
        "frequency_penalty; lm-eval's until, max_gen_toks, do_sample); they win "
        "over --temperature, --top-p and --max-tokens.",
        convert=rule.generation_kwargs,
        added_later=True,
    )
    wandb_args: dict[str, str] = option(
        factory=dict,
        help="Log the leaderboard table, charts and run.json to "
        "Weights & Biases: wandb.init arguments key=value,... (project=NAME; "
        "WANDB_MODE=offline keeps them on disk). Needs the wandb extra of madeval.",
        convert=rule.key_value_texts,
        results=False,
    )
    prices: str | None = option(
        None,
        help="Price file (YAML or JSON: per model, dollars per million input, output "
        "and cached input tokens, and the batch discount): the leaderboard adds cost per "
        "item and per configuration (batch prices with --transport batch).",
        convert=rule.text,
        results=False,
        added_later=True,
    )
    log_samples: bool = option(
        False,
        help="Accepted for lm-eval users: every debate is always written to records.jsonl, with or without it.",
        convert=rule.flag,
        results=False,
    )
    output_path: str | None = option(
        None,
        help="Run folder; re-running into it resumes.",
        convert=rule.text,
        flags=("-o",),
        shown_default="madeval-out/run-<time>",
        results=False,
    )
    include_path: list[str] = option(
        factory=list, help="Extra folder of task YAML files (repeatable).", convert=rule.paths, multiple=True
    )
    cache: str = option(
        "off",
        help="Response cache: 'off' (a run folder already makes re-runs and resumes "
        "free), 'on' (~/.cache/madeval/responses.sqlite, or in $MADEVAL_CACHE_DIR) or a file. "
        "Reuses a reply when the request and what the endpoint reports about the model match.",
        convert=rule.text,
        results=False,
    )
    view: bool = option(
        False,
        help="Also write debates.html, one page to read every debate (as 'madeval view' does), before the "
        "board, which then links it.",
        convert=rule.flag,
        results=False,
        added_later=True,
    )
    share_calls: bool = option(
        True,
        help="Make a request identical to one made or in flight in this run (another configuration's debate "
        "of the same item and repeat: same model, messages, sampling parameters and seed) once, and give "
        "every debate asking it that reply: configurations share their random numbers. --no-share-calls "
        "makes each configuration's calls apart (independent samples).",
        convert=rule.flag,
        results=False,
    )
    yes: bool = option(
        False,
        help="Start a run estimated to take long without asking (needed when stdin is not a terminal).",
        convert=rule.flag,
        flags=("--yes", "-y"),
        results=False,
        added_later=True,
    )
    explain: bool = option(
        False,
        help="Print the whole leaderboard: after the table and its sentences, the column legend, the "
        "comparisons, cost and accuracy, the debates' dynamics and how the numbers were computed (always "
        "in the run folder's leaderboard.md and leaderboard.html).",
        convert=rule.flag,
        results=False,
        added_later=True,
    )
    api_key: str | None = option(
        None,
        help="API key (environment variables MADEVAL_API_KEY and OPENAI_API_KEY win).",
        convert=rule.text,
        repr=False,
        cli=False,
        secret=True,
    )
    leaderboard: dict[str, Any] = field(default_factory=dict)
    #: The settings taken to fit the embedded model because none were given (:func:`embedded_fits`):
    #: said before the run starts.
    fitted: dict[str, Any] = field(default_factory=dict)

    def sample_spec(self):
        """The parsed ``sample`` setting (:class:`madeval.settings.sampling.SampleSpec`)."""
        return parse_sample(self.sample, self.confidence, self.margin)

    def generation(self) -> dict[str, Any]:
        """Sampling parameters sent with every call (defaults: MALLM paper, Appendix E)."""
        return {
            "temperature": self.temperature,
            "top_p": self.top_p,
            "presence_penalty": 0.0,
            "frequency_penalty": 0.0,
            "max_tokens": self.max_tokens,
            **self.gen_kwargs,
        }

    def calls_in_flight(self) -> int:
        """LLM calls in flight at most: ``--concurrency`` when given; otherwise, with ``--transport
        batch``, a batch's ``max_lines`` (each call holds its slot until its batch is back, so a lower
        bound would split every round of ready calls into several batches, each a provider
        turnaround), else :data:`DEFAULT_CONCURRENCY`."""
        if self.concurrency is not None:
            return self.concurrency
        if self.transport == "batch":
            return BatchSettings(**self.batch_options).max_lines
        return DEFAULT_CONCURRENCY

    def resolved_api_key(self) -> str:
        """The API key: ``MADEVAL_API_KEY``, else ``OPENAI_API_KEY``, else the config file's."""
        for name in API_KEY_VARIABLES:
            if os.environ.get(name):
                return os.environ[name]
        return self.api_key or "-"

    def public(self) -> dict[str, Any]:
        """The settings as stored with results: every declared option but the secret ones
        (configurations and leaderboard options are stored apart)."""
        data = {key: value for key, value in _field_values(self).items() if key in PUBLIC_KEYS}
        # A base URL may carry credentials (user info, ?api-key=): never stored.
        data["base_url"] = public_url(self.base_url) if self.base_url else self.base_url
        data["endpoints"] = {name: public_url(url) for name, url in self.endpoints.items()}
        return data


def _field_values(instance: Any) -> dict[str, Any]:
    """A dataclass's fields as a mapping, the values themselves (no copy, unlike ``asdict``): for
    reading only."""
    return {spec.name: getattr(instance, spec.name) for spec in fields(instance)}


def without_later_defaults(values: dict[str, Any], cls: type) -> dict[str, Any]:
    """``values`` without the options declared ``added_later`` that hold their default (see
    :class:`madeval.core.options.Option`): what an id or a fingerprint was before those options existed."""
    defaults = _later_defaults(cls)
    return {key: value for key, value in values.items() if not (key in defaults and value == defaults[key])}


@functools.cache
def _later_defaults(cls: type) -> dict[str, Any]:
    """The defaults of ``cls``'s options declared ``added_later`` (computed once: ids are made often)."""
    return {spec.name: spec.default if spec.default_factory is MISSING else spec.default_factory()
            for spec in fields(cls) if (declared_option(spec) and declared_option(spec).added_later)}


def declared_options(cls: type) -> dict[str, Any]:
    """The options a settings dataclass declares: field name -> :class:`madeval.core.options.Option`."""
    return {spec.name: declared_option(spec) for spec in fields(cls) if declared_option(spec)}


DEBATE_OPTIONS = declared_options(DebateConfig)
RUN_OPTIONS = declared_options(RunSettings)
#: Every run option's rule, by config-file key.
RULES = {**RUN_OPTIONS, **DEBATE_OPTIONS}
DEBATE_KEYS = set(DEBATE_OPTIONS)
RUN_KEYS = set(RUN_OPTIONS)
#: Options whose values are never shown in an error message (nor stored with results).
SECRET_KEYS = frozenset(key for key, declared in RULES.items() if declared.secret)
#: Run options that cannot change results (limits, transport, routing, where files go): a resume may change them.
NOT_RESULT_KEYS = frozenset(key for key, declared in RUN_OPTIONS.items() if not declared.results)
PUBLIC_KEYS = RUN_KEYS - SECRET_KEYS


def checked(key: str, value: Any, where: str = "") -> Any:
    """``value`` read by option ``key``'s rule; a bad value is a one-line UsageError that starts
    with ``where`` and names the option (a secret option's value is never echoed)."""
    declared = RULES.get(key)
    try:
        return value if declared is None else declared.read(value)
    except ValueError as error:
        message = str(error)
        if key in SECRET_KEYS:  # never echo what may be a key
            message = message.split(", got ")[0]
        raise UsageError(f"{where}{key} {message}") from None


def _checked_options(options: dict[str, Any], keys: set[str], where: str = "") -> dict[str, Any]:
    """``options`` with the value of each of ``keys`` read by its rule (the others as they are)."""
    return {key: checked(key, value, where) if key in keys else value for key, value in options.items()}


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
    leaderboard = options.get("leaderboard")
    if leaderboard is not None and not isinstance(leaderboard, dict):
        raise UsageError(f"{where}: leaderboard must be a mapping of leaderboard options, got {shown(leaderboard)}")
    checked_options = {}
    for key, value in options.items():
        if key in SWEEP_KEYS:
            checked_options[key] = _check_sweep_part(key, value, where)
        else:  # at the top of a sweep, ``name`` is the sweep's title: text all the same
            checked_options[key] = checked(key, value, f"{where}: ") if key in RULES else value
    return checked_options


def _check_sweep_part(part: str, value: Any, where: str) -> Any:
    """``common`` and each of ``runs`` are option mappings; ``grid`` maps options to value lists.
    Shapes are left to :mod:`madeval.settings.sweep` to report; values of known options are checked."""

    def mapping(data: Any, at: str) -> Any:
        if not isinstance(data, dict):
            return data
        return _checked_options(snake_keys(data), DEBATE_KEYS, f"{where}: {at} ")

    if part == "common":
        return mapping(value, "common")
    if part == "runs":
        return [mapping(run, f"runs[{i}]") for i, run in enumerate(value)] if isinstance(value, list) else value
    if not isinstance(value, dict):
        return value
    grid = {}
    for key, values in snake_keys(value).items():
        if key in DEBATE_KEYS and isinstance(values, list):
            values = [checked(key, v, f"{where}: grid ") for v in values]
        grid[key] = values
    return grid


def read_config_file(path: str | Path) -> dict[str, Any]:
    """The options of a ``--config`` YAML file, with keys in snake_case."""
    data = read_yaml_file(path, what="config ") or {}  # size, nodes and depth bounded: see read_yaml_file
    if not isinstance(data, dict):
        raise UsageError(f"config {path} must be a mapping of options")
    if True in data and "yes" not in data:  # YAML 1.1 reads a bare `yes:` key as the boolean true
        data = {("yes" if key is True else key): value for key, value in data.items()}
    return check_config(snake_keys(data), f"config {path}")


def build_settings(options: dict[str, Any]) -> RunSettings:
    """Turn merged options (config file, then command line on top) into :class:`RunSettings`.

    Values may be text (the command line's) or typed (a config file's): every one is read by its
    option's rule. A sweep file (``common``, ``grid``, ``runs``; see :mod:`madeval.settings.sweep`) gives
    several configurations; ``leaderboard`` holds the leaderboard options (:mod:`madeval.leaderboard`).
    """
    options = dict(options)
    leaderboard = LeaderboardOptions.from_dict(options.pop("leaderboard", None))
    unknown = sorted(set(options) - DEBATE_KEYS - RUN_KEYS - set(SWEEP_KEYS))
    if unknown:
        known = sorted(DEBATE_KEYS | RUN_KEYS | {"leaderboard", *SWEEP_KEYS})
        close = difflib.get_close_matches(unknown[0], known, n=1, cutoff=0.6)
        raise UsageError(f"unknown option {', '.join(unknown)}{f'; did you mean {close[0]}?' if close else ''}")
    run = _checked_options({key: value for key, value in options.items() if key in RUN_KEYS}, RUN_KEYS)
    if is_sweep(options):
        debates, sweep_name = expand(options, DEBATE_KEYS, RUN_KEYS)
        leaderboard.title = leaderboard.title or sweep_name
    else:
        debates = [{k: v for k, v in options.items() if k in DEBATE_KEYS}]
    fits = embedded_fits(run)
    fitted = {key: value for key, value in fits.items() if key in RUN_KEYS and key not in run
              and key not in run.get("gen_kwargs", {})}  # --gen-kwargs max_tokens=... is a max_tokens given
    settings = RunSettings(**run, **fitted, leaderboard=leaderboard.to_dict())
    debate_fits = {key: value for key, value in fits.items() if key in DEBATE_KEYS}
    for debate in debates:
        given = apply_preset(dict(debate)) if debate_fits else debate  # a preset's own values are given too
        missing = {key: value for key, value in debate_fits.items() if key not in given}
        fitted.update(missing)
        settings.configurations.append(debate_config({**missing, **debate}))
    settings.fitted = fitted
    check_settings(settings)
    _board_prices(settings)
    return settings


def embedded_fits(run: dict[str, Any]) -> dict[str, Any]:
    """The settings that fit the embedded model (:data:`madeval.llm.embedded.FITTING_SETTINGS`) when
    the run options ``run`` give no endpoint (the run starts the embedded model); else ``{}``. They
    replace the declared defaults only: an option given (on the command line, in a config file, by a
    preset) keeps its value."""
    if run.get("base_url") or run.get("endpoints"):
        return {}
    from madeval.llm.embedded import FITTING_SETTINGS  # the model's module only for a run that starts it

    return dict(FITTING_SETTINGS)


def _board_prices(settings: RunSettings) -> None:
    """``--prices`` (or ``leaderboard: {prices: ...}``) goes to the leaderboard as an absolute path (the
    board may be rebuilt from another folder), read now: a bad price file stops the run before any debate."""
    from madeval.pricing import read_price_table

    path = settings.prices or settings.leaderboard.get("prices")
    if path:
        settings.leaderboard["prices"] = settings.prices = str(Path(path).absolute())
        read_price_table(path)


def debate_config(options: dict[str, Any]) -> DebateConfig:
    """One :class:`DebateConfig` from component options (presets applied, values read by their rules)."""
    return DebateConfig(**collective_improvement(_checked_options(apply_preset(dict(options)), DEBATE_KEYS)))


def collective_improvement(debate: dict[str, Any]) -> dict[str, Any]:
    """``--collective-improvement`` selects the collective_improvement paradigm (Voting or Consensus?, 4.3).

    The flag is then cleared, so that the configuration (and its id, its cached calls and its
    leaderboard row) is the same as one written ``--paradigm collective_improvement``."""
    if not debate.get("collective_improvement"):
        return debate
    if (debate.get("paradigm") or "collective_improvement") not in ("collective_improvement", "ci"):
        raise UsageError("collective improvement replaces the paradigm; leave out --paradigm")
    return {**debate, "paradigm": "collective_improvement", "collective_improvement": False}


def _check_fields(target: Any, declared: dict[str, Any]) -> None:
    for key in declared:
        setattr(target, key, checked(key, getattr(target, key)))


def check_settings(settings: RunSettings) -> None:
    """Reject values that cannot work, with one clear line.

    Every option is converted and checked by its rule (:data:`RULES`, the same as for a config
    file), then what depends on several options is checked.
    """
    _check_fields(settings, RUN_OPTIONS)
    if settings.wandb_args:
        from madeval.settings.wandb_args import check_wandb_args

        check_wandb_args(settings.wandb_args)
    if not settings.tasks:
        raise UsageError("no tasks given: use --tasks NAME[,NAME...] (see 'madeval tasks')")
    settings.sample = settings.sample.strip().lower()
    parse_sample(settings.sample, settings.confidence, settings.margin)
    for config in settings.configurations:
        _check_fields(config, DEBATE_OPTIONS)
        if not 0 <= config.neutral_agents < config.agents:
            raise UsageError("neutral_agents must be between 0 and agents - 1")
        if config.agent_models and len(config.agent_models) != config.agents:
            raise UsageError(
                f"agent_models lists {len(config.agent_models)} models for {config.agents} agents"
            )
        config.personas()
    for config in settings.configurations:
        check_components(config)
    labels = [config.label() for config in settings.configurations]  # aliases replaced: one name each
    twice = sorted({label for label in labels if labels.count(label) > 1})
    if twice:
        raise UsageError(f"two configurations are both labelled {twice[0]}; give them distinct names")


def check_components(config: DebateConfig) -> None:
    """Each component of ``config`` resolved by its registry and each of its options read by the
    one converter, before anything starts.

    An alias is replaced by the registered name, so equal configurations get equal ids; a config
    file's ``after_turns: 2.5`` is refused like ``--decider-args after_turns=2.5``."""
    built = registries()
    chosen = {}
    for kind in ("responder", "paradigm", "decider"):
        chosen[kind] = built.registry(kind).resolve(getattr(config, kind))
        setattr(config, kind, chosen[kind].name)
    personas = [built.personas.resolve(name) for name in config.personas()]
    names = [entry.name for entry in personas]
    config.persona = names[0] if len(set(names)) == 1 and isinstance(config.persona, str) else names
    given = [("persona", entry, config.persona_args) for entry in {e.name: e for e in personas}.values()]
    given += [(kind, entry, getattr(config, f"{kind}_args")) for kind, entry in chosen.items()]
    for kind, entry, options in given:
        defaults = entry.options()
        for key, value in options.items():
            convert_component_option(kind, entry.name, key, value, defaults.get(key, ...))
