"""What a leaderboard is built from: a run folder's configurations, tasks and records.

A run folder holds ``run.json`` (configurations, tasks with their chosen items, groups, task sizes),
``records.jsonl`` (one line per debate) and, after ``madeval rescore``, ``rescored.jsonl`` (records
of deciders replayed on the stored debates; each carries its configuration). Per-item scores
average the repeats of an item first. Each unit counts once: broken lines are skipped and duplicate
records ignored, and both are counted in ``RunData.reading`` (see :mod:`madeval.records.folder`).
"""

from __future__ import annotations

import json
import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from madeval.analysis.debate_facts import turn_answers
from madeval.errors import UsageError
from madeval.pricing.cost import BATCH_KEY
from madeval.pricing.usage import USAGE_KEY, record_usage
from madeval.records.folder import RUN_FILE, ReadReport, complete_record, read_jsonl_records, read_records
from madeval.task.groups import declared_aggregations

RESCORED_FILE = "rescored.jsonl"


@dataclass
class RunData:
    """Everything about one run that the leaderboard needs."""

    folder: Path
    run: dict[str, Any]
    configurations: dict[str, dict[str, Any]]
    records: list[dict[str, Any]]
    groups: dict[str, list[str]] = field(default_factory=dict)
    #: group -> metric -> its declared aggregation (see :mod:`.groups`); missing: macro, the default.
    aggregations: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: broken lines skipped and duplicate records ignored in ``records.jsonl`` and ``rescored.jsonl``
    reading: ReadReport = field(default_factory=ReadReport)
    #: the run folders merged into this one, each with its configurations' labels (:mod:`.merge`);
    #: empty for a single run
    runs: dict[str, list[str]] = field(default_factory=dict)
    #: what did not pair across the merged runs, one line each (:func:`.merge.pairing_notes`)
    notes: list[str] = field(default_factory=list)

    @property
    def tasks(self) -> list[str]:
        """Task names in run order."""
        return _ordered(self.run.get("tasks", {}), self.run.get("order", {}).get("tasks"))

    def task_size(self, task: str) -> int | None:
        """How many items the task has in full (the benchmark size N), when recorded."""
        return (self.run.get("task_sizes") or {}).get(task)


def load_run(folder: str | Path, *, transcripts: bool = True, priced: bool = False) -> RunData:
    """Read a run folder; a folder without ``run.json`` is a one-line UsageError.

    With ``transcripts=False`` each record is kept without its transcript (its LLM time is
    taken first), so building a leaderboard needs memory for the scores, not the debates: the
    transcripts are about 97% of a record. ``priced`` (for a board with prices) also notes on each
    record whether its run used the batch transport (how its calls that recorded no transport of their
    own are priced) and, when its transcript is dropped, its tokens per model and transport
    (:mod:`madeval.pricing.usage`): a few hundred bytes a record, only when they are needed.
    """
    folder = Path(folder)
    run = read_run_description(folder)
    stored = run.get("configurations", {})
    order = _ordered(stored, run.get("order", {}).get("configurations"))
    configurations = {cid: {**stored[cid], "source": "run"} for cid in order}
    # how calls recorded without their own transport are priced (run.json keeps the first run's transport)
    batch = (run.get("settings") or {}).get("transport") == "batch"

    def keep(record: dict[str, Any]) -> dict[str, Any]:
        if priced:
            record[BATCH_KEY] = batch
            if not transcripts:
                record[USAGE_KEY] = record_usage(record)
        return record if transcripts else _without_transcript(record)

    reading = ReadReport()
    # a line with a unit key but not the rest of a record is skipped and counted as a broken one
    records = [keep(record) for record in read_records(folder, reading, keep=complete_record)]
    seen = {record["unit"]["key"] for record in records}
    for record in read_rescored(folder, reading, seen):
        record = keep(record)
        configurations.setdefault(record["unit"]["config"], {**record["configuration"], "source": "rescored"})
        records.append(record)
    records.sort(key=plan_position(run, list(configurations)))
    groups = dict(run.get("groups") or {})
    return RunData(folder, run, configurations, records, groups, declared_aggregations(run, list(groups)), reading)


def plan_position(run: dict[str, Any], configurations: list[str]):
    """A sort key putting records in the run's plan order (configuration, task, item as chosen,
    repeat), whatever order their debates finished in: concurrent units finish in an order that
    changes from run to run, and a board must not (numpy's variance and the seeded permutation
    tests see the items in list order, so the same records in another order moved a CI's last
    digits). A unit the run does not list (a hand-edited file) comes after, by its key."""
    config_at = {cid: index for index, cid in enumerate(configurations)}
    tasks = run.get("tasks") if isinstance(run.get("tasks"), dict) else {}
    task_at = {name: index for index, name in enumerate(_ordered(tasks, run.get("order", {}).get("tasks")))}
    item_at = {}
    for name, task in tasks.items():
        items = task.get("items") if isinstance(task, dict) else None
        for index, item in enumerate(items if isinstance(items, list) else []):
            item_at.setdefault((name, str(item)), index)
    last = float("inf")

    def position(record: dict[str, Any]) -> tuple[Any, ...]:
        unit = record["unit"]
        return (config_at.get(unit["config"], last), task_at.get(unit["task"], last),
                item_at.get((unit["task"], unit["item"]), last), unit["repeat"], str(unit.get("key")))

    return position


#: The parts of ``run.json`` a leaderboard reads, with their types (each may be missing).
RUN_PARTS = {"configurations": dict, "tasks": dict, "order": dict, "groups": dict, "task_sizes": dict,
             "leaderboard": dict, "settings": dict, "group_aggregation": dict, "task_notes": dict}


def read_run_description(folder: str | Path) -> dict[str, Any]:
    """The ``run.json`` of a run folder; a missing one, one that is not JSON, or one whose parts
    are not of their types is a one-line UsageError naming the file."""
    folder = Path(folder)
    run_file = folder / RUN_FILE
    if not run_file.is_file():
        raise UsageError(f"{folder} is not a madeval run folder (no {RUN_FILE})")
    try:
        run = json.loads(run_file.read_bytes())
    except json.JSONDecodeError as error:
        raise UsageError(f"{run_file} is not valid JSON: {error.msg} (line {error.lineno})") from None
    except (ValueError, RecursionError):  # not UTF-8, or nested past the parser's depth
        raise UsageError(f"{run_file} is not valid JSON") from None
    except OSError as error:
        raise UsageError(f"cannot read {run_file}: {error.strerror}") from None
    wrong = [name for name, kind in RUN_PARTS.items() if name in run and not isinstance(run[name], kind)] \
        if isinstance(run, dict) else ["the whole file"]
    if not wrong:
        configurations = run.get("configurations") or {}
        wrong = [f"configuration {cid}" for cid, entry in configurations.items()
                 if not (isinstance(entry, dict) and isinstance(entry.get("label"), str))][:1]
    if wrong:
        raise UsageError(f"{run_file} is not a madeval run description ({wrong[0]} is malformed)")
    return run


def _without_transcript(record: dict[str, Any]) -> dict[str, Any]:
    """``record`` with its LLM time filled in and its transcript dropped; the answers each agent
    held per turn are kept (``turn_answers``, a few bytes a turn) for the board's dynamics."""
    record["llm_s"] = llm_seconds(record)
    record["cached_calls"] = cached_calls(record)
    record["shared_calls"] = shared_calls(record)
    record["made_tokens"] = made_tokens(record)
    if "transcript" in record:
        record["turn_answers"] = turn_answers(record).to_dict()
        del record["transcript"]
    return record


def _ordered(mapping: dict[str, Any], order: list[str] | None) -> list[str]:
    """The keys of ``mapping`` in the recorded run order (``run.json`` is written with sorted keys)."""
    listed = [key for key in order or [] if key in mapping]
    return listed + [key for key in mapping if key not in listed]


def read_rescored(folder: str | Path, report: ReadReport | None = None,
                  seen: set[str] | None = None) -> list[dict[str, Any]]:
    """The rescored records of a run folder, each unit once (see
    :func:`madeval.records.folder.read_jsonl_records`; ``report`` counts what was left out)."""
    return list(read_jsonl_records(Path(folder) / RESCORED_FILE, report, seen, keep=complete_rescored))


def complete_rescored(record: dict[str, Any]) -> bool:
    """A whole rescored record: a record that also carries its configuration (with a label)."""
    configuration = record.get("configuration")
    return complete_record(record) and isinstance(configuration, dict) and isinstance(configuration.get("label"), str)


def metric_names(records: list[dict[str, Any]]) -> list[str]:
    """The metrics the records carry, in the order of the first record."""
    names: list[str] = []
    for record in records:
        for name in record["metrics"]:
            if name not in names:
                names.append(name)
    return names


def item_scores(records: list[dict[str, Any]], metric: str) -> dict[str, float]:
    """Per-item score: the mean over an item's repeats, keyed ``task/item``."""
    by_item: dict[str, list[float]] = defaultdict(list)
    for record in records:
        if metric in record["metrics"]:
            by_item[item_key(record)].append(float(record["metrics"][metric]))
    return {key: statistics.fmean(values) for key, values in by_item.items()}


def unit_scores(records: list[dict[str, Any]], metric: str) -> dict[tuple[str, int], float]:
    """Per unit: the score keyed ``(task/item, repeat)``, for pairing runs on the units they share."""
    return {(item_key(r), r["unit"]["repeat"]): float(r["metrics"][metric]) for r in records if metric in r["metrics"]}


def item_spread(records: list[dict[str, Any]], metric: str) -> tuple[list[float | None], list[int]]:
    """Per item: the variance over its repeats and its number of repeats. One repeat shows no
    spread: its variance is None (unknown), not 0 (see :func:`madeval.analysis.stats.separable`)."""
    by_item: dict[str, list[float]] = defaultdict(list)
    for record in records:
        if metric in record["metrics"]:
            by_item[item_key(record)].append(float(record["metrics"][metric]))
    variances = [variance(v) if len(v) > 1 else None for v in by_item.values()]
    return variances, [len(v) for v in by_item.values()]


def variance(values: list[float]) -> float:
    """``statistics.variance(values)``, to the last bit, without its exact fractions when every
    value is 0 or 1 (the common case: k ones of n): k(n-k) / (n(n-1)) is the same exact ratio, and
    Python rounds an integer division correctly, as ``statistics`` rounds its fraction."""
    ones = values.count(1.0)
    if ones + values.count(0.0) == len(values):
        n = len(values)
        return ones * (n - ones) / (n * (n - 1))
    return statistics.variance(values)


def item_key(record: dict[str, Any]) -> str:
    """``task/item``: items of different tasks never collide in a group."""
    return f"{record['unit']['task']}/{record['unit']['item']}"


def strata_of(records: list[dict[str, Any]]) -> dict[str, str]:
    """Item key (``task/item``) -> task, for the stratified tests of macro rows."""
    return {item_key(r): r["unit"]["task"] for r in records}


def cached_calls(record: dict[str, Any]) -> int:
    """How many of a debate's calls the response cache answered (records before ``cached_calls``
    existed: counted from the transcript)."""
    if record.get("cached_calls") is not None:
        return int(record["cached_calls"])
    return sum(1 for call in _calls(record) if call.get("cached"))


def cache_share(records: list[dict[str, Any]]) -> dict[str, int]:
    """``{"cached": n, "calls": m}``: calls the response cache answered, of all calls, over ``records``."""
    return {"cached": sum(cached_calls(r) for r in records), "calls": sum(int(r.get("calls") or 0) for r in records)}


def _calls(record: dict[str, Any]) -> list[dict[str, Any]]:
    transcript = record.get("transcript")
    calls = transcript.get("calls") if isinstance(transcript, dict) else None
    return [call for call in calls if isinstance(call, dict)] if isinstance(calls, list) else []


def _made(call: dict[str, Any]) -> bool:
    """Whether a stored call was made for its debate: neither another debate's reply nor the cache's."""
    return call.get("shared_from") is None and not call.get("cached")


def shared_calls(record: dict[str, Any]) -> int:
    """How many of a debate's calls reused the reply of another configuration's identical call
    (:mod:`madeval.llm.shared`; records before ``shared_calls`` existed: counted from the transcript)."""
    if record.get("shared_calls") is not None:
        return int(record["shared_calls"])
    return sum(1 for call in _calls(record) if call.get("shared_from") is not None and not call.get("cached"))


def made_tokens(record: dict[str, Any]) -> int:
    """The tokens of a debate's calls made for it (neither shared nor cached): records before
    ``made_tokens`` existed count them from the transcript, or, without one, all their tokens."""
    if record.get("made_tokens") is not None:
        return int(record["made_tokens"])
    if "transcript" not in record:
        return int((record.get("tokens") or {}).get("total") or 0)
    return sum(int(call.get("prompt_tokens") or 0) + int(call.get("completion_tokens") or 0)
               for call in _calls(record) if _made(call))


def paid_share(records: list[dict[str, Any]]) -> dict[str, int]:
    """What the run paid against what its debates used, over ``records``: ``calls`` used and
    ``made`` (neither shared nor from the response cache), ``shared`` (reused from another
    configuration's identical call), ``tokens`` used and ``made_tokens``."""
    used = sum(int(r.get("calls") or 0) for r in records)
    shared = sum(shared_calls(r) for r in records)
    return {"calls": used, "made": used - shared - sum(cached_calls(r) for r in records), "shared": shared,
            "tokens": sum(int((r.get("tokens") or {}).get("total") or 0) for r in records),
            "made_tokens": sum(made_tokens(r) for r in records)}


def llm_seconds(record: dict[str, Any]) -> float:
    """A debate's LLM time: the sum of its calls' own latencies (time holding a concurrency slot).

    Unlike the elapsed ``wall_s`` it leaves out the waits for a free slot while other debates hold
    them. Records written before ``llm_s`` existed get it from their transcript's calls.
    """
    if record.get("llm_s") is not None:
        return float(record["llm_s"])
    return float(sum(call.get("latency_s") or 0.0 for call in record.get("transcript", {}).get("calls", [])))
