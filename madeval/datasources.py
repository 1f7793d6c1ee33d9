"""Where task rows come from: a generator function, a local mirror, or the Hugging Face hub.

``dataset`` keys in a task YAML:

* ``generator: !function module.fn`` with ``size`` and ``seed``: rows made by ``fn(size=, seed=)``.
* ``path`` / ``name`` / ``split``: a hub dataset. When ``MADEVAL_DATA_DIR`` is set and holds the
  task's ``mirror`` file (a JSONL copy with the hub's columns), the mirror is read with
  ``datasets.load_dataset("json", ...)`` and the hub is not contacted. Otherwise the hub is tried;
  if neither works the error names ``MADEVAL_DATA_DIR``.
"""

from __future__ import annotations

import os
import socket
import urllib.parse
from pathlib import Path
from typing import Any

from .errors import UsageError
from .taskfiles import FunctionRef

DATA_DIR_VARIABLE = "MADEVAL_DATA_DIR"


def load_docs(task: str, dataset: dict[str, Any], task_path: Path) -> list[dict[str, Any]]:
    """The rows of ``task`` as plain dictionaries, in dataset order."""
    generator = dataset.get("generator")
    if generator is not None:
        if not isinstance(generator, FunctionRef):
            raise UsageError(f"task {task}: dataset.generator must be a !function ({task_path})")
        return list(generator.resolve()(size=int(dataset.get("size", 100)), seed=int(dataset.get("seed", 0))))
    if "path" not in dataset:
        raise UsageError(f"task {task}: dataset needs 'generator' or 'path' ({task_path})")
    mirror = mirror_file(dataset)
    if mirror is not None:
        return _load_json(mirror)
    return _load_hub(task, dataset)


def mirror_file(dataset: dict[str, Any]) -> Path | None:
    """The mirror file of ``dataset`` under ``MADEVAL_DATA_DIR`` if it exists there."""
    root = os.environ.get(DATA_DIR_VARIABLE)
    if not root or not dataset.get("mirror"):
        return None
    path = Path(root) / str(dataset["mirror"])
    return path if path.is_file() else None


def _load_json(path: Path) -> list[dict[str, Any]]:
    import datasets

    datasets.disable_progress_bars()
    rows = datasets.load_dataset("json", data_files=str(path), split="train")
    return rows.to_list()


def hub_reachable(timeout_s: float = 3.0) -> bool:
    """False when ``HF_HUB_OFFLINE`` is set or the hub's host does not answer within the timeout.

    Checked before calling ``datasets``, whose own retries take tens of seconds to give up.
    """
    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes"):
        return False
    host = urllib.parse.urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    try:
        socket.create_connection((host.hostname, host.port or 443), timeout=timeout_s).close()
    except OSError:
        return False
    return True


def _load_hub(task: str, dataset: dict[str, Any]) -> list[dict[str, Any]]:
    hint = f" (mirror file {dataset['mirror']})" if dataset.get("mirror") else ""
    failure = (
        f"task {task}: cannot load {dataset['path']} from the Hugging Face hub{{why}} and no local "
        f"mirror found; set {DATA_DIR_VARIABLE} to the folder of local mirrors{hint}"
    )
    if not hub_reachable():
        raise UsageError(failure.format(why=" (unreachable)"))
    import datasets

    datasets.disable_progress_bars()
    try:
        rows = datasets.load_dataset(dataset["path"], dataset.get("name"), split=dataset.get("split", "test"))
    except Exception as error:  # the hub raises many kinds of errors
        raise UsageError(failure.format(why=f" ({type(error).__name__})")) from None
    return rows.to_list()
