"""An lm-eval task's dataset read as madeval reads its own: the hub when reachable, else the local
mirrors under ``MADEVAL_DATA_DIR`` (``madeval.load_docs_with_source``).

The table of mirrors is madeval's own: every built-in task YAML whose ``dataset`` names a hub
``path``/``name``/``split`` and a ``mirror`` file says which file holds that split. Two rules extend
it to lm-eval's spelling of the same data: a few hub ids lm-eval reads from another copy
(:data:`SAME_DATA`), and MMLU's per-subject configs, which are the ``all`` mirror's rows of one
``subject`` (as madeval's own ``mmlu_formal_logic`` is).
"""

from __future__ import annotations

import functools
import os
import threading
from pathlib import Path
from typing import Any

from madeval import UsageError, hub_reachable, load_docs_with_source, read_yaml, registries

#: The madeval plugin whose task folder holds the built-in tasks (and so the mirror table).
BUILTIN_TASKS = "madeval.builtins.tasks"
#: Hub ids lm-eval's YAMLs read that hold the same rows as the id madeval's mirror was made from.
SAME_DATA = {"SaylorTwift/bbh": "lukaemon/bbh"}
#: Hub ids whose configs are subsets of the ``all`` config, by the column naming the subset.
SUBSET_COLUMN = {"cais/mmlu": "subject"}


def builtin_task_folder() -> Path:
    """The folder of madeval's built-in task YAMLs."""
    return next(Path(str(folder)) for plugin, folder in registries().task_sources if plugin == BUILTIN_TASKS)


@functools.lru_cache(maxsize=1)
def known_mirrors() -> dict[tuple[str, str | None, str], dict[str, Any]]:
    """``(hub id, config, split)`` -> the ``dataset`` mapping of the built-in task that mirrors it."""
    table: dict[tuple[str, str | None, str], dict[str, Any]] = {}
    for path in sorted(builtin_task_folder().rglob("*.yaml")):
        dataset = read_yaml(path).get("dataset")  # madeval's own reading: tags and include chains
        if isinstance(dataset, dict) and dataset.get("path") and dataset.get("mirror"):
            key = (str(dataset["path"]), dataset.get("name"), str(dataset.get("split", "test")))
            table.setdefault(key,
                             {k: dataset[k] for k in ("path", "name", "split", "mirror", "filter") if k in dataset})
    return table


def dataset_of(path: str, name: str | None, split: str) -> dict[str, Any]:
    """madeval's ``dataset`` mapping for the hub split: with its ``mirror`` (and ``filter``) when
    madeval mirrors it, else the hub split alone (no mirror: the error names MADEVAL_DATA_DIR)."""
    same = SAME_DATA.get(path, path)
    table = known_mirrors()
    for config in (name, None, "default") if name in (None, "default") else (name,):
        found = table.get((same, config, split))
        if found is not None:
            return {**found, "path": path, "name": name}
    column = SUBSET_COLUMN.get(same)
    whole = table.get((same, "all", split))
    if column and whole is not None and name:
        return {**whole, "path": path, "name": name, "filter": {column: name}}
    return {"path": path, "name": name, "split": split}


def rows(task_name: str, path: str, name: str | None, split: str) -> tuple[list[dict[str, Any]], Path | None]:
    """The rows of the hub split, from the hub or madeval's mirror (``load_docs_with_source``), and
    the mirror file they were read from (None: read from the hub).

    Rows read from a mirror are kept for the process (:data:`_READ`, the last few splits) while the
    hub is not asked and the file keeps its size and modification time: lm-eval's tasks of one
    group often read the same split and keep their own rows (mmlu_pro's 14 tasks each keep one
    category of the 12,032 rows), and reading the mirror again took a second or more per task."""
    dataset = dataset_of(path, name, split)
    key = (path, name, split, os.environ.get(DATA_DIR_VARIABLE))
    with _KEEPING:
        kept = _READ.get(key)
    if kept is not None and not hub_reachable() and _stat(kept[1]) == kept[2]:
        return list(kept[0]), kept[1]
    found, source = load_docs_with_source(task_name, dataset, Path(path))
    file = Path(source.removeprefix(MIRROR)) if source.startswith(MIRROR) else None
    stat = _stat(file) if file is not None else None
    with _KEEPING:  # tasks may be built in threads (task.Later)
        _READ.pop(key, None)
        if stat is not None:
            _READ[key] = (found, file, stat)
            while len(_READ) > KEPT_SPLITS:
                _READ.pop(next(iter(_READ)))
    return list(found), file


#: How many splits read from mirrors :func:`rows` keeps (the oldest read is dropped first).
KEPT_SPLITS = 4
_READ: dict[tuple[str, str | None, str, str | None], tuple[list[dict[str, Any]], Path, tuple[int, int]]] = {}
_KEEPING = threading.Lock()
#: The variable naming the folder of madeval's mirrors (a split's key includes it).
DATA_DIR_VARIABLE = "MADEVAL_DATA_DIR"


def _stat(file: Path) -> tuple[int, int] | None:
    """``(size, mtime_ns)`` of ``file``, None when it cannot be read."""
    try:
        found = file.stat()
    except OSError:
        return None
    return found.st_size, found.st_mtime_ns


#: How ``load_docs_with_source`` names rows read from a mirror file: ``"mirror <path>"``.
MIRROR = "mirror "
#: ``datasets`` builders that read local files (``dataset_path: json`` with ``data_files``).
FILE_BUILDERS = ("json", "csv", "parquet", "text", "arrow")


def is_local(path: str, dataset_kwargs: dict[str, Any] | None) -> bool:
    """True when the dataset is the task's own files, not a hub dataset."""
    return path in FILE_BUILDERS or "data_files" in (dataset_kwargs or {}) or Path(path).exists()


def dataset_loader(task_name: str, config: dict[str, Any]):
    """A ``custom_dataset`` for lm-eval: a ``DatasetDict`` of the task's splits (``None`` for a
    task that reads its own local files).

    The split the task is scored on (``test_split``, else ``validation_split``) is read at once and
    must be available; the task's other splits (training, few-shot) are read when madeval mirrors
    them and are otherwise empty, so a zero-shot run works and a few-shot one fails in one line.
    """
    path = config.get("dataset_path")
    if not path:
        raise UsageError(f"task {task_name}: lm-eval tasks without dataset_path are not supported")
    if is_local(path, config.get("dataset_kwargs")):
        return None  # the task's own files: lm-eval reads them as it always does
    name = config.get("dataset_name")
    eval_split = config.get("test_split") or config.get("validation_split")
    if not eval_split:
        raise UsageError(f"task {task_name}: the lm-eval task has neither test_split nor validation_split")
    others = [config.get(key) for key in ("test_split", "validation_split", "training_split", "fewshot_split")]
    others.append((config.get("fewshot_config") or {}).get("split"))
    loaded: dict[str, list[dict[str, Any]]] = {}
    read_from: list[Path | None] = []
    for split in dict.fromkeys(s for s in [eval_split, *others] if s):
        if split == eval_split or "mirror" in dataset_of(path, name, split):
            loaded[split], file = rows(task_name, path, name, split)
            read_from.append(file)
        else:
            loaded[split] = []
    return MirroredDataset(loaded, eval_split, read_from)


class MirroredDataset:
    """lm-eval's ``custom_dataset``: the splits read from madeval's mirrors (or the hub) as a
    ``DatasetDict``; ``files`` are the mirror files read, ``None`` when a split came from the hub."""

    def __init__(self, loaded: dict[str, list[dict[str, Any]]], eval_split: str, files: list[Path | None]):
        self.loaded, self.eval_split = loaded, eval_split
        self.files = None if any(file is None for file in files) else [file for file in files if file]

    def __call__(self, **_ignored: Any):
        import datasets

        loaded = self.loaded
        columns = list(loaded[self.eval_split][0]) if loaded[self.eval_split] else []
        return datasets.DatasetDict({
            split: datasets.Dataset.from_list(found) if found
            else datasets.Dataset.from_dict({column: [] for column in columns})
            for split, found in loaded.items()
        })
