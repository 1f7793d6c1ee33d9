"""Running an evaluation from settings: validate, start endpoints, plan, execute, summarise.

Everything that can be wrong with the input is checked before the output folder is created, so
bad input leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import difflib
import importlib.metadata
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from . import aio, embedded
from ._version import __version__
from .config import RunSettings, check_settings
from .errors import UsageError
from .checks.before_run import check_leaderboard_reference, item_count_notes
from .checks.cache_key import key_cache, open_cache
from .checks.estimate import confirm_long_run
from .llm.batch.settings import attach_run_folder, concurrency_note
from .llm.client import Endpoint, LLMClient, RetryPolicy
from .llm.session import ModelRef
from .plan import build_plan
from .plugins import Registries, plugin_info
from .plugins import registries as loaded_registries
from .records import RUN_FILE, RecordSink, read_run_file, write_json_atomically, writing
from .resume import SESSIONS_KEY, different_run, matches_older_folder, served_models, session_entry, with_session
from .leaderboard import LeaderboardOptions, build_leaderboard, write_outputs
from .leaderboard.groups import declared_in, recordable
from .leaderboard.render import markdown
from .scheduler import RunOutcome, execute
from .shown_text import terminal_text
from .task import Task, task_loader
from .taskfiles import task_index

DEFAULT_ENDPOINT = "default"
EMBEDDED_ENDPOINT = "embedded"


def load_tasks(settings: RunSettings, registries: Registries) -> dict[str, Task]:
    """The tasks named by ``settings.tasks`` (groups and tags expanded), loaded with their items."""
    index = task_index(registries, settings.include_path)
    load = task_loader(index, registries.extractors, registries.metrics, settings)
    names: list[str] = []
    for name in settings.tasks:
        for task in index.expand(name):
            if task not in names:
                names.append(task)
    tasks = {name: load(name) for name in names}
    for task in tasks.values():
        task.items  # noqa: B018 - load now so data errors surface before anything is written
    return tasks


def default_output_path() -> Path:
    """``madeval-out/run-<timestamp>`` in the current folder."""
    return Path("madeval-out") / time.strftime("run-%Y%m%d-%H%M%S")


@dataclass
class RunResult:
    """What a finished run produced."""

    folder: Path
    outcome: RunOutcome
    rows: list[dict[str, Any]]
    board: dict[str, Any]


def run(settings: RunSettings, *, show_progress: bool = True, out: TextIO = sys.stdout) -> RunResult:
    """Validate everything, start the endpoints, run the plan and print the leaderboard table."""
    registries = loaded_registries()
    tasks = validate(settings, registries)
    with endpoints_for(settings) as (endpoints, default_model):
        return aio.run(_run(settings, registries, tasks, endpoints, default_model, show_progress, out))


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
def endpoints_for(settings: RunSettings):
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
            response_format=embedded.RESPONSE_FORMAT,
        )
        yield {EMBEDDED_ENDPOINT: endpoint}, ModelRef(settings.model or embedded.MODEL_NAME, EMBEDDED_ENDPOINT)


async def _run(settings, registries, tasks, endpoints, default_model, show_progress, out) -> RunResult:
    cache = open_cache(settings.cache)  # off unless asked for; a file it cannot use: one line
    client = LLMClient(
        endpoints,
        concurrency=settings.calls_in_flight(),
        cache=cache,
        retry=RetryPolicy(max_attempts=settings.max_attempts, base_delay_s=settings.retry_delay),
    )
    try:
        await client.preflight()
        listings: dict[str, list[str]] = {}  # each endpoint's /models, asked once
        if not default_model.model:  # the endpoint's only model, if it serves one
            listed = listings[default_model.endpoint] = await client.list_models(default_model.endpoint)
            if len(listed) == 1:
                default_model = ModelRef(listed[0], default_model.endpoint)
        plan = build_plan(settings, tasks, registries, default_model=default_model, endpoints=set(endpoints))
        refs = list(dict.fromkeys(ref for p in plan.configs.values() for ref in (*p.agent_models, p.judge_model)))
        if any(not ref.model for ref in refs):  # some agent needs the default model, and there is none
            count = len(listings.get(default_model.endpoint) or ())
            raise UsageError(f"endpoint '{default_model.endpoint}' serves {count or 'no listed'} "
                             f"models; choose one with --model{client.hints.get(default_model.endpoint, '')}")
        if settings.base_url or settings.endpoints:  # the embedded model's name is checked offline
            await check_models(client, refs, listings)  # every agent's and judge's, the default's included
        if settings.transport == "batch" and (note := concurrency_note(
                settings.concurrency, settings.endpoint_concurrency, settings.batch_options)):
            print(f"madeval: warning: {note}", file=sys.stderr)
        for note in item_count_notes(plan.sampling):
            print(note, file=sys.stderr)
        cache_record = await key_cache(client, refs, cache) if cache is not None else None
        models = served_models(refs, client.model_entries)  # part of what the folder holds
        folder = Path(settings.output_path) if settings.output_path else default_output_path()
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
        fingerprint = plan.fingerprint(models)
        started = session_entry(description["settings"])["started"]  # this process, as run.json lists it

        def open_sink(described: dict[str, Any]) -> RecordSink:  # holds the folder's lock until closed
            return RecordSink(folder, described, fingerprint, refusal=different_run,
                              older=lambda stored: matches_older_folder(stored, plan, default_model.model))

        # A resume is checked, and its finished units read, before the estimate (which counts only
        # the units left); a new folder is made only once the run goes ahead.
        sink = open_sink(description) if os.path.lexists(folder / RUN_FILE) else None
        try:
            estimate = await confirm_long_run(plan, client, endpoints, settings, done=sink.finished if sink else (),
                                              registries=registries)
            session = session_entry(description["settings"], estimate, started)
            if sink is None:
                sink = open_sink({**description, **({"estimate": estimate} if estimate else {}),
                                  SESSIONS_KEY: [session]})
            else:  # a resume: what this process ran with (its transport, limits, ...) beside the first run's
                note_in_run_file(folder, SESSIONS_KEY, with_session(read_run_file(folder / RUN_FILE), session))
                if estimate:
                    note_in_run_file(folder, "estimate", estimate)
            attach_run_folder(client.transports, folder, settings.batch_options)  # before any call
            outcome = await execute(plan, registries, client, sink, show_progress=show_progress)
            board = finish(folder, settings)
            note_in_run_file(folder, "cached_calls", board["cached_calls"])
        finally:
            if sink is not None:
                sink.close()
    finally:
        await client.aclose()
        if cache is not None:
            cache.close()
    out.write(terminal_text(markdown(board)))  # labels may hold escape sequences (OSC 52 ...)
    skipped = board["records_read"]["summary"]  # broken lines and duplicates, each unit counted once
    cached = ""
    if cache is not None:
        asked = outcome.calls + outcome.cached_calls
        cached = f"{outcome.cached_calls} of {asked} calls answered from the response cache; "
    cut = client.stats.cut_replies
    cut_note = (f"{cut} {'reply' if cut == 1 else 'replies'} longer than max_tokens allows cut (an endpoint "
                "fault: see the calls' errors); " if cut else "")
    out.write(
        f"\n{outcome.finished} units run, {outcome.skipped} already done, {outcome.failed} failed; "
        f"{cached}{skipped + '; ' if skipped else ''}{cut_note}results in {folder}\n"
    )
    return RunResult(folder, outcome, board["rows"], board)


def finish(folder: Path, settings: RunSettings) -> dict[str, Any]:
    """Build the run's leaderboard and write it (Markdown, CSV, JSON, charts, HTML) into ``folder``."""
    board = build_leaderboard(folder, LeaderboardOptions.from_dict(settings.leaderboard))
    with writing(f"the leaderboard into {folder}",
                 f"every record is kept: run 'madeval leaderboard show {folder}' when there is room"):
        write_outputs(board, folder)
    if settings.wandb_args:
        from .wandb_log import log_run

        log_run(folder, board, settings.wandb_args)
    return board


def note_in_run_file(folder: Path, key: str, value: Any) -> None:
    """Keep ``value`` under ``key`` in the folder's run.json (rewritten atomically, only when it
    changes): ``cached_calls`` (``{"cached": n, "calls": m}``, how many of the recorded calls the
    response cache answered, as the board shows it), a resumed run's ``estimate`` and its ``sessions``
    (:mod:`madeval.resume`)."""
    path = folder / RUN_FILE
    described = read_run_file(path)
    if described.get(key) != value:
        write_json_atomically(path, {**described, key: value})


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


def versions() -> dict[str, Any]:
    """Versions of Python, madeval, key libraries and every loaded plugin."""
    found = {"python": sys.version.split()[0], "madeval": __version__}
    for package in ("openai", "pluggy", "datasets", "llama-cpp-python"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            pass
    found["plugins"] = {p["name"]: p["version"] for p in plugin_info() if p["status"] == "loaded"}
    return found
