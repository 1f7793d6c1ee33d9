"""The asyncio scheduler: runs work units concurrently and streams their records.

A fixed pool of workers pulls units from the plan, so many debates are in flight at once (the
endpoint stays busy across items) while memory stays bounded however many units there are. The
LLM client's semaphores bound the calls in flight. Each finished unit is scored and appended to
``records.jsonl`` at once; a unit whose calls fail for good goes to ``errors.jsonl`` and the run
goes on. Scoring runs in worker threads (:func:`score_unit`), so a reply that is slow to score
never stops the other debates; a score that cannot be decided in time is 0, and the record's
``scoring_errors`` says why. A record that cannot be written (disk full, read-only folder) ends
the run at once with one line: the other debates in flight are cancelled, and the records written
so far stay whole for a resume.
"""

from __future__ import annotations

import asyncio
import random
import time
import traceback
from dataclasses import astuple, dataclass
from typing import Any

from .debate import run_debate
from .errors import LLMError, StorageError
from .llm.client import LLMClient
from .llm.routing import RoutingKey
from .llm.session import DebateSession, derive_seed
from .metrics.base import Metric
from .metrics.checker import shutdown_checker
from .metrics.notes import collecting_scoring_errors
from .plan import Plan, Unit
from .plugins import Registries
from .progress import Progress
from .records import RecordSink
from .task import score_metrics
from .transcript import Agent, Persona, Transcript


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


async def execute(
    plan: Plan,
    registries: Registries,
    client: LLMClient,
    sink: RecordSink,
    *,
    workers: int | None = None,
    show_progress: bool = True,
) -> RunOutcome:
    """Run every unfinished unit of ``plan``; return when all are recorded or failed."""
    # built once per configuration; an unknown extra metric fails before any debate
    extras = {cid: extra_metrics(planned.config.metrics, registries) for cid, planned in plan.configs.items()}
    started, cpu_started = time.perf_counter(), time.process_time()
    pending = (u for u in plan.units() if u.key() not in sink.finished)
    skipped = len(sink.finished)
    items = {name: {item.id: item for item in items} for name, items in plan.items.items()}
    counts = {"finished": 0, "failed": 0, "unfixable": 0}
    first_error: list[str] = []
    progress = Progress(plan.size(), skipped, client.stats, enabled=show_progress)

    async def worker() -> None:
        for unit in pending:
            try:
                record = await run_unit(plan, unit, items[unit.task][unit.item], registries, client,
                                        extras[unit.config])
            except LLMError as error:
                counts["failed"] += 1
                if not error.retryable:
                    counts["unfixable"] += 1
                    first_error[:1] = first_error[:1] or [str(error)]
                sink.write_error(unit.to_dict(), str(error))
                progress.failed()
                continue
            except Exception as error:  # a component bug must not lose the other units
                counts["failed"] += 1
                where = traceback.extract_tb(error.__traceback__)[-1]
                detail = f"{type(error).__name__}: {error} ({where.filename}:{where.lineno})"
                counts["unfixable"] += 1
                first_error[:1] = first_error[:1] or [detail]
                sink.write_error(unit.to_dict(), detail)
                progress.failed()
                continue
            sink.write(record)
            counts["finished"] += 1
            progress.finished()

    # As many debates as calls may be in flight, and a few more (no more than the plan has units: with
    # --transport batch the bound is a batch's lines, tens of thousands).
    size = workers or max(1, min(plan.settings.calls_in_flight() + 8, plan.size()))
    running = [asyncio.ensure_future(worker()) for _ in range(size)]
    try:
        await asyncio.gather(*running)
    except StorageError:  # every later write would fail too: stop the debates in flight
        for task in running:
            task.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        raise
    finally:
        progress.close()
        await asyncio.to_thread(shutdown_checker)
    wall = time.perf_counter() - started
    stats = client.stats
    stats.finished_accounting()
    return RunOutcome(
        counts["finished"], skipped, counts["failed"], wall, time.process_time() - cpu_started,
        calls=stats.calls, cached_calls=stats.cached, peak_in_flight=stats.peak_in_flight,
        mean_in_flight=stats.in_flight_seconds / wall if wall > 0 else 0.0,
        unfixable=counts["unfixable"], first_unfixable=first_error[0] if first_error else "",
    )


async def run_unit(plan: Plan, unit: Unit, item, registries: Registries, client: LLMClient,
                   extras: list[tuple[str, Metric]] = ()) -> dict[str, Any]:
    """Debate one unit and return its record (decision, score, transcript, costs).

    ``extras`` are the configuration's extra metrics (:func:`extra_metrics`)."""
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


@dataclass(frozen=True)
class Replayed:
    """What the record of a replayed debate adds (:mod:`madeval.rescore`): its configuration (the
    leaderboard reads it from the record, as run.json does not list it) and how many calls the
    replayed decider made."""

    configuration: dict[str, Any]
    new_calls: int


async def unit_record(unit: Unit, label: str, task, item, transcript: Transcript,
                      extras: list[tuple[str, Metric]], *, wall_s: float | None,
                      replayed: Replayed | None = None) -> dict[str, Any]:
    """The record of a finished debate, scored (:func:`score_unit`): a line of ``records.jsonl``,
    or with ``replayed`` a line of ``rescored.jsonl`` (``wall_s`` None, no challenge round).

    ``label`` is the configuration's label, ``extras`` its extra metrics (:func:`extra_metrics`).
    """
    decision = transcript.decision
    reading = task.read(decision.answer, item)
    prediction = reading.answer
    scores = await score_unit(task, extras, prediction, item, transcript)
    return {
        "unit": unit.to_dict(),
        "config_label": label,
        **({"configuration": replayed.configuration} if replayed else {}),
        "target": item.target,
        "prediction": prediction,
        "parse_failure": prediction is None,
        # why the decision's answer could not be read (None when it was; absent in older records)
        "parse_note": reading.note if prediction is None else None,
        "parse_failures": transcript.parse_failures(),
        "metrics": scores.metrics,
        "scoring_errors": scores.errors,
        "decision_success": decision.success,
        "turns": transcript.turns_used,
        "calls": len(transcript.calls),
        # calls answered from the response cache (their tokens and latency are the original call's)
        "cached_calls": sum(1 for call in transcript.calls if call.cached),
        "chain": transcript.chain(),
        **({"new_calls": replayed.new_calls} if replayed else {}),
        "tokens": transcript.tokens(),
        # elapsed, including waits for a free concurrency slot (None: a replay, the debate was not re-run)
        "wall_s": None if wall_s is None else round(wall_s, 4),
        # its calls' own latencies (of a replay: the stored discussion's and the new calls')
        "llm_s": round(sum(call.latency_s for call in transcript.calls), 4),
        "oracle": transcript.oracle,
        **({} if replayed else {"challenges": scores.challenges}),
        "transcript": transcript.to_dict(),
    }


@dataclass
class UnitScores:
    """A finished debate's scores (:func:`unit_metrics`), its challenge summary, and the reasons
    why any score could not be decided (``scoring_errors`` in the record; such a score is 0)."""

    metrics: dict[str, float]
    challenges: list[dict[str, Any]]
    errors: list[str]


async def score_unit(task, extras: list[tuple[str, Metric]], prediction: str | None, item,
                     transcript: Transcript) -> UnitScores:
    """Score a finished debate in a worker thread, never on the event loop: scoring reads
    untrusted replies (the math checker is bounded by its own deadline, see
    :mod:`madeval.metrics.checker`), and other debates go on meanwhile."""

    def score() -> UnitScores:
        with collecting_scoring_errors() as errors:
            metrics = unit_metrics(task, extras, prediction, item, transcript)
            challenges = challenge_summary(transcript, task, item)
        return UnitScores(metrics, challenges, errors)

    return await asyncio.to_thread(score)


def unit_metrics(task, extras: list[tuple[str, Metric]], prediction: str | None, item,
                 transcript: Transcript) -> dict[str, float]:
    """A finished debate's scores: the task's metrics, then the configuration's extra metrics
    (:func:`extra_metrics`; one the task's ``metric_list`` already names is left to the task)."""
    return {
        **task.score(prediction, item, transcript=transcript),
        **score_metrics([(n, m) for n, m in extras if n not in task.metric_names], prediction, item,
                        task.answer_type, transcript),
    }


def extra_metrics(names: list[str], registries: Registries) -> list[tuple[str, Metric]]:
    """The configuration's extra metrics (``DebateConfig.metrics``) as (registered name, metric);
    an unknown name raises a one-line UsageError."""
    return [(registries.metrics.resolve(name).name, registries.metrics.create(name)) for name in names]


def challenge_summary(transcript: Transcript, task, item) -> list[dict[str, Any]]:
    """Per challenge variant: how many agents challenged, and the scores of their new answers."""
    summary = []
    for event in transcript.events:
        if event["kind"] != "challenge":
            continue
        results = event["results"]
        challenged = [r for r in results if r["agrees"] is False]
        summary.append({
            "variant": event["variant"],
            "agents": len(results),
            "challenged": len(challenged),
            "new_answer_scores": [task.score(r["new_answer"], item) for r in challenged],
        })
    return summary
