"""The plan of a run: configurations x tasks x items x repeats, as work units.

Items are chosen once per task (from the run seed, see :mod:`madeval.settings.sampling`) and shared by
every configuration, so every comparison between configurations is paired on the same items.
run.json records, per task, the chosen ids, the sampling used and the population size N, so that
intervals can later be corrected for a finite population.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from madeval.core.components import DebateSetup
from madeval.core.item import Item
from madeval.core.plugins import Registries
from madeval.debate.challenge import check_variants
from madeval.debate.session import ModelRef
from madeval.errors import UsageError
from madeval.records.unit import Unit
from madeval.settings.config import NOT_RESULT_KEYS, DebateConfig, RunSettings, without_later_defaults
from madeval.settings.sampling import draw
from madeval.task.definition import Task


@dataclass
class PlannedConfig:
    """A configuration with its id and its agents' models resolved."""

    config: DebateConfig
    id: str
    agent_models: list[ModelRef]
    judge_model: ModelRef

    def setup(self, registries: Registries) -> DebateSetup:
        """Fresh components for one debate (components may keep per-debate state)."""
        return debate_setup(self.config, registries)


def debate_setup(config: DebateConfig, registries: Registries) -> DebateSetup:
    """Fresh components for one debate of ``config``; ``.validate()`` on the result checks that they
    accept each other, with no endpoint, model or task needed."""
    neutral = [i < config.neutral_agents for i in range(config.agents)]
    return DebateSetup(
        personas=[
            registries.personas.create(name, config.persona_args) for name in config.personas()
        ],
        responder=registries.responders.create(config.responder, config.responder_args),
        paradigm=registries.paradigms.create(config.paradigm, config.paradigm_args),
        decider=registries.deciders.create(config.decider, config.decider_args),
        agents=config.agents,
        max_turns=config.max_turns,
        neutral=neutral,
        all_agents_draft_first=config.all_agents_draft_first,
        extract=config.extract,
        challenges=check_variants(config.challenge),
        structured_answers=config.structured_answers,
    )


def split_valid(
    configs: Iterable[DebateConfig], registries: Registries
) -> tuple[list[DebateConfig], list[tuple[DebateConfig, str]]]:
    """The configurations whose components accept each other, and the refused ones with their
    one-line reason (:meth:`DebateSetup.validate`)."""
    valid, refused = [], []
    for config in configs:
        try:
            debate_setup(config, registries).validate()
            valid.append(config)
        except UsageError as error:
            refused.append((config, str(error)))
    return valid, refused


@dataclass
class Plan:
    """Everything the scheduler executes, fixed before anything is written."""

    settings: RunSettings
    configs: dict[str, PlannedConfig]
    tasks: dict[str, Task]
    items: dict[str, list[Item]]
    sampling: dict[str, dict[str, Any]] = field(default_factory=dict)

    def units(self) -> Iterator[Unit]:
        """Every unit, item by item and repeat by repeat, the configurations of each side by side:
        configurations progress together, and the debates whose calls can be identical (one item and
        repeat) run at the same time, so each such call is made once (:mod:`madeval.run.sharing`)."""
        for task, items in self.items.items():
            for item in items:
                for repeat in range(self.settings.repeats):
                    for config_id in self.configs:
                        yield Unit(config_id, task, item.id, repeat)

    def size(self) -> int:
        """The number of units."""
        per_item = len(self.configs) * self.settings.repeats
        return sum(len(items) for items in self.items.values()) * per_item

    def describe(self) -> dict[str, Any]:
        """What is stored in run.json: settings, configurations, tasks and chosen item ids."""
        return {
            "settings": self.settings.public(),
            "configurations": {
                cid: {"label": p.config.label(), **p.config.identity()} for cid, p in self.configs.items()
            },
            "tasks": {
                name: {
                    "path": str(self.tasks[name].path),
                    "sampling": dict(self.sampling.get(name, {})),
                    "items": [i.id for i in items],
                }
                for name, items in self.items.items()
            },
        }

    def fingerprint(self, models: list[dict[str, Any]] | None = None) -> str:
        """A hash of what determines the results (not limits such as concurrency or timeouts).

        With ``models`` (the models the run resolved, :func:`madeval.run.resume.served_models`) the hash
        covers them instead of ``--model`` as given, so that naming the model a run picked by
        itself is the same run and the same command against another model is not. Without, it is
        the hash of folders written before models were recorded (see :mod:`madeval.run.resume`)."""
        described = self.describe()
        settings = without_later_defaults(described["settings"], RunSettings)
        for volatile in NOT_RESULT_KEYS:
            settings.pop(volatile, None)
        if models is not None:
            settings.pop("model", None)
            described["models"] = models
        described["settings"] = settings
        for task in described["tasks"].values():
            task.pop("path")
            task.get("sampling", {}).pop("source", None)  # the same rows may live in another folder
        blob = json.dumps(described, sort_keys=True, default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def parse_model_ref(text: str, default_endpoint: str) -> ModelRef:
    """``"model@endpoint"`` or ``"model"`` (on the default endpoint)."""
    model, at, endpoint = text.rpartition("@")
    if not at:
        return ModelRef(text, default_endpoint)
    return ModelRef(model, endpoint)


def build_plan(
    settings: RunSettings,
    tasks: dict[str, Task],
    registries: Registries,
    *,
    default_model: ModelRef,
    endpoints: set[str],
) -> Plan:
    """Resolve configurations and choose items; every error here is a one-line UsageError."""
    configs: dict[str, PlannedConfig] = {}
    for config in settings.configurations:
        agent_models = [parse_model_ref(m, default_model.endpoint) for m in config.agent_models] or [
            default_model
        ] * config.agents
        judge = parse_model_ref(config.judge_model, default_model.endpoint) if config.judge_model else agent_models[0]
        for ref in (*agent_models, judge):
            if ref.endpoint not in endpoints:
                raise UsageError(f"model {ref.model}@{ref.endpoint}: unknown endpoint '{ref.endpoint}'")
        planned = PlannedConfig(config, config.config_id(), agent_models, judge)
        if planned.id in configs:
            raise UsageError(f"configuration {config.label()} appears twice")
        planned.setup(registries).validate()
        configs[planned.id] = planned
    items = {name: choose_items(task, settings) for name, task in tasks.items()}
    sampling = {name: sampling_record(task, settings, len(items[name])) for name, task in tasks.items()}
    return Plan(settings, configs, tasks, items, sampling)


def choose_items(task: Task, settings: RunSettings) -> list[Item]:
    """The items of ``task`` this run uses.

    ``--sample`` draws from all items (:func:`madeval.settings.sampling.draw`, seeded by the run seed and
    the task name); ``--limit`` then keeps the first N of them (lm-eval's testing option), or the
    first fraction of them rounded up (``--limit 0.1``, as lm-eval).
    """
    items = task.items
    if not items:
        raise UsageError(f"task {task.name} has no items")
    spec = settings.sample_spec()
    chosen = draw(items, spec.size(len(items)), seed=settings.seed, task=task.name)
    if isinstance(settings.limit, float):  # a fraction, rounded up as lm-eval's --limit 0.1 is
        return chosen[: math.ceil(len(chosen) * settings.limit)]
    return chosen[: settings.limit] if settings.limit else chosen


def sampling_record(task: Task, settings: RunSettings, used: int) -> dict[str, Any]:
    """How the items of ``task`` were chosen, with the population size N (stored in run.json)."""
    return {
        **settings.sample_spec().describe(),
        "seed": settings.seed,
        "limit": settings.limit,
        "population": len(task.items),
        "size": used,
        "source": task.source,
    }
