"""Rescoring a finished run: replay deciders on its stored debates and add them as rows.

``madeval rescore RUN --decider counting:after_turns=2,simple_voting`` applies each decider (which
must be ``transcript_only``) to every stored debate of every configuration of RUN through
:func:`madeval.debate.replay.replay`. A rescored configuration is the original with the decider replaced;
its records go to ``rescored.jsonl`` in the run folder, keyed by the new configuration's id, and
the leaderboard shows them as rows next to the run's own. A configuration whose debates stopped
before the new decider decides is skipped with a note (all of its debates or none are added).
Re-running skips what is already rescored. Rescoring holds the run folder's write lock
(:mod:`madeval.records.lock`): a run or another rescore of the same folder is refused meanwhile.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import astuple, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from madeval.analysis.run_data import RESCORED_FILE, RunData, load_run, read_rescored
from madeval.core.options import comma_names
from madeval.core.plugins import Registries
from madeval.core.transcript import Transcript
from madeval.debate.replay import discussion_calls, replay
from madeval.debate.session import DebateSession, ModelRef
from madeval.errors import MadevalError, UsageError
from madeval.llm.client import LLMClient, RetryPolicy
from madeval.llm.routing import RoutingKey
from madeval.metrics.checker import shutdown_checker
from madeval.records import lock as folder_lock
from madeval.records.folder import LineAppender, encode_line, read_records
from madeval.records.unit import Replayed, Unit, extra_metrics, unit_record
from madeval.run.cache_key import key_cache, open_cache
from madeval.run.plan import PlannedConfig, parse_model_ref
from madeval.run.scheduler import debate_rng
from madeval.settings.config import DebateConfig, RunSettings
from madeval.util import aio
from madeval.util.yaml_loader import yaml_value


@dataclass(frozen=True)
class DeciderSpec:
    """A decider to replay: its name and options, as written (``name:key=value:...``)."""

    name: str
    options: dict[str, Any]
    text: str


def parse_deciders(text: str, registries: Registries) -> list[DeciderSpec]:
    """``"counting,counting:after_turns=2"`` -> specs; unknown or live-only deciders are UsageErrors."""
    specs = []
    for part in comma_names(text):
        name, *pairs = part.split(":")
        options = {}
        for pair in pairs:
            key, eq, value = pair.partition("=")
            if not eq or not key:
                raise UsageError(f"--decider expects NAME[:key=value...], got '{part}'")
            options[key.strip()] = yaml_value(value.strip(), f"--decider {part}")
        entry = registries.deciders.resolve(name.strip())
        decider = registries.deciders.create(entry.name, options)
        if not decider.transcript_only:
            raise UsageError(f"decider '{entry.name}' cannot be replayed: it is not transcript_only")
        specs.append(DeciderSpec(entry.name, options, part))
    if not specs:
        raise UsageError("--decider names no decider")
    return specs


@dataclass
class RescoreOutcome:
    """What a rescore did: records added, configurations skipped (with why)."""

    added: int = 0
    skipped: dict[str, str] = field(default_factory=dict)


def rescore(folder: Path, specs: list[DeciderSpec], settings: RunSettings, registries: Registries,
            endpoints: dict[str, Any], tasks: dict[str, Any], *, data: RunData | None = None) -> RescoreOutcome:
    """Replay every spec on every run configuration of ``folder``; append to ``rescored.jsonl``.

    ``data`` is the folder already read (:func:`load_run`, with or without transcripts), if the
    caller has it. The debates themselves are read from ``records.jsonl`` as a stream, one source
    configuration at a time, so memory holds one configuration's transcripts, not the run's."""
    with folder_lock.hold(folder):
        return aio.run(_rescore(folder, specs, settings, registries, endpoints, tasks, data))


async def _rescore(folder, specs, settings, registries, endpoints, tasks, data) -> RescoreOutcome:
    data = data or load_run(folder, transcripts=False)
    done = {r["unit"]["key"] for r in read_rescored(folder)}
    items = {name: {item.id: item for item in task.items} for name, task in tasks.items()}
    cache = open_cache(settings.cache)  # the run's setting (off unless the run had it on)
    client = LLMClient(endpoints, concurrency=settings.calls_in_flight(), cache=cache,
                       retry=RetryPolicy(max_attempts=settings.max_attempts, base_delay_s=settings.retry_delay))
    outcome = RescoreOutcome()
    limit = asyncio.Semaphore(settings.calls_in_flight())
    keyed: set[ModelRef] = set()
    try:
        for source_id, described in data.configurations.items():
            if described["source"] != "run":
                continue
            sources = [r for r in read_records(folder) if r["unit"]["config"] == source_id]
            if cache is not None:  # keyed as a run's calls are: on what the endpoint reports of each model
                refs = [ref for ref in called_models(sources, described) if ref.endpoint in client.endpoints]
                if fresh := [ref for ref in dict.fromkeys(refs) if ref not in keyed]:
                    await key_cache(client, fresh, cache)
                    keyed.update(fresh)
            for spec in specs:
                config = rescored_config(described, spec)
                new_id = rescored_id(source_id, spec)
                name = f"{described['label']} -> {spec.text}"
                try:
                    planned = PlannedConfig(config, new_id, [], ModelRef("", ""))  # models: from each record
                    planned.setup(registries).validate()
                    extras = extra_metrics(config.metrics, registries)

                    async def one(record, planned=planned, new_id=new_id, extras=extras, described=described,
                                  spec=spec):
                        async with limit:
                            return await _replay_record(record, planned, new_id, described, spec, settings,
                                                        registries, client, tasks, items, extras)

                    todo = [r for r in sources if rescored_unit(r, new_id).key() not in done]
                    records = await asyncio.gather(*(one(r) for r in todo), return_exceptions=True)
                    for result in records:
                        if isinstance(result, BaseException):
                            raise result
                except MadevalError as error:
                    outcome.skipped[name] = str(error)
                    continue
                appender = LineAppender(Path(folder) / RESCORED_FILE)
                try:  # all of a configuration's records or none: a failed write is cut back
                    appender.append(b"".join(encode_line(record) for record in records))
                finally:
                    appender.close()
                outcome.added += len(records)
    finally:
        await client.aclose()
        if cache is not None:
            cache.close()
        await asyncio.to_thread(shutdown_checker)
    return outcome


def called_models(records: list[dict[str, Any]], described: dict[str, Any]) -> list[ModelRef]:
    """The models replaying ``records`` (of the configuration ``described``) may call: each
    debate's agents' and the configuration's judge (by default the first agent's), in order."""
    refs: list[ModelRef] = []
    judge = described.get("judge_model")
    for record in records:
        stored = (record.get("transcript") or {}).get("agents") or []
        agents = [ModelRef(agent["model"], agent["endpoint"]) for agent in stored if isinstance(agent, dict)
                  and isinstance(agent.get("model"), str) and isinstance(agent.get("endpoint"), str)]
        if agents:
            refs += agents + [parse_model_ref(judge, agents[0].endpoint) if isinstance(judge, str) and judge
                              else agents[0]]
    return refs


def rescored_config(described: dict[str, Any], spec: DeciderSpec) -> DebateConfig:
    """The source configuration with its decider replaced (and no challenge round: not replayed)."""
    known = {f.name for f in fields(DebateConfig)}
    options = {k: v for k, v in described.items() if k in known}
    options.update(decider=spec.name, decider_args=dict(spec.options), challenge=[],
                   name=f"{described['label']} -> {spec.text}")
    return DebateConfig(**options)


def rescored_id(source_id: str, spec: DeciderSpec) -> str:
    """A stable id for (source configuration, decider, options), distinct from any run id."""
    blob = json.dumps(["rescored", source_id, spec.name, spec.options], sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()[:10]


def rescored_unit(record: dict[str, Any], config_id: str) -> Unit:
    """The unit of ``record``'s debate re-decided by the rescored configuration ``config_id``."""
    return replace(Unit.of_record(record), config=config_id)


async def _replay_record(record, planned, new_id, described, spec, settings, registries, client, tasks, items,
                         extras):
    """Replay one stored debate and return its rescored record, scored like a live one (the task's
    metrics and the configuration's extra ``metrics``)."""
    source = Unit.of_record(record)
    task = tasks[source.task]
    item = items[source.task].get(source.item)
    if item is None:
        raise UsageError(f"item {source.item} of task {source.task} no longer exists")
    recorded = Transcript.from_dict(record["transcript"])
    agents = [ModelRef(a.model, a.endpoint) for a in recorded.agents]
    judge = parse_model_ref(described["judge_model"], agents[0].endpoint) if described.get("judge_model") else agents[0]

    no_endpoint = any(ref.endpoint not in client.endpoints for ref in (*agents, judge))  # an imported run

    def llm_for(transcript: Transcript) -> DebateSession | _NoCalls:
        if no_endpoint:
            return _NoCalls(spec.name)
        return DebateSession(client, agents=agents, judge=judge, generation=settings.generation(),
                             run_seed=settings.seed, item_id=item.id, repeat=source.repeat, transcript=transcript,
                             routing=RoutingKey.for_unit(settings.routing_header, settings.routing_grain,
                                                         astuple(source)))  # the debate's replica

    transcript = await replay(planned.setup(registries), recorded, task.prompt(item), llm_for,
                              extract=lambda text: task.extract(text, item),
                              rng=debate_rng(settings.seed, item.id, source.repeat), item_id=item.id, gold=item.target)
    label = planned.config.label()
    replayed = Replayed(
        configuration={"label": label, **planned.config.identity(), "replay_of": source.config,
                       "replayed_decider": spec.text},
        new_calls=len(transcript.calls) - len(discussion_calls(recorded, transcript.turns_used)),
    )
    return await unit_record(rescored_unit(record, new_id), label, task, item, transcript, extras, wall_s=None,
                             replayed=replayed)


class NeedsCalls(UsageError):
    """A replayed decider asked for a model call on a run whose agents have no endpoint here."""


class _NoCalls:
    """LLM access for a run with no endpoint (an imported run): any call is :class:`NeedsCalls`."""

    def __init__(self, decider: str):
        self.decider = decider

    async def chat(self, agent, messages, *, purpose: str, **_: Any) -> str:
        raise NeedsCalls(f"decider '{self.decider}' needs model calls ({purpose}) and the run's agents have "
                         "no endpoint here (an imported run): give --base-url to replay it")

