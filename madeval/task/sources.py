"""Where task rows come from: a generator function, the Hugging Face hub, or a local mirror.

``dataset`` keys in a task YAML:

* ``generator: !function module.fn`` with ``size`` and ``seed``: rows made by ``fn(size=, seed=)``.
* ``path`` / ``name`` / ``split``: a hub dataset (id, config, split). It is read from the hub when
  the hub is reachable; otherwise from the task's ``mirror``, a JSONL copy with the hub's columns
  under the folder ``MADEVAL_DATA_DIR`` names, read with the standard library into the rows
  ``datasets.load_dataset("json", ...)`` gives (:mod:`madeval.task.mirrors`; ``datasets`` itself for
  a file that reader refuses).
  If neither works, :class:`DataUnavailable` says what is missing: the variable (when it is not
  set) or the file (when the folder it names has no such file). ``HF_HUB_OFFLINE=1`` skips the hub.
* ``gated: true``: the hub dataset needs its terms accepted; when it cannot be read, the error
  says how to get access (accept the terms on its hub page, set ``HF_TOKEN``) or where to put a
  local copy. A hub refusal that names the dataset gated gets the same message.
* ``filter: {column: value}`` keeps the rows whose column equals the value (or is in a list of
  values), for hub and mirror alike: ``mmlu_formal_logic`` is the ``formal_logic`` subject of the
  MMLU mirror.
"""

from __future__ import annotations

import functools
import json
import os
import socket
import urllib.parse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from madeval.errors import UsageError
from madeval.task.files import FunctionRef, task_code
from madeval.task.mirrors import MirrorBroken, MirrorNotPlain, read_mirror

DATA_DIR_VARIABLE = "MADEVAL_DATA_DIR"


class DataUnavailable(UsageError):
    """Neither the hub nor a local mirror has the task's rows; ``hint`` says what to do, briefly."""

    def __init__(self, message: str, hint: str):
        super().__init__(message)
        self.hint = hint


def load_docs_with_source(task: str, dataset: dict[str, Any], task_path: Path) -> tuple[list[dict[str, Any]], str]:
    """The rows of ``task`` and where they came from (``generator``, ``hub ...`` or ``mirror ...``)."""
    generator = dataset.get("generator")
    if generator is not None:
        if not isinstance(generator, FunctionRef):
            raise UsageError(f"task {task}: dataset.generator must be a !function ({task_path})")
        size, seed = int(dataset.get("size", 100)), int(dataset.get("seed", 0))
        with task_code(f"task {task}: dataset.generator !function {generator.ref}"):
            rows = list(generator.resolve()(size=size, seed=seed))
        return rows, "generator"
    if "path" not in dataset:
        raise UsageError(f"task {task}: dataset needs 'generator' or 'path' ({task_path})")
    rows, source = _hub_or_mirror(task, dataset)
    return keep_matching(rows, dataset.get("filter"), task), source


def keep_matching(rows: list[dict[str, Any]], conditions: dict[str, Any] | None,
                  task: str = "") -> list[dict[str, Any]]:
    """The rows whose columns equal the given values (a list of values means any of them)."""
    if not conditions:
        return rows
    if not isinstance(conditions, dict):
        raise UsageError(f"task {task}: dataset.filter must map column names to values")
    wanted = {
        column: {str(v) for v in (value if isinstance(value, (list, tuple)) else [value])}
        for column, value in conditions.items()
    }
    return [row for row in rows if all(str(row.get(column)) in values for column, values in wanted.items())]


def mirror_file(dataset: dict[str, Any]) -> Path | None:
    """The mirror file of ``dataset`` under ``MADEVAL_DATA_DIR`` if it exists there."""
    root = os.environ.get(DATA_DIR_VARIABLE)
    if not root or not dataset.get("mirror"):
        return None
    path = Path(root) / str(dataset["mirror"])
    return path if path.is_file() else None


def mirror_row_count(dataset: dict[str, Any]) -> int | None:
    """The number of rows the mirror holds after ``filter``, read quickly (``None``: no mirror)."""
    path = mirror_file(dataset)
    if path is None:
        return None
    conditions = dataset.get("filter")
    with open(path, encoding="utf-8") as handle:
        lines = [line for line in handle if line.strip()]
    if not conditions:
        return len(lines)
    return len(keep_matching([json.loads(line) for line in lines], conditions))


def _hub_or_mirror(task: str, dataset: dict[str, Any]) -> tuple[list[dict[str, Any]], str]:
    mirror = mirror_file(dataset)
    why = " (HF_HUB_OFFLINE is set)" if hub_offline() else " (unreachable)"
    gated = bool(dataset.get("gated"))
    if hub_reachable():
        try:
            return _load_hub(dataset), _hub_name(dataset)
        except Exception as error:  # the hub raises many kinds of errors; fall back to the mirror
            why = f" ({type(error).__name__})"
            gated = gated or refused_as_gated(error)
    if mirror is not None:
        return _load_json(mirror), f"mirror {mirror}"
    hint = gated_hint(dataset) if gated else missing_mirror_hint(dataset)
    raise DataUnavailable(
        f"task {task}: cannot load {dataset['path']} from the Hugging Face hub{why} and no local mirror: {hint}",
        hint,
    )


@dataclass(frozen=True)
class DataPlace:
    """Where a task's rows would come from here, found without reading them: ``where`` is
    ``generated``, ``mirror`` (a local mirror under ``MADEVAL_DATA_DIR``), ``hub``, ``hub, gated`` (a
    token is known, whether it has access is not) or ``missing``; a missing task's ``hint`` says why
    and what to do, as the error of a run that names it would."""

    where: str
    hint: str = ""

    @property
    def available(self) -> bool:
        """False when the task's rows cannot be loaded here."""
        return self.where != "missing"


def data_place(dataset: dict[str, Any]) -> DataPlace:
    """Where the rows of ``dataset`` (a task's ``dataset`` mapping) would be read from here, as
    :func:`load_docs_with_source` would try them (generator; the hub when reachable; the mirror),
    without reading any. Asks whether the hub answers (:func:`hub_reachable`) only for a dataset
    that has no local mirror."""
    if "generator" in dataset:
        return DataPlace("generated")
    if mirror_file(dataset) is not None:
        return DataPlace("mirror")
    gated = bool(dataset.get("gated"))
    if hub_reachable():
        if not gated:
            return DataPlace("hub")
        if hub_token_known():
            return DataPlace("hub, gated")
        return DataPlace("missing", f"no token for the hub: {gated_hint(dataset)}")
    why = "HF_HUB_OFFLINE is set" if hub_offline() else "the Hugging Face hub is unreachable"
    hint = gated_hint(dataset) if gated else missing_mirror_hint(dataset)
    return DataPlace("missing", f"{why} and there is no local mirror: {hint}")


def hub_token_known() -> bool:
    """True when a Hugging Face token is set (``HF_TOKEN``) or saved where the hub's client looks
    (``HF_TOKEN_PATH``, else ``token`` in ``HF_HOME``, by default ``~/.cache/huggingface``)."""
    if os.environ.get("HF_TOKEN"):
        return True
    home = Path(os.environ.get("HF_HOME") or Path.home() / ".cache" / "huggingface")
    return Path(os.environ.get("HF_TOKEN_PATH") or home / "token").is_file()


def refused_as_gated(error: BaseException) -> bool:
    """True when the hub's error says the dataset is gated (huggingface_hub's ``GatedRepoError``,
    or datasets' "is a gated dataset" message); only the first 1,000 characters are read."""
    return type(error).__name__ == "GatedRepoError" or "gated" in str(error)[:1000].lower()


def gated_hint(dataset: dict[str, Any]) -> str:
    """How to get a gated dataset: accept its terms on the hub and set ``HF_TOKEN``, or put a local
    copy where madeval looks for it (the mirror path under ``MADEVAL_DATA_DIR``)."""
    page = f"{os.environ.get('HF_ENDPOINT', 'https://huggingface.co').rstrip('/')}/datasets/{dataset['path']}"
    root, wanted = os.environ.get(DATA_DIR_VARIABLE), dataset.get("mirror")
    if not wanted:
        local = "no local copy is named (dataset.mirror)"
    elif root:
        local = f"or put a local copy (JSON lines, the hub's columns) at {Path(root) / str(wanted)}"
    else:
        local = (f"or put a local copy (JSON lines, the hub's columns) at {wanted} under a folder named by "
                 f"{DATA_DIR_VARIABLE}")
    return (f"{dataset['path']} is a gated dataset: accept its terms at {page} while logged in, then set "
            f"HF_TOKEN to an access token of that account; {local}")


def missing_mirror_hint(dataset: dict[str, Any]) -> str:
    """What to do when ``dataset`` has no mirror file: set the variable, or add the file it lacks."""
    root = os.environ.get(DATA_DIR_VARIABLE)
    wanted = dataset.get("mirror")
    if not root:
        where = f" (mirror file {wanted})" if wanted else ""
        return f"set {DATA_DIR_VARIABLE} to the folder of local mirrors{where}"
    if not wanted:
        return f"{DATA_DIR_VARIABLE} is set ({root}) but the task names no mirror file (dataset.mirror)"
    return f"{DATA_DIR_VARIABLE} is set ({root}) but has no file {wanted}"


def _hub_name(dataset: dict[str, Any]) -> str:
    return f"hub {dataset['path']}/{dataset.get('name') or 'default'}/{dataset.get('split', 'test')}"


def _load_json(path: Path) -> list[dict[str, Any]]:
    """The rows of the local JSON-lines mirror ``path``, as ``datasets`` gives them.

    Plain JSON lines (every mirror madeval ships for) are read with the standard library
    (:mod:`madeval.task.mirrors`: the same rows, without the second of ``datasets`` imports); what that
    reader cannot vouch for (a JSON array, mixed kinds in a column, ...) goes to ``datasets``."""
    try:
        return read_mirror(path)
    except MirrorNotPlain:
        return _load_json_with_datasets(path)


def _load_json_with_datasets(path: Path) -> list[dict[str, Any]]:
    import datasets  # pyarrow and pandas behind it take seconds: only when a dataset is read

    datasets.disable_progress_bars()
    verbosity = datasets.logging.get_verbosity()
    datasets.logging.set_verbosity(datasets.logging.CRITICAL)  # its own log line would repeat the error
    try:
        rows = datasets.load_dataset("json", data_files=str(path), split="train")
    except datasets.exceptions.DatasetGenerationError as error:
        # a local file the user can mend (a key given twice, mixed kinds in a column): one line
        # with pyarrow's reason, not datasets' traceback
        reason = " ".join(str(error.__cause__ or error).split())[:200]
        raise MirrorBroken(f"mirror {path}: datasets cannot read it ({reason})") from None
    finally:
        datasets.logging.set_verbosity(verbosity)
    return rows.to_list()


def hub_reachable(timeout_s: float = 3.0) -> bool:
    """False when ``HF_HUB_OFFLINE`` is set or the hub's host does not answer within the timeout.

    Checked before calling ``datasets``, whose own retries take tens of seconds to give up; the
    answer is kept for the life of the process.
    """
    if hub_offline():
        return False
    host = urllib.parse.urlparse(os.environ.get("HF_ENDPOINT", "https://huggingface.co"))
    return _answers(host.hostname or "", host.port or 443, timeout_s)


def hub_offline() -> bool:
    """True when ``HF_HUB_OFFLINE`` asks not to use the hub."""
    return os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes")


@functools.lru_cache(maxsize=8)
def _answers(host: str, port: int, timeout_s: float) -> bool:
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError:
        return False
    return True


def _load_hub(dataset: dict[str, Any]) -> list[dict[str, Any]]:
    import datasets  # as above

    datasets.disable_progress_bars()
    rows = datasets.load_dataset(dataset["path"], dataset.get("name"), split=dataset.get("split", "test"))
    return rows.to_list()
