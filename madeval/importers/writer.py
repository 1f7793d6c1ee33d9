"""Writing imported debates as a madeval run folder, all or nothing.

Each input file is one configuration (id: a hash of the format and the label, so importing the same
file again finds its debates already there and adds nothing). Every debate becomes a record through
:func:`madeval.records.unit.unit_record`, the function that writes madeval's own records, so it is
scored by the task's metrics and read by the leaderboard, ``rescore`` and the viewers like a live one.

Nothing is half-written: the new folder is built beside its final place (a hidden staging folder
in the same parent) and renamed into place when every file has been read; an existing import
folder gets its new ``records.jsonl`` and ``run.json`` each by a rename, under the folder's write
lock. A file that cannot be read, or a task that matches none of a file's records, stops the import
with one line and leaves the output folder as it was. The staging folder holds its own lock while
the import runs, so the next import into the same folder removes one left by an import that was
killed (SIGTERM, SIGKILL), and never one that is still running. Memory holds one record at a time (plus the
ids of the units already written).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from madeval.errors import StorageError, UsageError
from madeval.importers.base import ImportedFile, Importer
from madeval.records import lock as folder_lock
from madeval.records.folder import (
    RECORDS_FILE,
    RUN_FILE,
    encode_line,
    read_records,
    read_run_file,
    write_json_atomically,
)
from madeval.records.unit import Unit, unit_record_blocking
from madeval.settings.config import DebateConfig, RunSettings
from madeval.task.definition import Task
from madeval.util import aio

#: The middle of a staging folder's name: ``.<output folder's name>.importing-<random>``.
STAGING_MARK = ".importing-"
#: Seconds after which a staging folder without a lock is taken for abandoned.
UNLOCKED_STAGING_S = 600

#: ``run.json``'s mark of a folder written by ``madeval import`` (a run folder of its own kind:
#: ``madeval run`` refuses to resume into it, and ``rescore`` knows it has no endpoint of its own).
IMPORTED_KEY = "imported"


@dataclass
class FileOutcome:
    """What one input file gave: debates added now, debates already in the folder, and the lines
    saying what was left out (unmatched records, duplicates)."""

    path: Path
    label: str
    config: str
    added: int = 0
    already: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class ImportOutcome:
    """What an import did, file by file."""

    folder: Path
    files: list[FileOutcome]

    @property
    def added(self) -> int:
        """Debates added to the folder by this import."""
        return sum(f.added for f in self.files)


def configuration_id(format_name: str, label: str) -> str:
    """The id of an imported configuration: stable for the same format and label."""
    blob = json.dumps(["imported", format_name, label])
    return hashlib.sha256(blob.encode()).hexdigest()[:10]


def import_files(importer: Importer, paths: list[Path], task: Task, folder: Path, label: str | None = None,
                 *, versions: Callable[[], dict[str, Any]] = dict) -> ImportOutcome:
    """Read every file in ``paths`` with ``importer`` as one configuration each and add their
    debates on ``task`` to the run folder ``folder`` (created if missing).

    Bad input (an unreadable file, a task that matches none of a file's records, a folder that
    holds something else) raises a one-line UsageError and leaves ``folder`` as it was.
    ``versions`` gives the versions recorded in a new ``run.json``.
    """
    folder = Path(folder)
    if label is not None and len(paths) > 1:
        raise UsageError("--label names one configuration: give it with one input file")
    for path in paths:
        if not path.is_file():
            raise UsageError(f"no such file: {path}")
    existing = _existing_run(folder)
    lock = folder_lock.hold(folder) if existing is not None else contextlib.nullcontext()
    with lock:
        staging = _staging_folder(folder)
        try:
            outcome = _write(importer, paths, task, folder, label, existing, staging, versions)
            _commit(staging, folder, existing is not None)
        finally:
            folder_lock.release(staging)  # after a new folder's rename: the lock file moved with it
            shutil.rmtree(staging, ignore_errors=True)
    return outcome


def _existing_run(folder: Path) -> dict[str, Any] | None:
    """The ``run.json`` of an earlier import into ``folder``; None when the folder is new. A folder
    that holds anything else is refused."""
    if not folder.exists():
        return None
    if not folder.is_dir():
        raise UsageError(f"{folder} is not a folder; choose another --output-path")
    run_file = folder / RUN_FILE
    if not run_file.is_file():
        if any(folder.iterdir()):
            raise UsageError(f"{folder} is not empty and holds no run; choose another --output-path")
        return None
    stored = read_run_file(run_file)
    if not stored.get(IMPORTED_KEY):
        raise UsageError(f"{folder} holds a madeval run; import into another folder and compare both with "
                         f"'madeval leaderboard show {folder} OTHER'")
    return stored


def _staging_folder(folder: Path) -> Path:
    """A new hidden folder beside ``folder`` (same file system, so a rename moves it in place),
    holding its lock while this import runs; the staging folders of imports into the same folder
    that ended without removing theirs (killed: SIGTERM, SIGKILL) are removed first."""
    parent = folder.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
        _remove_abandoned_staging(parent, folder.name)
        staging = parent / f".{folder.name}{STAGING_MARK}{secrets.token_hex(6)}"
        staging.mkdir()  # a new folder: fails on anything already there
    except OSError as error:
        raise StorageError(f"cannot write {parent}: {error.strerror or error}") from None
    folder_lock.acquire(staging)
    return staging


def _remove_abandoned_staging(parent: Path, name: str) -> None:
    """Remove the staging folders of earlier imports into ``parent/name`` that no process runs any
    more: its lock is free (:func:`madeval.records.lock.abandoned`), or it has none and is older than
    :data:`UNLOCKED_STAGING_S` (killed before it took it, or made by a madeval that took none)."""
    prefix = f".{name}{STAGING_MARK}"
    with os.scandir(parent) as entries:
        found = [Path(e.path) for e in entries if e.name.startswith(prefix) and e.is_dir(follow_symlinks=False)]
    for staging in found:
        try:
            unlocked = not os.path.lexists(staging / folder_lock.LOCK_FILE)
            stale = unlocked and time.time() - os.lstat(staging).st_mtime > UNLOCKED_STAGING_S
        except OSError:
            continue
        if stale or folder_lock.abandoned(staging):
            shutil.rmtree(staging, ignore_errors=True)


def _write(importer, paths, task, folder, label, existing, staging, versions) -> ImportOutcome:
    run = existing or _new_run(versions)
    configurations = run.setdefault("configurations", {})
    labels = {description.get("label"): cid for cid, description in configurations.items()}
    done: set[str] = set()
    with open(staging / RECORDS_FILE, "wb") as records:
        if existing is not None:  # the folder's records first, whole lines only, then the new ones
            for record in read_records(folder):
                done.add(record["unit"]["key"])
                records.write(encode_line(record))
        outcomes = []
        items: dict[str, None] = {}  # the items imported, in order (a set that keeps its order)
        for path in paths:
            imported = importer.read(path, task, label)
            _check_same_source(configurations, configuration_id(importer.name, imported.label), imported)
            outcome = _write_file(importer, imported, path, task, records, done, items, labels)
            outcomes.append(outcome)
            description = {"label": imported.label, **DebateConfig(**imported.options).identity(),
                           IMPORTED_KEY: imported.description}
            configurations[outcome.config] = description
            labels[imported.label] = outcome.config
    _describe_run(run, task, items, [o.config for o in outcomes])
    write_json_atomically(staging / RUN_FILE, run)
    return ImportOutcome(folder, outcomes)


def _check_same_source(configurations: dict[str, Any], config: str, imported: ImportedFile) -> None:
    """Refuse a file whose label names a configuration imported from another file (other content)."""
    stored = (configurations.get(config) or {}).get(IMPORTED_KEY) or {}
    digest = imported.description.get("sha256")
    if stored.get("sha256") and digest and stored["sha256"] != digest:
        raise UsageError(f"label '{imported.label}' already holds {stored.get('file')} (other content) in the "
                         "folder; choose another with --label")


def _write_file(importer: Importer, imported: ImportedFile, path: Path, task: Task, records, done: set[str],
                items: dict[str, None], labels: dict[str, str]) -> FileOutcome:
    """Write the debates of one file; a file that gives none is refused in one line."""
    config = configuration_id(importer.name, imported.label)
    if labels.get(imported.label, config) != config:
        raise UsageError(f"label '{imported.label}' is taken by another configuration in the folder; "
                         "choose another with --label")
    outcome = FileOutcome(path, imported.label, config)
    # scored in this thread: an import has no event loop to keep free (unit_record_blocking)
    with aio.start_up_heap_frozen():
        for debate in imported.debates:
            unit = Unit(config, task.name, debate.item.id, debate.repeat)
            items[debate.item.id] = None
            key = unit.key()
            if key in done:
                outcome.already += 1
                continue
            record = unit_record_blocking(unit, imported.label, task, debate.item, debate.transcript, [],
                                          wall_s=debate.wall_s)
            records.write(encode_line(record))
            done.add(key)
            outcome.added += 1
    report = imported.report
    outcome.notes = report.lines(path.name)
    if not outcome.added and not outcome.already:
        if report.unmatched:
            raise UsageError(f"task {task.name} has no item for any of the {report.unmatched} records of "
                             f"{path.name} (first: {report.unmatched_example}); is --task right? nothing imported")
        raise UsageError(f"{path.name} holds no records; nothing imported")
    return outcome


def _new_run(versions: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    return {IMPORTED_KEY: True, "versions": versions(), "configurations": {}, "tasks": {},
            "order": {"configurations": [], "tasks": []}, "groups": {}, "task_sizes": {}, "leaderboard": {}}


def _describe_run(run: dict[str, Any], task: Task, items: dict[str, None], configs: list[str]) -> None:
    """Add the task, its imported items (in the task's order) and the configurations to ``run``."""
    order = run.setdefault("order", {"configurations": [], "tasks": []})
    for config in configs:
        if config not in order["configurations"]:
            order["configurations"].append(config)
    if task.name not in order["tasks"]:
        order["tasks"].append(task.name)
    stored = run["tasks"].setdefault(task.name, {"path": str(task.path), "sampling": {"method": "imported"},
                                                 "items": []})
    position = {item.id: n for n, item in enumerate(task.items)}
    wanted = set(stored["items"]) | set(items)
    stored["items"] = sorted(wanted, key=lambda i: (position.get(i, len(position)), i))
    run.setdefault("task_sizes", {})[task.name] = len(task.items)
    run["settings"] = RunSettings(tasks=list(order["tasks"])).public()


def _commit(staging: Path, folder: Path, existing: bool) -> None:
    """Move the staged files into place: the whole folder when it is new, else ``records.jsonl``
    then ``run.json``, each by one rename."""
    try:
        if not existing:
            if folder.exists():
                folder.rmdir()  # an empty folder (checked before): replaced by the staged one
            os.rename(staging, folder)
            return
        os.replace(staging / RECORDS_FILE, folder / RECORDS_FILE)
        os.replace(staging / RUN_FILE, folder / RUN_FILE)
    except OSError as error:
        raise StorageError(f"cannot write {folder}: {error.strerror or error}; the folder is as it was") from None
