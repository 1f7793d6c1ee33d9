"""Running an evaluation from settings: validate, start endpoints, plan, execute, summarise.

Everything that can be wrong with the input is checked before the output folder is created, so
bad input leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from . import __version__
from .config import DebateConfig, RunSettings
from .errors import UsageError
from .llm.cache import ResponseCache
from .llm.client import Endpoint, LLMClient, RetryPolicy
from .llm.session import ModelRef
from .plan import build_plan
from .plugins import Components, components as get_components, plugin_info
from .records import RecordSink
from .leaderboard import LeaderboardOptions, build_leaderboard, write_outputs
from .leaderboard.render import markdown
from .runner import RunOutcome, execute
from .task import Task, task_loader
from .taskfiles import TaskIndex

DEFAULT_ENDPOINT = "default"
EMBEDDED_ENDPOINT = "embedded"


def task_index(components: Components, include_paths: list[str]) -> TaskIndex:
    """Index the plugins' task folders, then ``--include-path`` folders (later ones win)."""
    index = TaskIndex()
    for _plugin, folder in components.task_sources:
        index.add_source(Path(str(folder)))
    for folder in include_paths:
        index.add_source(Path(folder))
    return index


def load_tasks(settings: RunSettings, components: Components) -> dict[str, Task]:
    """The tasks named by ``settings.tasks`` (groups and tags expanded), loaded with their items."""
    index = task_index(components, settings.include_path)
    load = task_loader(index, components.extractors, components.metrics)
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


def default_cache_path() -> Path:
    """``$MADEVAL_CACHE_DIR/responses.sqlite``, else ``~/.cache/madeval/responses.sqlite``."""
    root = os.environ.get("MADEVAL_CACHE_DIR") or Path.home() / ".cache" / "madeval"
    return Path(root) / "responses.sqlite"


@dataclass
class RunResult:
    """What a finished run produced."""

    folder: Path
    outcome: RunOutcome
    rows: list[dict[str, Any]]
    board: dict[str, Any]


def run(settings: RunSettings, *, show_progress: bool = True, out: TextIO = sys.stdout) -> RunResult:
    """Validate everything, run the plan and print the leaderboard table."""
    components = get_components()
    for config in settings.configurations:
        canonicalize(config, components)
    tasks = load_tasks(settings, components)
    with _endpoints(settings) as (endpoints, default_model):
        return asyncio.run(_run(settings, components, tasks, endpoints, default_model, show_progress, out))


def canonicalize(config: DebateConfig, components: Components) -> None:
    """Replace aliases by canonical component names, so equal configurations get equal ids."""
    config.responder = components.responders.resolve(config.responder).name
    config.paradigm = components.paradigms.resolve(config.paradigm).name
    config.decider = components.deciders.resolve(config.decider).name
    names = [components.personas.resolve(name).name for name in config.personas()]
    config.persona = names[0] if len(set(names)) == 1 and isinstance(config.persona, str) else names


@contextlib.contextmanager
def _endpoints(settings: RunSettings):
    """The endpoint table; with no endpoint given, the embedded model is started and stopped."""
    key = settings.resolved_api_key()
    per_endpoint = settings.endpoint_concurrency or settings.concurrency
    if settings.base_url or settings.endpoints:
        table = {}
        if settings.base_url:
            table[DEFAULT_ENDPOINT] = Endpoint(DEFAULT_ENDPOINT, settings.base_url, key, per_endpoint, settings.timeout, settings.transport)
        for name, url in settings.endpoints.items():
            own_key = os.environ.get(f"MADEVAL_API_KEY_{name.upper()}", key)
            table[name] = Endpoint(name, url, own_key, per_endpoint, settings.timeout, settings.transport)
        default = DEFAULT_ENDPOINT if settings.base_url else next(iter(table))
        yield table, ModelRef(settings.model or "", default)
        return
    from .embedded import MODEL_NAME, EmbeddedServer

    with EmbeddedServer() as server:
        concurrency = settings.endpoint_concurrency or 1
        endpoint = Endpoint(
            EMBEDDED_ENDPOINT, server.base_url, "-", concurrency, max(settings.timeout, 600.0), settings.transport
        )
        yield {EMBEDDED_ENDPOINT: endpoint}, ModelRef(settings.model or MODEL_NAME, EMBEDDED_ENDPOINT)


async def _run(settings, components, tasks, endpoints, default_model, show_progress, out) -> RunResult:
    cache = None
    if settings.cache != "off":
        cache = ResponseCache(settings.cache or default_cache_path())
    client = LLMClient(
        endpoints,
        concurrency=settings.concurrency,
        cache=cache,
        retry=RetryPolicy(max_attempts=settings.max_attempts, base_delay_s=settings.retry_delay),
    )
    try:
        await client.preflight()
        if not default_model.model:
            default_model = ModelRef(await _only_model(client, default_model.endpoint), default_model.endpoint)
        plan = build_plan(settings, tasks, components, default_model=default_model, endpoints=set(endpoints))
        folder = Path(settings.output_path) if settings.output_path else default_output_path()
        description = {
            **plan.describe(),
            "versions": versions(),
            "default_model": default_model.model,
            "order": {"configurations": list(plan.configs), "tasks": list(plan.items)},
            "groups": task_groups(settings, components),
            "task_sizes": {name: len(task.items) for name, task in tasks.items()},
            "leaderboard": settings.leaderboard,
        }
        sink = RecordSink(folder, description, plan.fingerprint())
        try:
            outcome = await execute(plan, components, client, sink, show_progress=show_progress)
        finally:
            sink.close()
    finally:
        await client.aclose()
        if cache is not None:
            cache.close()
    board = finish(folder, settings)
    out.write(markdown(board))
    out.write(
        f"\n{outcome.finished} units run, {outcome.skipped} already done, {outcome.failed} failed; "
        f"results in {folder}\n"
    )
    return RunResult(folder, outcome, board["rows"], board)


def finish(folder: Path, settings: RunSettings) -> dict[str, Any]:
    """Build the run's leaderboard and write it (Markdown, CSV, JSON, charts, HTML) into ``folder``."""
    board = build_leaderboard(folder, LeaderboardOptions.from_dict(settings.leaderboard))
    write_outputs(board, folder)
    return board


def task_groups(settings: RunSettings, components: Components) -> dict[str, list[str]]:
    """The groups and tags the user named, with their tasks (each gets leaderboard rows)."""
    index = task_index(components, settings.include_path)
    groups = {name: index.expand(name) for name in settings.tasks if name not in index.tasks}
    return {name: members for name, members in groups.items() if len(members) > 1}


async def _only_model(client: LLMClient, endpoint: str) -> str:
    """The endpoint's model when it serves exactly one; otherwise ask for ``--model``."""
    names = await client.list_models(endpoint)
    if len(names) == 1:
        return names[0]
    raise UsageError(f"endpoint '{endpoint}' serves {len(names) or 'no listed'} models; choose one with --model")


def versions() -> dict[str, Any]:
    """Versions of Python, madeval, key libraries and every loaded plugin."""
    import importlib.metadata

    found = {"python": sys.version.split()[0], "madeval": __version__}
    for package in ("openai", "pluggy", "datasets", "llama-cpp-python"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            pass
    found["plugins"] = {p["name"]: p["version"] for p in plugin_info()}
    return found
