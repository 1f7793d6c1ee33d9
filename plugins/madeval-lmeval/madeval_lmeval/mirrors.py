"""An lm-eval task's dataset read from madeval's local mirrors under ``MADEVAL_DATA_DIR``.

The table of mirrors is madeval's own: every built-in task YAML whose ``dataset`` names a hub
``path``/``name``/``split`` and a ``mirror`` file (:mod:`madeval.datasources`) says which file
holds that split. Two rules extend it to lm-eval's spelling of the same data: a few hub ids lm-eval
reads from another copy (:data:`SAME_DATA`), and MMLU's per-subject configs, which are the
``all`` mirror's rows of one ``subject`` (as madeval's own ``mmlu_formal_logic`` is).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from madeval.datasources import DATA_DIR_VARIABLE, DataUnavailable, keep_matching, mirror_file, missing_mirror_hint
from madeval.errors import UsageError

#: Hub ids lm-eval's YAMLs read that hold the same rows as the id madeval's mirror was made from.
SAME_DATA = {"SaylorTwift/bbh": "lukaemon/bbh"}
#: Hub ids whose configs are subsets of the ``all`` config, by the column naming the subset.
SUBSET_COLUMN = {"cais/mmlu": "subject"}


@functools.lru_cache(maxsize=1)
def known_mirrors() -> dict[tuple[str, str | None, str], dict[str, Any]]:
    """``(hub id, config, split)`` -> the ``dataset`` mapping of the madeval task that mirrors it."""
    from madeval.plugins import DEFAULT_PLUGINS, registries
    from madeval.taskfiles import read_yaml

    table: dict[tuple[str, str | None, str], dict[str, Any]] = {}
    for plugin, folder in registries().task_sources:
        if plugin not in DEFAULT_PLUGINS:
            continue
        for path in sorted(Path(str(folder)).rglob("*.yaml")):
            dataset = read_yaml(path).get("dataset")
            if isinstance(dataset, dict) and dataset.get("path") and dataset.get("mirror"):
                key = (str(dataset["path"]), dataset.get("name"), str(dataset.get("split", "test")))
                table.setdefault(key, {k: dataset[k] for k in ("path", "name", "split", "mirror", "filter") if k in dataset})
    return table


def mirror_for(path: str, name: str | None, split: str) -> dict[str, Any] | None:
    """madeval's ``dataset`` mapping (``mirror`` and ``filter``) for the hub split, or ``None``."""
    path = SAME_DATA.get(path, path)
    table = known_mirrors()
    for config in (name, None, "default") if name in (None, "default") else (name,):
        found = table.get((path, config, split))
        if found is not None:
            return found
    column = SUBSET_COLUMN.get(path)
    whole = table.get((path, "all", split))
    if column and whole is not None and name:
        return {**whole, "name": name, "filter": {column: name}}
    return None


def rows(task_name: str, path: str, name: str | None, split: str) -> list[dict[str, Any]]:
    """The rows of the hub split from its mirror; :class:`DataUnavailable` (one line naming
    ``MADEVAL_DATA_DIR``) when there is no mirror for it or the file is missing."""
    dataset = mirror_for(path, name, split)
    file = mirror_file(dataset) if dataset else None
    if file is None:
        hint = missing_mirror_hint(dataset or {})
        if dataset is None:
            hint = f"madeval has no mirror of {path}/{name or 'default'}/{split} under {DATA_DIR_VARIABLE}"
        raise DataUnavailable(f"task {task_name}: the Hugging Face hub is not used and {hint}", hint)
    return keep_matching(_read(str(file)), dataset.get("filter"), task_name)


@functools.lru_cache(maxsize=8)
def _read_cached(file: str) -> tuple[dict[str, Any], ...]:
    from madeval.datasources import _load_json

    return tuple(_load_json(Path(file)))


def _read(file: str) -> list[dict[str, Any]]:
    return list(_read_cached(file))


def dataset_loader(task_name: str, config: dict[str, Any]):
    """A ``custom_dataset`` for lm-eval: a ``DatasetDict`` of the task's splits from the mirrors.

    The split the task is scored on (``test_split``, else ``validation_split``) must have a mirror;
    other splits the task names (training, few-shot) are empty when they have none, so a zero-shot
    run works and a few-shot one fails with one line (:func:`fewshot_source_missing`).
    """
    path = config.get("dataset_path")
    if not path:
        raise UsageError(f"task {task_name}: lm-eval task without dataset_path is not supported")
    name = config.get("dataset_name")
    eval_split = config.get("test_split") or config.get("validation_split")
    if not eval_split:
        raise UsageError(f"task {task_name}: lm-eval task has neither test_split nor validation_split")
    splits = [eval_split] + [
        config.get(key) for key in ("test_split", "validation_split", "training_split")
    ] + [(config.get("fewshot_config") or {}).get("split") or config.get("fewshot_split")]
    loaded = {eval_split: rows(task_name, path, name, eval_split)}
    for split in dict.fromkeys(s for s in splits if s and s not in loaded):
        dataset = mirror_for(path, name, split)
        loaded[split] = rows(task_name, path, name, split) if dataset and mirror_file(dataset) else []

    def load(**_ignored: Any):
        import datasets

        columns = list(loaded[eval_split][0]) if loaded[eval_split] else []
        return datasets.DatasetDict({
            split: datasets.Dataset.from_list(found) if found else
            datasets.Dataset.from_dict({column: [] for column in columns})
            for split, found in loaded.items()
        })

    return load
