"""The asyncio scheduler: runs work units concurrently and streams their records.

A bounded pool runs the plan's units in order (:func:`run_pool`), so many debates are in flight at
once (the endpoint stays busy across items) while memory stays bounded however many units there
are. The plan puts the configurations' units of one item and repeat next to each other, so their
identical calls are made once (:mod:`madeval.run.sharing`); a debate waiting for another's reply
lets one more start, so as many distinct calls stay in flight. The LLM client's semaphores bound
the calls in flight. Each finished unit is scored and appended to
``records.jsonl`` at once; a unit whose calls fail for good goes to ``errors.jsonl`` and the run
goes on. Scoring runs in worker threads (:func:`score_unit`), so a reply that is slow to score
never stops the other debates; a score that cannot be decided in time is 0, and the record's
``scoring_errors`` says why. A record that cannot be written (disk full, read-only folder) ends
the run at once with one line: the other debates in flight are cancelled, and the records written
so far stay whole for a resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
import traceback
from dataclasses import astuple, dataclass
from typing import Any, Awaitable, Callable, Iterator

from madeval.core.item import Item
from madeval.core.plugins import Registries
from madeval.core.transcript import Agent, Persona, Transcript
from madeval.debate.loop import run_debate
from madeval.debate.session import DebateSession, derive_seed
from madeval.errors import LLMError, StorageError
from madeval.llm.client import LLMClient
from madeval.llm.routing import RoutingKey
from madeval.llm.shared import Asker, SharedCalls
from madeval.metrics.base import Metric
from madeval.metrics.checker import shutdown_checker
from madeval.records.folder import RecordSink
from madeval.records.unit import Unit, extra_metrics, unit_record
from madeval.run.plan import Plan
from madeval.run.progress import Progress
from madeval.run.sharing import RunSharing, sharing_wanted


@dataclass
class RunOutcome:
    """How a run went: units finished now, skipped as already done, and failed; wall and CPU
    seconds spent executing units (not loading tasks or summarising)."""

    finished: int
    skipped: int
    failed: int
    wall_s: float
    cpu_s: float = 0.0
    calls: int = 0
    cached_calls: int = 0
    peak_in_flight: int = 0
    mean_in_flight: float = 0.0
    #: of ``failed``: units a re-run cannot fix (the endpoint refused a request, a component failed)
    unfixable: int = 0
    #: the first message of a failure a re-run cannot fix, for the run's last words
    first_unfixable: str = ""
    #: calls answered with the reply of an identical call another configuration's debate made
    shared_calls: int = 0


async def execute(
    plan: Plan,
    registries: Registries,
    client: LLMClient,
    sink: RecordSink,
    *,
    workers: int | None = None,
    show_progress: bool = True,
) -> RunOutcome:
    """Run every unfinished unit of ``plan``; return when all are recorded or failed.

    ``workers``: debates running at most (default: as many as calls may be in flight, and a few
    more). With shared calls (:mod:`madeval.run.sharing`), a debate waiting for a reply another
    configuration's debate is getting does not count: another debate starts meanwhile, up to
    ``workers`` times the number of configurations, so as many distinct calls stay in flight."""
    # built once per configuration; an unknown extra metric fails before any debate
    extras = {cid: extra_metrics(planned.config.metrics, registries) for cid, planned in plan.configs.items()}
    started, cpu_started = time.perf_counter(), time.process_time()
    pending = (u for u in plan.units() if u.key() not in sink.finished)
    skipped = len(sink.finished)
    items = {name: {item.id: item for item in items} for name, items in plan.items.items()}
    counts = {"finished": 0, "failed": 0, "unfixable": 0}
    first_error: list[str] = []
    sharing = RunSharing(plan, sink.folder, sink.finished, client) if sharing_wanted(plan) else None
    progress = Progress(plan.size(), skipped, client.stats, enabled=show_progress)

    async def run_one(unit: Unit) -> None:
        asker = sharing.asker(unit) if sharing is not None else None
        try:
            record = await run_unit(plan, unit, items[unit.task][unit.item], registries, client,
                                    extras[unit.config], asker)
        except LLMError as error:
            counts["failed"] += 1
            if not error.retryable:
                counts["unfixable"] += 1
                first_error[:1] = first_error[:1] or [str(error)]
            _failed(unit, str(error))
            return
        except StorageError:  # the journal of shared replies cannot be written: nor could records be
            raise
        except Exception as error:  # a component bug must not lose the other units
            counts["failed"] += 1
            where = traceback.extract_tb(error.__traceback__)[-1]
            detail = f"{type(error).__name__}: {error} ({where.filename}:{where.lineno})"
            counts["unfixable"] += 1
            first_error[:1] = first_error[:1] or [detail]
            _failed(unit, detail)
            return
        sink.write(record)
        counts["finished"] += 1
        progress.finished()
        if sharing is not None:
            sharing.done(unit, finished=True)

    def _failed(unit: Unit, error: str) -> None:
        sink.write_error(unit.to_dict(), error)
        progress.failed()
        if sharing is not None:
            sharing.done(unit, finished=False)

    size = workers or debates_at_once(plan, client)
    try:
        if sharing is None:
            await run_pool(pending, run_one, size, size)
        else:
            await run_pool(pending, run_one, size, size * len(plan.configs), sharing.calls)
    finally:
        progress.close()
        if sharing is not None:
            with contextlib.suppress(StorageError):  # the journal then keeps more lines than a resume needs
                sharing.close()
        await asyncio.to_thread(shutdown_checker)
    wall = time.perf_counter() - started
    stats = client.stats
    stats.finished_accounting()
    return RunOutcome(
        counts["finished"], skipped, counts["failed"], wall, time.process_time() - cpu_started,
        calls=stats.calls, cached_calls=stats.cached, peak_in_flight=stats.peak_in_flight,
        mean_in_flight=stats.in_flight_seconds / wall if wall > 0 else 0.0,
        unfixable=counts["unfixable"], first_unfixable=first_error[0] if first_error else "",
        shared_calls=stats.shared,
    )


async def run_pool(units: Iterator[Unit], run_one: Callable[[Unit], Awaitable[None]], busy: int, most: int,
                   sharing: SharedCalls | None = None) -> None:
    """Run ``run_one`` over ``units`` in their order, ``busy`` at a time, not counting those waiting
    for a reply another debate is getting (``sharing.waiting``), and never more than ``most``.

    A failure that escapes ``run_one`` (a record that cannot be written: every later write would
    fail too) cancels the debates in flight and is raised."""
    running: set[asyncio.Task] = set()
    changed = asyncio.Event()
    escaped: list[BaseException] = []

    def ended(task: asyncio.Task) -> None:
        running.discard(task)
        if not task.cancelled() and task.exception() is not None:
            escaped.append(task.exception())
        changed.set()

    def full() -> bool:
        waiting = sharing.waiting if sharing is not None else 0
        return len(running) >= most or len(running) - waiting >= busy

    if sharing is not None:
        sharing.listener = changed.set
    try:
        for unit in units:
            while full() and not escaped:
                changed.clear()
                await changed.wait()
            if escaped:
                raise escaped[0]
            task = asyncio.ensure_future(run_one(unit))
            running.add(task)
            task.add_done_callback(ended)
        while running and not escaped:
            changed.clear()
            await changed.wait()
        if escaped:
            raise escaped[0]
    finally:
        if sharing is not None:
            sharing.listener = None
        for task in list(running):
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)


def debates_at_once(plan: Plan, client: LLMClient) -> int:
    """How many debates run at once: as many as calls may be in flight and a few more, so the endpoints
    stay busy while a debate scores a reply or builds its next prompt (no more than the plan has units:
    with --transport batch the bound is a batch's lines, tens of thousands). When only one call can be
    in flight (the embedded model's one slot), one: debates taking turns on one slot each finish later
    and none sooner, so they run one after another and each is recorded as soon as it can be."""
    in_flight = plan.settings.calls_in_flight()
    slots = sum(endpoint.concurrency for endpoint in client.endpoints.values())
    if min(in_flight, slots) <= 1:
        return 1
    return max(1, min(in_flight + 8, plan.size()))


async def run_unit(plan: Plan, unit: Unit, item: Item, registries: Registries, client: LLMClient,
                   extras: list[tuple[str, Metric]] = (), asker: Asker | None = None) -> dict[str, Any]:
    """Debate one unit and return its record (decision, score, transcript, costs).

    ``extras`` are the configuration's extra metrics (:func:`extra_metrics`); ``asker``: how its
    calls are shared with other configurations' debates (None: they are not)."""
    planned = plan.configs[unit.config]
    task = plan.tasks[unit.task]
    setup = planned.setup(registries)
    transcript = Transcript()
    settings = plan.settings
    session = DebateSession(
        client,
        agents=planned.agent_models,
        judge=planned.judge_model,
        generation=settings.generation(),
        run_seed=settings.seed,
        item_id=item.id,
        repeat=unit.repeat,
        transcript=transcript,
        routing=RoutingKey.for_unit(settings.routing_header, settings.routing_grain, astuple(unit)),
        asker=asker,
    )
    agents = [
        Agent(i, Persona(""), ref.model, ref.endpoint, setup.neutral[i])
        for i, ref in enumerate(planned.agent_models)
    ]
    rng = debate_rng(settings.seed, item.id, unit.repeat)
    started = time.perf_counter()
    await run_debate(
        setup,
        task.prompt(item),
        session,
        agents=agents,
        extract=lambda text: task.extract(text, item),
        read=task.reader(item),  # a solution's answer and parse note from one run of the chain
        rng=rng,
        item_id=item.id,
        gold=item.target,
        transcript=transcript,
    )
    wall = time.perf_counter() - started
    return await unit_record(unit, planned.config.label(), task, item, transcript, extras, wall_s=wall)


def debate_rng(run_seed: int, item_id: str, repeat: int) -> random.Random:
    """The random source of one unit's debate (paradigm order, tie-breaks), the same for its replay."""
    return random.Random(derive_seed(run_seed, item_id, repeat, "debate-rng"))
