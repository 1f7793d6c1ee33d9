"""lm-eval's task index (name -> kind, YAML file, tags) kept on disk, so a process does not walk
lm-eval's ~14,700 task files again (10 s or more) before its first call.

lm-eval builds the index of each folder (its own task folder, then each ``--include-path`` folder)
on its own and merges them in that order, a later folder's name replacing an earlier one's
(``TaskIndex.build``). So each folder's index is kept in a file of its own,
``lmeval-index-<key>.json`` in madeval's cache folder (``MADEVAL_CACHE_DIR``, else
``~/.cache/madeval``), and the files are merged as lm-eval merges: a changed include folder
walks that folder again, not lm-eval's 14,700 files. A folder's key covers what its index is
built from: the format of this file and lm-eval's version, and lm-eval's task folder, or an
include folder with the path, size and modification time of every YAML file in it; a change to
any of them gives another key, and that folder's index is built again by lm-eval's own
``TaskIndex.build``. Only names, kinds, files and tags are stored: lm-eval's task factory reads a
task's YAML file itself when it builds the task, and :func:`madeval_lmeval.lmeval_api.config_of`
reads a config madeval needs (a group's members, a task's dataset) on first use. A missing file,
or one kept for another key, is built again silently; a corrupt or foreign file is rebuilt with
one warning line (as the item cache does); a cache that cannot be written is skipped silently: it
only saves time.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import logging
import os
from pathlib import Path
from typing import Any

from .cache_files import NOT_OURS, read_stored, warn_ignored, write_atomically

FORMAT = "madeval-lmeval-index/2"


def cache_folder() -> Path:
    """madeval's cache folder: ``$MADEVAL_CACHE_DIR``, else ``~/.cache/madeval``."""
    return Path(os.environ.get("MADEVAL_CACHE_DIR") or Path.home() / ".cache" / "madeval")


def lm_eval_task_folder() -> Path:
    """lm-eval's own task folder, found without importing lm-eval (which takes seconds)."""
    spec = importlib.util.find_spec("lm_eval")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError("lm_eval is not installed")
    return Path(list(spec.submodule_search_locations)[0]) / "tasks"


def index_paths(include_paths: tuple[str, ...]) -> list[Path]:
    """The folders lm-eval's ``TaskManager`` indexes, in its order: its own, then ``include_paths``."""
    return [lm_eval_task_folder(), *(Path(p) for p in include_paths)]


def lm_eval_key() -> str:
    """The cache key of lm-eval's own folder's index: this format, lm-eval's version and task folder."""
    return _key({"format": FORMAT, "lm_eval": importlib.metadata.version("lm_eval"),
                 "tasks": str(lm_eval_task_folder())})


def include_key(folder: str) -> str:
    """The cache key of an include folder's index: this format, lm-eval's version, and every YAML
    file (path, size, modification time) under the folder."""
    files = sorted(Path(folder).glob("**/*.yaml")) if Path(folder).is_dir() else []
    stats = []
    for path in files:
        try:
            found = path.stat()
        except OSError:
            continue
        stats.append([str(path), found.st_size, found.st_mtime_ns])
    return _key({"format": FORMAT, "lm_eval": importlib.metadata.version("lm_eval"),
                 "include_path": [str(folder), stats]})


def _key(described: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()


def cache_file(key: str) -> Path:
    """Where the index for ``key`` is kept."""
    return cache_folder() / f"lmeval-index-{key[:24]}.json"


def _folders(include_paths: tuple[str, ...]) -> list[tuple[Path, str]]:
    """Each folder lm-eval indexes, in its order, with its cache key."""
    return [(lm_eval_task_folder(), lm_eval_key()), *((Path(p), include_key(p)) for p in include_paths)]


def load_index(include_paths: tuple[str, ...]) -> dict[str, Any]:
    """lm-eval's index of its tasks and ``include_paths`` (name -> ``Entry``): each folder's read
    from the cache when its key matches, else built by lm-eval and written there; merged as
    ``TaskIndex.build`` merges them (a later folder's name wins, with lm-eval's warning when the
    index is built)."""
    index: dict[str, Any] = {}
    built = False
    for folder, key in _folders(include_paths):
        part = read(cache_file(key), key)
        if part is None:
            part, built = _build(folder, key), True
        for name, entry in part.items():
            if built and name in index:  # lm-eval's own warning, as TaskIndex.build gives it
                _lm_eval_log().warning("Task '%s' from %s overrides existing task from %s",
                                       name, entry.yaml_path, index[name].yaml_path)
            index[name] = entry
    return index


def load_raw(include_paths: tuple[str, ...]) -> dict[str, tuple[str, str | None, list[str]]]:
    """The index as plain values, name -> ``(kind, yaml file or None, tags)`` (kind as lm-eval's
    ``Kind`` names it: ``TASK``, ``PY_TASK``, ``GROUP``, ``TAG``): read from the cache without
    importing lm-eval (whose task package imports ``datasets`` and pandas, 1.5 s), else each
    missing folder's built by lm-eval and stored, merged as :func:`load_index` merges."""
    index: dict[str, tuple[str, str | None, list[str]]] = {}
    for folder, key in _folders(include_paths):
        part = read_raw(cache_file(key), key)
        if part is None:
            part = {name: _plain(entry) for name, entry in _build(folder, key).items()}
        index.update(part)
    return index


def _build(folder: Path, key: str) -> dict[str, Any]:
    """lm-eval's index of ``folder`` alone, stored for ``key``."""
    from lm_eval.tasks._index import TaskIndex

    part = TaskIndex.build([folder])
    write(cache_file(key), key, part)
    return part


def _lm_eval_log() -> logging.Logger:
    return logging.getLogger("lm_eval.tasks._index")


def read(path: Path, key: str) -> dict[str, Any] | None:
    """The index stored in ``path`` as ``Entry`` objects (configs not read), or None when the file is
    missing, unreadable or for another key."""
    from lm_eval.tasks._index import Entry, Kind

    stored = read_raw(path, key)
    if stored is None:
        return None
    return {name: Entry(name=name, kind=Kind[kind], yaml_path=Path(file) if file else None, tags=set(tags))
            for name, (kind, file, tags) in stored.items()}


#: lm-eval's ``Kind`` names, the only kinds a stored index may hold.
KINDS = ("TASK", "PY_TASK", "GROUP", "TAG")


def read_raw(path: Path, key: str) -> dict[str, tuple[str, str | None, list[str]]] | None:
    """The index stored in ``path`` as plain values (see :func:`load_raw`), or None when the file is
    missing or for another key (silently), or unreadable or not of this format (every entry is
    checked; one warning line per file and process)."""
    data = read_stored(path, FORMAT, key, _warn, "an index cache file")
    if data is None:
        return None
    try:
        entries = data["entries"]
        if not isinstance(entries, dict):
            raise TypeError("entries not a mapping")
        found = {}
        for name, (kind, file, tags) in entries.items():
            if (kind not in KINDS or not (file is None or isinstance(file, str)) or not isinstance(tags, list)
                    or not all(isinstance(tag, str) for tag in tags)):
                raise ValueError("bad entry")
            found[name] = (kind, file, tags)
        return found
    except NOT_OURS as error:
        _warn(path, f"not an index cache file of this madeval: {type(error).__name__}")
        return None


def _warn(path: Path, why: str) -> None:
    warn_ignored(path, "index cache", why, "building the index again")


def _plain(entry: Any) -> tuple[str, str | None, list[str]]:
    return entry.kind.name, str(entry.yaml_path) if entry.yaml_path else None, sorted(entry.tags)


def write(path: Path, key: str, index: dict[str, Any]) -> None:
    """Store ``index`` for ``key`` in ``path``, atomically (a rename); skipped when it cannot be."""
    entries = {name: list(_plain(entry)) for name, entry in index.items()}
    text = json.dumps({"format": FORMAT, "key": key, "entries": entries})
    write_atomically(path, text)
