"""Reading task YAML files: ``include``, ``!function`` and the task index.

Task files follow lm-evaluation-harness conventions. A file with a ``task`` key defines a task; a
file with a ``group`` key defines a group of tasks (``task: [names]``). ``include: other.yaml``
(or a list) merges a shared template underneath the file's own keys, resolved relative to the
including file. ``!function module.attr`` names a Python function in a ``module.py`` next to the
YAML file (or an importable module). That code runs with the user's rights, as lm-eval's does; an
exception it raises becomes a one-line :class:`TaskCodeError` naming the function and where it
raised (:func:`task_code`).

The index (:func:`task_index`) maps names to files. Sources are indexed in order (built-ins
first, then plugins, then ``--include-path`` folders); a later source overrides an earlier one with
the same name, and the index lists every such replacement (:attr:`TaskIndex.replaced`); each is
warned about once per process.

Keys are checked: a task, its ``dataset`` or a group with a key madeval does not know (a typo such
as ``metrc_list``) fails with the closest known key (:func:`check_keys`).
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import importlib
import importlib.util
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from madeval.core.plugins import DEFAULT_PLUGINS, Registries
from madeval.errors import MadevalError, UsageError
from madeval.util.yaml_loader import BoundedLoader, parse_yaml_bytes, read_yaml_bytes

#: Every key a task file may hold (after ``include`` is merged), its dataset, and a group file.
TASK_KEYS = (
    "task", "tag", "description", "dataset", "process_docs", "doc_to_id", "doc_to_context", "doc_to_text",
    "doc_to_choice", "doc_to_target", "answer_type", "choice_format", "instruction", "answer_extraction",
    "metric_list", "metadata",
)
DATASET_KEYS = ("path", "name", "split", "mirror", "filter", "generator", "size", "seed", "gated")
GROUP_KEYS = ("group", "task", "description", "aggregate_metric_list", "metadata")


def closest(name: str, known: Any) -> str:
    """``"; did you mean X?"`` for the known name closest to ``name``, or ``""``."""
    found = difflib.get_close_matches(str(name), [str(k) for k in known], n=1, cutoff=0.6)
    return f"; did you mean {found[0]}?" if found else ""


def check_keys(data: dict[str, Any], known: tuple[str, ...], what: str, path: Path) -> None:
    """Raise :class:`UsageError` naming the first unknown key of ``data`` and the closest known one."""
    for key in data:
        if key not in known:
            raise UsageError(f"{what}: unknown key '{key}'{closest(key, known)} ({path})")


class TaskCodeError(UsageError):
    """A task's own code (a ``!function``, or a module it imports) raised: one line, exit status 2."""


def describe_error(error: BaseException) -> str:
    """``Type: message (file:line)`` on one line, the line being where the error was raised."""
    frames = traceback.extract_tb(error.__traceback__)
    where = f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
    message = " ".join(str(error).split())
    return f"{type(error).__name__}: {message}{where}" if message else f"{type(error).__name__}{where}"


@contextlib.contextmanager
def task_code(label: str):
    """Run a task's own code: whatever it raises (``SystemExit`` too) becomes a :class:`TaskCodeError`
    ``"<label> raised Type: message (file:line)"``; madeval's own errors pass through unchanged."""
    try:
        yield
    except MadevalError:
        raise
    except (Exception, SystemExit) as error:  # the code is the task author's: anything may come out of it
        raise TaskCodeError(f"{label} raised {describe_error(error)}") from error


@dataclass(frozen=True)
class FunctionRef:
    """A ``!function module.attr`` reference, resolved lazily relative to its YAML file."""

    ref: str
    base: Path

    def resolve(self) -> Any:
        """Import the module and return the attribute (call it inside :func:`task_code`: importing
        runs the module's code). A module that raises on import is not kept half-imported."""
        module_name, _, attr = self.ref.rpartition(".")
        if not module_name:
            raise UsageError(f"!function '{self.ref}' must look like module.function ({self.base})")
        local = self.base / (module_name.replace(".", "/") + ".py")
        if local.exists():
            # Kept per file as it is now: a file edited between two runs of one process (a notebook calling
            # madeval.evaluate again, or another folder reached by the same relative path) is read afresh.
            stat = local.stat()
            where = (str(local.resolve()), stat.st_mtime_ns, stat.st_size)
            unique = f"madeval_taskfn_{abs(hash(where))}_{module_name.replace('.', '_')}"
            module = sys.modules.get(unique)
            if module is None:
                spec = importlib.util.spec_from_file_location(unique, local)
                module = importlib.util.module_from_spec(spec)
                sys.modules[unique] = module
                try:
                    spec.loader.exec_module(module)
                except BaseException:
                    del sys.modules[unique]  # the next resolve raises the same error, not "has no attr"
                    raise
        else:
            try:
                module = importlib.import_module(module_name)
            except ImportError as error:
                raise UsageError(f"!function '{self.ref}': cannot import {module_name}: {error}") from None
        try:
            return getattr(module, attr)
        except AttributeError:
            raise UsageError(f"!function '{self.ref}': {module_name} has no {attr}") from None


class _ContentId:
    """The type of :data:`CONTENT`."""

    def __repr__(self) -> str:
        return "!content"


#: ``doc_to_id: !content``: an item's id is a hash of its content (:func:`madeval.core.item.content_id`).
CONTENT = _ContentId()


def _loader_for(base: Path) -> type[yaml.SafeLoader]:
    class Loader(BoundedLoader):
        pass

    def function(loader: yaml.SafeLoader, node: yaml.Node) -> FunctionRef:
        return FunctionRef(loader.construct_scalar(node), base)

    Loader.add_constructor("!function", function)
    Loader.add_constructor("!content", lambda loader, node: CONTENT)
    return Loader


#: Task files parsed in this process, by path and bytes (:func:`_parsed`): every run indexes every
#: task file of its sources (the built-in folder holds about 75, 60 ms of parsing), and a process that
#: runs several times (a notebook calling madeval.evaluate, madeval's tests) parsed them all again
#: each time. Reading a file is cheap; parsing it is the cost. Bounded: an --include-path folder may
#: hold thousands, and only files of a task file's size are kept.
_PARSED_MOST = 1024
_PARSED_BYTES = 64 << 10


@functools.lru_cache(maxsize=_PARSED_MOST)
def _parsed(path: Path, data: bytes) -> Any:
    """The value of ``data``, the bytes of the task file at ``path`` (as given: a relative path keeps
    its ``!function`` base relative)."""
    return parse_yaml_bytes(data, path, _loader_for(path.parent))  # size, nodes and depth bounded


def _fresh(value: Any) -> Any:
    """``value`` with every dict, list and set copied (a caller may change what it is given); the
    rest (text, numbers, :class:`FunctionRef`, :data:`CONTENT`) is immutable and shared."""
    if isinstance(value, dict):
        return {key: _fresh(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_fresh(item) for item in value]
    if isinstance(value, set):
        return set(value)
    return value


def read_yaml(path: Path, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Read one task file with its ``include`` chain merged (the file's own keys win). A file whose
    bytes this process has parsed before at the same path is not parsed again."""
    path = Path(path)
    if path in _seen:
        raise UsageError(f"include cycle: {' -> '.join(str(p) for p in (*_seen, path))}")
    text = read_yaml_bytes(path)
    if len(text) <= _PARSED_BYTES:
        data = _fresh(_parsed(path, text))
    else:
        data = _parsed.__wrapped__(path, text)  # too large to keep
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise UsageError(f"{path} must hold a mapping of task fields")
    includes = data.pop("include", None)
    if includes is None:
        return data
    merged: dict[str, Any] = {}
    for name in [includes] if isinstance(includes, str) else includes:
        merged.update(read_yaml(path.parent / name, (*_seen, path)))
    merged.update(data)
    return merged


@dataclass(frozen=True)
class AggregateMetric:
    """One entry of a group's ``aggregate_metric_list`` (lm-eval's ``GroupConfig`` keys).

    ``weight_by_size`` true: every item counts once (micro average, tasks weighted by their
    number of items); false: every task counts once (macro average).
    """

    metric: str
    aggregation: str = "mean"
    # madeval's default (macro). lm-eval's has been true since 0.4.12 (GroupConfig's
    # AggregateMetricConfig): a group file written for lm-eval should say weight_by_size explicitly.
    weight_by_size: bool = False

    def combine(self, scores: dict[str, tuple[float, int]]) -> float:
        """The group's value from ``{task: (score, items)}`` of its tasks."""
        if self.aggregation != "mean":
            raise UsageError(f"group aggregation '{self.aggregation}' is not supported (only 'mean')")
        if not scores:
            return float("nan")
        if self.weight_by_size:
            total = sum(n for _, n in scores.values())
            return sum(score * n for score, n in scores.values()) / total if total else float("nan")
        return sum(score for score, _ in scores.values()) / len(scores)


@dataclass(frozen=True)
class GroupSpec:
    """A task group as data: its member tasks and how their scores combine."""

    name: str
    tasks: tuple[str, ...]
    aggregate_metric_list: tuple[AggregateMetric, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


def _aggregate_entries(group: str, entries: Any, path: Path) -> tuple[AggregateMetric, ...]:
    if entries is None:
        return ()
    if not isinstance(entries, list):
        raise UsageError(f"group {group}: aggregate_metric_list must be a list ({path})")
    parsed = []
    for entry in entries:
        if not isinstance(entry, dict) or "metric" not in entry:
            raise UsageError(f"group {group}: each aggregate_metric_list entry needs 'metric' ({path})")
        unknown = set(entry) - {"metric", "aggregation", "weight_by_size", "filter_list"}
        if unknown:
            raise UsageError(f"group {group}: unknown aggregate_metric_list key {', '.join(sorted(unknown))} ({path})")
        parsed.append(AggregateMetric(str(entry["metric"]), str(entry.get("aggregation", "mean")),
                                      bool(entry.get("weight_by_size", False))))
        if parsed[-1].aggregation != "mean":
            raise UsageError(f"group {group}: aggregation must be 'mean', got '{parsed[-1].aggregation}' ({path})")
    return tuple(parsed)


@dataclass(frozen=True)
class Replacement:
    """A task or group name defined again by a later file, which wins (``old_source`` and
    ``new_source`` say where each file came from: ``built-in``, ``plugin X``, ``--include-path``)."""

    kind: str  # "task" or "group"
    name: str
    old: Path
    old_source: str
    new: Path
    new_source: str


@dataclass
class TaskIndex:
    """Task and group names mapped to the files that define them."""

    tasks: dict[str, Path] = field(default_factory=dict)
    groups: dict[str, Path] = field(default_factory=dict)
    tags: dict[str, list[str]] = field(default_factory=dict)
    #: Every name a later file took over from an earlier one, in indexing order.
    replaced: list[Replacement] = field(default_factory=list)
    #: The task providers' registry (``prefix:NAME`` task names); ``None``: no providers.
    providers: Any = field(default=None, repr=False)
    #: The ``--include-path`` folders, which task providers also read.
    include_paths: tuple[str, ...] = ()
    #: Task files in a provider's own format (``claims``), by task name: the provider's prefix.
    claimed: dict[str, str] = field(default_factory=dict)
    _sources: dict[Path, str] = field(default_factory=dict, repr=False)

    def provider_of(self, name: str) -> tuple[Any, str] | None:
        """``(provider, NAME)`` when ``name`` is ``prefix:NAME`` of a registered task provider, else
        ``None``. The provider is built on first use (:func:`task_provider`)."""
        prefix, colon, rest = name.partition(":")
        if not colon or self.providers is None or prefix not in self.providers.names():
            return None
        return task_provider(self.providers, prefix, self.include_paths), rest

    def _claimant(self, data: dict[str, Any]) -> str | None:
        """The prefix of the task provider whose format the task file ``data`` is in, or ``None``."""
        for prefix in self.providers.names() if self.providers is not None else ():
            claims = getattr(task_provider(self.providers, prefix, self.include_paths), "claims", None)
            if claims is not None and claims(data):
                return prefix
        return None

    def add_source(self, folder: Path, source: str = "--include-path") -> None:
        """Index every ``*.yaml`` under ``folder`` (names defined here override earlier ones, and
        each override is listed in :attr:`replaced`); ``source`` says where the folder comes from."""
        folder = Path(folder)
        if not folder.is_dir():
            raise UsageError(f"task folder not found: {folder}")
        for path in sorted(folder.rglob("*.yaml")):
            data = read_yaml(path)
            self._sources[path] = source
            if "group" in data:
                self._note("group", self.groups, str(data["group"]), path)
                self.groups[str(data["group"])] = path
            elif "task" in data and source == "--include-path" and (prefix := self._claimant(data)):
                self.claimed[str(data["task"])] = prefix  # e.g. an lm-eval task: loaded by its provider
            elif "task" in data:
                name = str(data["task"])
                self._note("task", self.tasks, name, path)
                self.tasks[name] = path
                tags = data.get("tag") or []
                for tag in [tags] if isinstance(tags, str) else tags:
                    members = self.tags.setdefault(str(tag), [])
                    if name not in members:
                        members.append(name)

    def _note(self, kind: str, known: dict[str, Path], name: str, path: Path) -> None:
        old = known.get(name)
        if old is not None and old != path:
            self.replaced.append(Replacement(kind, name, old, self._sources[old], path, self._sources[path]))

    def describe(self, replaced: Replacement) -> str:
        """One line saying which file replaced which, and which groups and tags now get the new task."""
        users = self.users_of(replaced.name) if replaced.kind == "task" else []
        also = f"; groups and tags that name it now get the new one: {', '.join(users)}" if users else ""
        return (f"{replaced.new_source} {replaced.kind} {replaced.name} ({replaced.new}) replaces the "
                f"{replaced.old_source} {replaced.kind} of that name ({replaced.old}){also}")

    def users_of(self, name: str) -> list[str]:
        """The groups and tags whose tasks include ``name`` (directly or through a group); a group
        file that cannot be read is left out (``madeval tasks --validate`` reports it)."""
        found = []
        for group in sorted(self.groups):
            try:
                if group != name and name in self.expand(group):
                    found.append(group)
            except (MadevalError, RecursionError):
                continue
        return found + sorted(tag for tag, members in self.tags.items() if name in members)

    def group_spec(self, name: str) -> GroupSpec:
        """The group ``name`` as data: its direct members and its ``aggregate_metric_list``."""
        provided = None if name in self.groups else self.provider_of(name)
        find = getattr(provided[0], "group_spec", None) if provided is not None else None
        spec = find(provided[1]) if find is not None else None
        if spec is not None:
            return spec
        if name not in self.groups:
            raise UsageError(f"unknown group '{name}'")
        path = self.groups[name]
        data = read_yaml(path)
        check_keys(data, GROUP_KEYS, f"group {name}", path)
        members = data.get("task") or []
        members = [members] if isinstance(members, str) else members
        return GroupSpec(
            name,
            tuple(str(m) for m in members),
            _aggregate_entries(name, data.get("aggregate_metric_list"), path),
            dict(data.get("metadata") or {}),
        )

    def names(self) -> list[str]:
        """Every task, group and tag name, sorted."""
        return sorted({*self.tasks, *self.groups, *self.tags, *self.claimed})

    def expand(self, name: str) -> list[str]:
        """The task names that ``name`` (a task, group or tag) stands for."""
        if name in self.tasks:
            return [name]
        if name in self.claimed:
            return [f"{self.claimed[name]}:{name}"]
        provided = self.provider_of(name)
        if provided is not None:
            provider, rest = provided
            prefix = name.partition(":")[0]
            return [f"{prefix}:{task}" for task in provider.expand(rest)]
        if name in self.groups:
            members = read_yaml(self.groups[name]).get("task") or []
            expanded: list[str] = []
            for member in members:
                for task in self.expand(str(member)):
                    if task not in expanded:
                        expanded.append(task)
            return expanded
        if name in self.tags:
            return list(self.tags[name])
        close = difflib.get_close_matches(name, self.names(), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise UsageError(f"unknown task '{name}'{hint}")


#: Task and group replacements already warned about (the index is built several times per command).
_WARNED: set = set()
#: Task providers built so far, by prefix, factory and include paths (read once per process).
_PROVIDERS: dict[tuple[str, Any, tuple[str, ...]], Any] = {}


def task_provider(providers, prefix: str, include_paths: tuple[str, ...] = ()) -> Any:
    """The task provider registered under ``prefix`` for the ``--include-path`` folders
    ``include_paths`` (its factory's ``include_path`` argument), built once per process."""
    factory = providers.resolve(prefix).factory
    key = (prefix, factory, tuple(include_paths))
    if key not in _PROVIDERS:
        _PROVIDERS[key] = factory(include_path=tuple(include_paths))
    return _PROVIDERS[key]


def task_index(registries: Registries, include_paths: list[str]) -> TaskIndex:
    """Index the plugins' task folders, then ``--include-path`` folders (later ones win); a task or
    group that replaces one of the same name is one warning line on stderr, once per process."""
    index = TaskIndex(providers=registries.task_providers, include_paths=tuple(str(p) for p in include_paths))
    for plugin, folder in registries.task_sources:
        index.add_source(Path(str(folder)), "built-in" if plugin in DEFAULT_PLUGINS else f"plugin {plugin}")
    for folder in include_paths:
        index.add_source(Path(folder))
    for replaced in index.replaced:
        if replaced not in _WARNED:
            _WARNED.add(replaced)
            print(f"madeval: warning: {index.describe(replaced)}", file=sys.stderr)
    return index
