"""An lm-eval task's items as madeval prepared them (rendered prompts, golds, options, docs), kept on
disk so that a warm run sends its first call without importing lm-eval's task package, which
imports ``datasets`` and pandas (1.5 s of CPU) before a single prompt can be built.

The file is ``lmeval-items-<key>.json`` in madeval's cache folder (:func:`.index_cache.cache_folder`).
Its key covers what the items are built from that is cheap to name: this format, lm-eval's
version (and the size and time of its prompt, sampler and filter modules), the task's name, the
``--include-path`` folders, the few-shot count and seed, and the text of madeval's code that
builds items (:data:`CODE_FILES`). The file also lists, with size and modification time, every
file the items were read from: each folder the task's YAML and its ``include`` chain live in
(their ``!function`` modules live there too) and the mirror files its rows came from. A different
key, or any listed file changed, added or removed, builds the items again through lm-eval. A file
that cannot be read or is not what this module writes is ignored with one warning and rebuilt.

Items are stored only when every split came from a local mirror and they read back equal to
what was built (JSON keeps str, int, float, bool, None, lists and str-keyed dicts), and are used
only when the hub would not be asked (offline or unreachable), as the rows would then come from
the same mirror files.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from madeval import BoundedLoader, Item, UsageError, read_yaml_file

from .cache_files import NOT_OURS, read_stored, warn_ignored, write_atomically
from .index_cache import cache_folder, lm_eval_task_folder

FORMAT = "madeval-lmeval-items/1"
#: Output types whose prepared items are kept.
OUTPUT_TYPES = ("generate_until", "multiple_choice")
_HERE = Path(__file__).resolve().parent


def code_files() -> list[Path]:
    """madeval's code that builds an lm-eval task's items: this plugin, madeval's ``Task`` and
    ``Item`` and the built-in multiple-choice template (its ``choice_format``)."""
    import madeval

    from .mirrors import builtin_task_folder

    root = Path(madeval.__file__).resolve().parent
    return [*sorted(_HERE.glob("*.py")), root / "task.py", root / "item.py", root / "datasources.py",
            builtin_task_folder() / "_multiple_choice.yaml"]


def lm_eval_code_files() -> list[Path]:
    """lm-eval's modules that render prompts and read golds (templates, the few-shot sampler, the
    filters): their sizes and times are in the key too, for an lm-eval edited in place (an
    editable install) without a new version."""
    root = lm_eval_task_folder().parent
    return [root / "utils.py", root / "api" / "task.py", root / "api" / "samplers.py",
            *sorted((root / "filters").glob("*.py"))]


def key_of(name: str, include_paths: tuple[str, ...], num_fewshot: int, seed: int) -> str:
    """The cache key of task ``name``'s items (the seed counts only with few-shot examples)."""
    code = hashlib.sha256()
    for path in code_files():
        code.update(path.name.encode() + b"\0" + (path.read_bytes() if path.is_file() else b"") + b"\0")
    described = {"format": FORMAT, "lm_eval": importlib.metadata.version("lm_eval"),
                 "lm_eval_code": stats(lm_eval_code_files()), "task": name,
                 "include_paths": list(include_paths), "num_fewshot": num_fewshot,
                 "seed": seed if num_fewshot else None, "code": code.hexdigest()}
    return hashlib.sha256(json.dumps(described, sort_keys=True).encode()).hexdigest()


def cache_file(key: str) -> Path:
    """Where the items for ``key`` are kept."""
    return cache_folder() / f"lmeval-items-{key[:24]}.json"


@dataclass
class Prepared:
    """What a run needs of an lm-eval task before its first call, and what it was built from."""

    output_type: str
    dataset_path: str
    source: str
    answer_type: str
    metric_names: list[str]
    items: list[Item]
    files: list[list[Any]]  # [path, size, mtime_ns] of every file the items were built from
    folders: list[str]  # the task's YAML folders, whose every file is in ``files``


def _row(item: Item) -> list[Any]:
    return [item.id, item.input, item.target, item.context, list(item.choices) if item.choices else None,
            item.doc]


def _item(row: Any) -> Item:
    item_id, text, target, context, choices, doc = row
    strings = isinstance(target, list) and all(isinstance(t, str) for t in target)
    if (not isinstance(item_id, str) or not isinstance(text, str) or not (isinstance(target, str) or strings)
            or not (context is None or isinstance(context, str)) or not isinstance(doc, dict)
            or not (choices is None or (isinstance(choices, list) and all(isinstance(c, str) for c in choices)))):
        raise TypeError("not an item")
    return Item(item_id, text, target, context, tuple(choices) if choices is not None else None, doc)


def stats(paths: list[Path]) -> list[list[Any]]:
    """``[path, size, mtime_ns]`` of each file (a missing one as ``[path, None, None]``)."""
    found = []
    for path in sorted(set(paths)):
        try:
            stat = path.stat()
            found.append([str(path), stat.st_size, stat.st_mtime_ns])
        except OSError:
            found.append([str(path), None, None])
    return found


def yaml_folders(yaml_path: Path) -> list[Path]:
    """The folders of ``yaml_path`` and of every file its ``include`` chain reaches."""

    class Tolerant(BoundedLoader):
        """Reads lm-eval's YAML with its tags (``!function``) left unresolved, bounded as madeval
        reads every YAML file (:func:`madeval.read_yaml_file`)."""

    Tolerant.add_multi_constructor("!", lambda loader, suffix, node: None)
    folders, todo, seen = [], [Path(yaml_path)], set()
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        folders.append(path.parent)
        try:
            data = read_yaml_file(path, Tolerant)
        except UsageError:  # unreadable: its folder is listed, its includes are not followed
            continue
        included = data.get("include") if isinstance(data, dict) else None
        for name in [included] if isinstance(included, str) else included or []:
            if isinstance(name, str):
                todo.append(Path(name) if Path(name).is_absolute() else path.parent / name)
    return list(dict.fromkeys(folders))


def folder_files(folders: list[Path]) -> list[Path]:
    """Every file directly in each folder (not in its subfolders)."""
    found = []
    for folder in folders:
        try:
            found += [path for path in folder.iterdir() if path.is_file()]
        except OSError:
            continue
    return found


def sources_of(yaml_path: Path | None, mirror_files: list[Path]) -> tuple[list[list[Any]], list[str]]:
    """What a task's items are built from: ``[path, size, mtime_ns]`` of its YAML folders' files and
    its mirror files, and the YAML folders (whose listing must not change either)."""
    folders = yaml_folders(yaml_path) if yaml_path else []
    return stats([*folder_files(folders), *mirror_files]), [str(folder) for folder in folders]


def unchanged(files: list[list[Any]], folders: list[str]) -> bool:
    """True when every listed file still has its size and modification time, and each of
    ``folders`` (the task's YAML folders) holds no other file than before (a new YAML or module)."""
    if stats([Path(path) for path, _, _ in files]) != files:
        return False
    listed = {str(Path(path).parent) for path, _, _ in files}
    for folder in folders:
        names = {Path(path).name for path, _, _ in files if str(Path(path).parent) == folder}
        try:
            if folder not in listed or {p.name for p in Path(folder).iterdir() if p.is_file()} != names:
                return False
        except OSError:
            return False
    return True


def _warn(path: Path, why: str) -> None:
    warn_ignored(path, "item cache", why, "building the items again")


def read(key: str) -> Prepared | None:
    """The items stored for ``key``, or None: no file, another key, a listed file changed, or a
    file that is not what :func:`write` writes (one warning)."""
    path = cache_file(key)
    data = read_stored(path, FORMAT, key, _warn, "a cache file")
    if data is None:
        return None
    try:
        files = [[str(p), s, m] for p, s, m in data["files"]]
        if not all(isinstance(s, int) and isinstance(m, int) for _, s, m in files):
            raise TypeError("bad file list")
        folders = [_text(folder) for folder in data["folders"]]
        prepared = Prepared(
            output_type=_checked(data["output_type"], OUTPUT_TYPES), dataset_path=_text(data["dataset_path"]),
            source=_text(data["source"]), answer_type=_text(data["answer_type"]),
            metric_names=[_text(name) for name in data["metric_names"]],
            items=[_item(row) for row in data["items"]], files=files, folders=folders)
    except NOT_OURS as error:
        _warn(path, f"not a cache file of this madeval: {type(error).__name__}")
        return None
    return prepared if unchanged(prepared.files, prepared.folders) else None


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("not text")
    return value


def _checked(value: Any, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ValueError(f"unknown value {str(value)[:40]!r}")
    return value


def write(key: str, prepared: Prepared) -> bool:
    """Store ``prepared`` for ``key`` atomically (a rename), only when it reads back equal; False
    when it was not stored (values JSON does not keep, or the folder is not writable)."""
    data = {"format": FORMAT, "key": key, "output_type": prepared.output_type,
            "dataset_path": prepared.dataset_path, "source": prepared.source,
            "answer_type": prepared.answer_type, "metric_names": prepared.metric_names,
            "files": prepared.files, "folders": prepared.folders, "items": [_row(item) for item in prepared.items]}
    try:
        text = json.dumps(data, ensure_ascii=False, allow_nan=False)
        back = [_row(_item(row)) for row in json.loads(text)["items"]]
    except (TypeError, ValueError, RecursionError):
        return False
    if any(size is None for _, size, _ in prepared.files):
        return False  # a source file vanished while the items were built
    if back != [_row(item) for item in prepared.items]:  # a tuple in a doc, an int key...
        return False
    return write_atomically(cache_file(key), text)
