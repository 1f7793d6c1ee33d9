"""One leaderboard from several finished runs: their configurations side by side, paired on the
(task, item, repeat) units they share.

Runs are read with :func:`madeval.analysis.run_data.load_run` and merged into one
:class:`~madeval.analysis.run_data.RunData`: configurations, records, tasks, groups and task sizes.
A configuration id found in two runs is a one-line UsageError unless the merge is asked for
(``merge_same``); its records are then pooled, and a unit recorded in both runs must carry the
same prediction and scores. Comparisons of a merged board pair each two configurations on the
units both recorded (:func:`madeval.analysis.compare.compare_family` with ``units``), and
say how many items and units they shared.

Item ids: tasks named by content (``doc_to_id: !content``) pair across re-ordered or re-mirrored
datasets. Runs written before content ids name those tasks' items ``<task>-<row position>``:
such runs pair with each other as before; with a run that names items by content they share no
item, and the merged board says so (:func:`pairing_notes`) instead of pairing nothing silently.
"""

from __future__ import annotations

import glob
import re
from pathlib import Path
from typing import Any

from madeval.analysis.run_data import RunData, load_run
from madeval.errors import UsageError
from madeval.records.folder import ReadReport


def run_folders(patterns: list[str]) -> list[Path]:
    """The run folders ``patterns`` name (folders or globs), each once, in the order given."""
    folders: dict[Path, Path] = {}  # resolved -> as given: ``a`` and ``./a`` are one run
    for pattern in patterns:
        found = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        if not found:
            raise UsageError(f"no run folder matches {pattern}")
        for folder in found:
            folders.setdefault(Path(folder).resolve(), Path(folder))
    return list(folders.values())


def merge_runs(folders: list[Path], merge_same: bool = False, priced: bool = False) -> RunData:
    """The runs in ``folders`` as one RunData (``runs`` lists them; ``notes`` says what did not pair);
    ``priced``: each record keeps what pricing needs (see :func:`.data.load_run`)."""
    runs = [load_run(folder, transcripts=False, priced=priced) for folder in folders]
    if len(runs) == 1:
        return runs[0]
    first = runs[0]
    merged = RunData(first.folder, _merged_run(runs), {}, [], {}, {}, ReadReport())
    owner: dict[str, Path] = {}
    by_key: dict[str, dict[str, Any]] = {}
    for data in runs:
        for cid, config in data.configurations.items():
            if cid in owner and not merge_same:
                raise UsageError(
                    f"configuration {config['label']} ({cid}) is in both {owner[cid]} and {data.folder}; "
                    "pass --merge-same to pool its records")
            owner.setdefault(cid, data.folder)
            merged.configurations.setdefault(cid, config)
        for record in data.records:
            key = record["unit"]["key"]
            if key in by_key:
                _same_unit(by_key[key], record, data.folder)
                continue
            by_key[key] = record
            merged.records.append(record)
        for name, members in data.groups.items():
            merged.groups.setdefault(name, members)
        for name, declared in data.aggregations.items():
            merged.aggregations.setdefault(name, declared)
        merged.reading.broken += data.reading.broken
        merged.reading.duplicates += data.reading.duplicates
    merged.runs = {str(data.folder): [c["label"] for c in data.configurations.values()] for data in runs}
    merged.notes = pairing_notes(runs)
    return merged


def _merged_run(runs: list[RunData]) -> dict[str, Any]:
    """A ``run.json`` for the merged runs: every task (first run first) and the task sizes."""
    tasks: dict[str, Any] = {}
    sizes: dict[str, Any] = {}
    for data in runs:
        for task in data.tasks:
            tasks.setdefault(task, data.run["tasks"][task])
        for task, size in (data.run.get("task_sizes") or {}).items():
            if sizes.setdefault(task, size) != size:
                raise UsageError(f"task {task} has {sizes[task]} items in {runs[0].folder} but {size} in {data.folder}")
    return {"tasks": tasks, "task_sizes": sizes, "order": {"tasks": list(tasks)}, "fingerprint": None}


def _same_unit(kept: dict[str, Any], record: dict[str, Any], folder: Path) -> None:
    """A unit recorded by two runs (``merge_same``) must have the same prediction and scores."""
    if (kept["prediction"], kept["metrics"]) != (record["prediction"], record["metrics"]):
        unit = record["unit"]
        raise UsageError(
            f"configuration {record.get('config_label') or unit['config']}: task {unit['task']} item {unit['item']} "
            f"repeat {unit['repeat']} has different records in {folder} and an earlier run; they cannot be merged")


def positional(task: str, item: str) -> bool:
    """True for an item id made from the row position (``<task>-<row>``), as runs before content ids have."""
    return re.fullmatch(re.escape(task) + r"-\d+", item) is not None


def pairing_notes(runs: list[RunData]) -> list[str]:
    """One line per task two runs both hold but share no item of, saying why when ids differ in kind."""
    items: list[dict[str, set[str]]] = []
    for data in runs:
        found: dict[str, set[str]] = {}
        for record in data.records:
            found.setdefault(record["unit"]["task"], set()).add(record["unit"]["item"])
        items.append(found)
    notes = []
    for i, (first, mine) in enumerate(zip(runs, items)):
        for second, theirs in zip(runs[i + 1:], items[i + 1:]):
            for task in sorted(set(mine) & set(theirs)):
                if mine[task] & theirs[task]:
                    continue
                kinds = [all(positional(task, item) for item in found[task]) for found in (mine, theirs)]
                why = ""
                if kinds[0] != kinds[1]:
                    old = first.folder if kinds[0] else second.folder
                    why = (f": {old} names items by row position (written before content ids), the other by "
                           "content, so the ids differ; re-run it to pair them")
                notes.append(f"task {task}: {first.folder} and {second.folder} share no item{why}")
    return notes
