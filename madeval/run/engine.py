"""The run: validate, start the endpoints, plan, then four named steps that end at the records.

:func:`run_records` checks everything that needs no endpoint (:func:`validate`), starts the
endpoints (:func:`endpoints_for`) and resolves the plan against them; then a resume check (a folder
with a run in it is opened, its finished units read), the estimate (asking before a long run), the
folder (made only once the run goes ahead) and the execution (:func:`madeval.run.scheduler.execute`).
Everything that can be wrong with the input is checked before the output folder is created, so
bad input leaves nothing behind. Building and printing the board from the records is the
pipeline's next stage (:mod:`madeval.evaluation`).
"""

from __future__ import annotations

import contextlib
import difflib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from madeval.core.plugins import Registries, versions
from madeval.core.plugins import registries as loaded_registries
from madeval.debate.session import ModelRef
from madeval.errors import UsageError
from madeval.llm import embedded
from madeval.llm.batch.settings import attach_run_folder, concurrency_note
from madeval.llm.cache import ResponseCache
from madeval.llm.client import Endpoint, LLMClient, RetryPolicy
from madeval.records.folder import RUN_FILE, RecordSink, read_run_file
from madeval.records.run_file import SESSIONS_KEY, note_in_run_file, session_entry, with_session
from madeval.run.before_run import check_leaderboard_reference, item_count_notes
from madeval.run.cache_key import key_cache, open_cache
from madeval.run.estimate import confirm_long_run
from madeval.run.plan import Plan, build_plan
from madeval.run.resume import different_run, matches_older_folder, served_models
from madeval.run.scheduler import RunOutcome, execute
from madeval.settings.config import RunSettings, check_settings
from madeval.task.definition import Task, load_tasks
from madeval.task.files import task_index
from madeval.task.groups import declared_in, recordable
from madeval.util import aio

DEFAULT_ENDPOINT = "default"
EMBEDDED_ENDPOINT = "embedded"


def default_output_path() -> Path:
    """``madeval-out/run-<timestamp>`` in the current folder."""
    return Path("madeval-out") / time.strftime("run-%Y%m%d-%H%M%S")


@dataclass
class RunRecords:
    """What a run wrote: its folder (``run.json``, ``records.jsonl``, ``errors.jsonl``) and how its
    units went. The board is built from these records by the stage above (:mod:`madeval.evaluation`)."""

    folder: Path
    outcome: RunOutcome
    #: replies longer than ``max_tokens`` allows, cut by the endpoint (a fault: see the calls' errors)
    cut_replies: int = 0
    #: whether the response cache was on (the summary then says how many calls it answered)
    cache_used: bool = False


def run_records(settings: RunSettings, *, show_progress: bool = True) -> RunRecords:
    """Validate everything, start the endpoints, run the plan into its folder; return the records."""
    registries = loaded_registries()
    tasks = validate(settings, registries)
    with endpoints_for(settings) as (endpoints, default_model):
        return aio.run(_run(settings, registries, tasks, endpoints, default_model, show_progress))


def validate(settings: RunSettings, registries: Registries) -> dict[str, Task]:
    """Check everything that needs no endpoint; return the loaded tasks.

    Runs before any server is started or endpoint contacted: component names, their options and
    the option types, the combinations (``DebateSetup.validate``), the tasks and their items,
    sampling, the endpoint names models refer to, per-endpoint limits and, with the embedded
    model, the model name. Every error is a one-line :class:`UsageError`.
    """
    check_settings(settings)  # as the CLI does: settings built in Python get the same checks
    tasks = load_tasks(settings, registries)
    names, default = endpoint_names(settings)
    limits = settings.endpoint_concurrency
    if isinstance(limits, dict):
        unknown = sorted(set(limits) - set(names))
        if unknown:
            raise UsageError(
                f"endpoint_concurrency names unknown endpoint '{unknown[0]}' (endpoints: {', '.join(names)})"
            )
    if default == EMBEDDED_ENDPOINT and settings.model:
        if settings.model != embedded.MODEL_NAME:
            raise UsageError(
                f"unknown model '{settings.model}': the embedded endpoint serves only {embedded.MODEL_NAME} "
                "(use --base-url for another model)"
            )
    # The plan itself needs the endpoint's model only for the records: a stand-in checks the rest.
    plan = build_plan(settings, tasks, registries, default_model=ModelRef(settings.model or "?", default),
                      endpoints=set(names))
    check_leaderboard_reference(settings.leaderboard, plan.configs)  # not after every debate ran
    return tasks


def endpoint_names(settings: RunSettings) -> tuple[list[str], str]:
    """The names of the run's endpoints and the default one (known before any is started)."""
    if settings.base_url or settings.endpoints:
        names = list(dict.fromkeys([DEFAULT_ENDPOINT] * bool(settings.base_url) + list(settings.endpoints)))
        return names, DEFAULT_ENDPOINT if settings.base_url else names[0]
    return [EMBEDDED_ENDPOINT], EMBEDDED_ENDPOINT


def endpoint_limit(settings: RunSettings, name: str, fallback: int) -> int:
    """Calls in flight at most on endpoint ``name``: its own limit, the common one, or ``fallback``."""
    limit = settings.endpoint_concurrency
    if isinstance(limit, dict):
        return limit.get(name, fallback)
    return fallback if limit is None else limit


@contextlib.contextmanager
def endpoints_for(settings: RunSettings) -> Iterator[tuple[dict[str, Endpoint], ModelRef]]:
    """The endpoint table and the default model; with no endpoint given, the embedded model is
    started and stopped around the ``with`` block (the run and ``madeval rescore`` use it)."""
    key = settings.resolved_api_key()
    cap = int(settings.max_response_mb * (1 << 20))
    if settings.base_url or settings.endpoints:
        table = {}
        if settings.base_url:
            limit = endpoint_limit(settings, DEFAULT_ENDPOINT, settings.calls_in_flight())
            table[DEFAULT_ENDPOINT] = Endpoint(DEFAULT_ENDPOINT, settings.base_url, key, limit, settings.timeout,
                                               settings.transport, cap)
        for name, url in settings.endpoints.items():
            own_key = os.environ.get(f"MADEVAL_API_KEY_{name.upper()}", key)
            limit = endpoint_limit(settings, name, settings.calls_in_flight())
            table[name] = Endpoint(name, url, own_key, limit, settings.timeout, settings.transport, cap)
        default = DEFAULT_ENDPOINT if settings.base_url else next(iter(table))
        yield table, ModelRef(settings.model or "", default)
        return
    with embedded.EmbeddedServer() as server:
        concurrency = endpoint_limit(settings, EMBEDDED_ENDPOINT, 1)
        endpoint = Endpoint(
            EMBEDDED_ENDPOINT, server.base_url, "-", concurrency, max(settings.timeout, 600.0), settings.transport, cap,
            response_format=embedded.RESPONSE_FORMAT, always_estimated=True,
        )
        yield {EMBEDDED_ENDPOINT: endpoint}, ModelRef(settings.model or embedded.MODEL_NAME, EMBEDDED_ENDPOINT)


@dataclass
class _Prepared:
    """A run resolved against its endpoints, before its folder is touched."""

    settings: RunSettings
    registries: Registries
    plan: Plan
    default_model: ModelRef
    folder: Path
    description: dict[str, Any]
    fingerprint: str
    started: str  # when this process started, as run.json's sessions list it


async def _run(settings: RunSettings, registries: Registries, tasks: dict[str, Task],
               endpoints: dict[str, Endpoint], default_model: ModelRef, show_progress: bool) -> RunRecords:
    cache = open_cache(settings.cache)  # off unless asked for; a file it cannot use: one line
    client = LLMClient(endpoints, concurrency=settings.calls_in_flight(), cache=cache,
                       retry=RetryPolicy(max_attempts=settings.max_attempts, base_delay_s=settings.retry_delay))
    try:
        await client.preflight()
        prepared = await _prepare(settings, registries, tasks, client, default_model, cache)
        outcome = await _execute_in_folder(prepared, client, show_progress)
    finally:
        await client.aclose()
        if cache is not None:
            cache.close()
    return RunRecords(prepared.folder, outcome, client.stats.cut_replies, cache is not None)


async def _prepare(settings: RunSettings, registries: Registries, tasks: dict[str, Task], client: LLMClient,
                   default_model: ModelRef, cache: ResponseCache | None) -> _Prepared:
    """The plan against the endpoints' models, what is said before the run, and ``run.json``'s description."""
    listings: dict[str, list[str]] = {}  # each endpoint's /models, asked once
    if not default_model.model:  # the endpoint's only model, if it serves one
        listed = listings[default_model.endpoint] = await client.list_models(default_model.endpoint)
        if len(listed) == 1:
            default_model = ModelRef(listed[0], default_model.endpoint)
    plan = build_plan(settings, tasks, registries, default_model=default_model, endpoints=set(client.endpoints))
    refs = list(dict.fromkeys(ref for p in plan.configs.values() for ref in (*p.agent_models, p.judge_model)))
    if any(not ref.model for ref in refs):  # some agent needs the default model, and there is none
        count = len(listings.get(default_model.endpoint) or ())
        raise UsageError(f"endpoint '{default_model.endpoint}' serves {count or 'no listed'} "
                         f"models; choose one with --model{client.hints.get(default_model.endpoint, '')}")
    if settings.base_url or settings.endpoints:  # the embedded model's name is checked offline
        await check_models(client, refs, listings)  # every agent's and judge's, the default's included
    _say_before_run(settings, plan)
    cache_record = await key_cache(client, refs, cache) if cache is not None else None
    models = served_models(refs, client.model_entries)  # part of what the folder holds
    description = {
        **plan.describe(),
        "versions": versions(),
        "default_model": default_model.model,
        "models": models,
        "order": {"configurations": list(plan.configs), "tasks": list(plan.items)},
        **task_groups(settings, registries),
        "task_sizes": {name: len(task.items) for name, task in tasks.items()},
        **task_notes(tasks),
        "leaderboard": settings.leaderboard,
        "cache": cache_record,
    }
    folder = Path(settings.output_path) if settings.output_path else default_output_path()
    started = session_entry(description["settings"])["started"]
    return _Prepared(settings, registries, plan, default_model, folder, description, plan.fingerprint(models), started)


def _say_before_run(settings: RunSettings, plan: Plan) -> None:
    """What the run took to fit the embedded model; warnings that need the plan: batch limits that
    cannot be kept, item counts a task cannot give."""
    if settings.fitted:
        print(f"madeval: {fitted_text(settings.fitted)}", file=sys.stderr)
    if settings.transport == "batch" and (note := concurrency_note(
            settings.concurrency, settings.endpoint_concurrency, settings.batch_options)):
        print(f"madeval: warning: {note}", file=sys.stderr)
    for note in item_count_notes(plan.sampling):
        print(note, file=sys.stderr)


def fitted_text(fitted: dict[str, Any]) -> str:
    """The settings taken to fit the embedded model (:func:`madeval.settings.config.embedded_fits`), said."""
    shown = ", ".join("structured answers" if key == "structured_answers" else f"{key} {value}"
                      for key, value in fitted.items() if key != "structured_answers" or value)
    ways = ", ".join("--no-structured-answers" if key == "structured_answers"
                     else f"--{key.replace('_', '-')} N" for key in fitted)
    return (f"the embedded model ({embedded.MODEL_NAME}, on this CPU) runs with {shown}, the settings that "
            f"fit it, as none were given (to choose: {ways})")


async def _execute_in_folder(prepared: _Prepared, client: LLMClient, show_progress: bool) -> RunOutcome:
    """Resume check, estimate, folder, execute: the run's four steps, the folder's lock held from
    the first that opens it to the end."""
    sink = _resume_check(prepared)
    try:
        estimate = await confirm_long_run(prepared.plan, client, client.endpoints, prepared.settings,
                                          done=sink.finished if sink else (), registries=prepared.registries)
        sink = _open_folder(prepared, sink, estimate)
        attach_run_folder(client.transports, prepared.folder, prepared.settings.batch_options)  # before any call
        return await execute(prepared.plan, prepared.registries, client, sink, show_progress=show_progress)
    finally:
        if sink is not None:
            sink.close()


def _sink(prepared: _Prepared, described: dict[str, Any]) -> RecordSink:
    """The folder's record sink (it holds the folder's lock until closed)."""
    return RecordSink(prepared.folder, described, prepared.fingerprint, refusal=different_run,
                      older=lambda stored: matches_older_folder(stored, prepared.plan, prepared.default_model.model))


def _resume_check(prepared: _Prepared) -> RecordSink | None:
    """A folder that holds a run is opened now (refused when it is another run), so that the
    estimate counts only the units left; a new folder is made only once the run goes ahead."""
    return _sink(prepared, prepared.description) if os.path.lexists(prepared.folder / RUN_FILE) else None


def _open_folder(prepared: _Prepared, sink: RecordSink | None, estimate: dict[str, Any] | None) -> RecordSink:
    """The run's folder, ready for records: a new one with this process as its first session, or
    the resumed one with this process's session (its transport, limits, ...) added."""
    session = session_entry(prepared.description["settings"], estimate, prepared.started)
    if sink is None:
        return _sink(prepared, {**prepared.description, **({"estimate": estimate} if estimate else {}),
                                SESSIONS_KEY: [session]})
    folder = prepared.folder
    note_in_run_file(folder, SESSIONS_KEY, with_session(read_run_file(folder / RUN_FILE), session))
    if estimate:
        note_in_run_file(folder, "estimate", estimate)
    return sink


def task_groups(settings: RunSettings, registries: Registries) -> dict[str, Any]:
    """For ``run.json``: the groups and tags the user named, with their tasks (each gets
    leaderboard rows), and how each group combines its tasks (``group_aggregation``)."""
    index = task_index(registries, settings.include_path)
    expanded = {name: index.expand(name) for name in settings.tasks if name not in index.tasks}
    groups = {name: members for name, members in expanded.items() if len(members) > 1}
    return {"groups": groups, "group_aggregation": recordable(declared_in(index, list(groups)))}


def task_notes(tasks: dict[str, Task]) -> dict[str, Any]:
    """For ``run.json``: ``{"task_notes": {task: note}}`` of the tasks that carry a note for the
    leaderboard (a task provider's ``note``, e.g. lm-eval multiple choice run as generation); ``{}``
    when none does."""
    notes = {name: task.note for name, task in tasks.items() if task.note}
    return {"task_notes": notes} if notes else {}


async def check_models(client: LLMClient, refs: list[ModelRef], listings: dict[str, list[str]] | None = None) -> None:
    """Refuse a model its endpoint does not list, naming the closest listed ones.

    Each endpoint's list is asked for once (``listings`` holds those already known and is filled
    in). An endpoint that lists no models (or cannot list them) gets the benefit of the doubt.
    """
    listings = {} if listings is None else listings
    for ref in refs:
        if ref.endpoint not in listings:
            listings[ref.endpoint] = await client.list_models(ref.endpoint)
        listed = listings[ref.endpoint]
        if not listed or ref.model in listed:
            continue
        closest = difflib.get_close_matches(ref.model, listed, n=3, cutoff=0.0)
        raise UsageError(
            f"unknown model '{ref.model}': endpoint '{ref.endpoint}' lists {len(listed)} "
            f"model{'s' if len(listed) != 1 else ''}; "
            f"closest: {', '.join(closest)}"
        )
