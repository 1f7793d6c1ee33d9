"""The madeval hooks of madeval-lmeval: the ``lm_eval`` task provider."""

from __future__ import annotations

import difflib
import threading
from pathlib import Path

from madeval import AggregateMetric, GroupSpec, UsageError, hookimpl, hub_reachable

from . import index_cache, item_cache, lmeval_api, mirrors
from .task import PREFIX, LmEvalTask, adapt, adapt_prepared


class LmEvalTasks:
    """lm-eval's tasks, groups and tags as ``lm_eval:NAME``, read through lm-eval's ``TaskManager``.

    Nothing of lm-eval is imported until a name is looked up; its index is read from the disk cache
    (:mod:`.index_cache`), or built and stored there when lm-eval or an include path changed. A
    task's items come from the disk cache of prepared items (:mod:`.item_cache`) when it holds them:
    then lm-eval's task package is imported only to score replies, in a thread, while the debate runs.
    """

    def __init__(self, include_path: tuple[str, ...] = ()):
        self.include_path = tuple(str(Path(p).resolve()) for p in include_path)
        self._built: dict[str, object] = {}
        self._sources: dict[str, list[Path] | None] = {}
        self._building = threading.Lock()
        self._index: dict[str, tuple[str, str | None, list[str]]] | None = None

    @property
    def manager(self):
        """lm-eval's task manager over its tasks and the ``--include-path`` folders (built on first use)."""
        return lmeval_api.task_manager(self.include_path)

    @property
    def index(self) -> dict[str, tuple[str, str | None, list[str]]]:
        """name -> ``(kind, yaml file, tags)`` of every lm-eval name, read without importing lm-eval
        when the disk cache holds it."""
        if self._index is None:
            self._index = index_cache.load_raw(self.include_path)
        return self._index

    @staticmethod
    def claims(data: dict) -> bool:
        """A task file in lm-eval's format (it has ``dataset_path``, ``output_type`` or ``class``),
        found through ``--include-path``: lm-eval loads it, unchanged."""
        return any(key in data for key in LM_EVAL_ONLY_KEYS)

    def names(self) -> list[str]:
        """Every lm-eval task, group and tag name, sorted (as lm-eval's ``all_tasks``)."""
        return sorted(self.index)

    def _kind(self, name: str) -> str:
        """``"task"``, ``"py_task"``, ``"group"`` or ``"tag"``; an unknown name is a UsageError."""
        found = self.index.get(name)
        if found is None:
            near = difflib.get_close_matches(name, list(self.index), n=1, cutoff=0.6)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise UsageError(f"unknown task '{PREFIX}:{name}'{hint}")
        return found[0].lower()

    def _entry(self, name: str):
        self._kind(name)
        return lmeval_api.entries(self.manager)[name]

    def expand(self, name: str, _seen: tuple[str, ...] = ()) -> list[str]:
        """The lm-eval tasks ``name`` stands for: itself, a tag's tasks, or a group's leaf tasks
        (through its subgroups and tags), in the group file's order."""
        if name in _seen:
            raise UsageError(f"lm-eval group cycle: {' -> '.join((*_seen, name))}")
        kind = self._kind(name)
        if kind in ("task", "py_task"):
            return [name]
        if kind == "tag":
            members = sorted(self.index[name][2])
        else:
            members = _members(lmeval_api.config_of(self._entry(name)))
        found: list[str] = []
        for member in members:
            if not isinstance(member, str):
                raise UsageError(f"{PREFIX}:{name}: lm-eval group members defined inline (with their own "
                                 "settings) are not supported; name the tasks instead")
            for task in self.expand(member, (*_seen, name)):
                if task not in found:
                    found.append(task)
        return found

    def group_spec(self, name: str):
        """An lm-eval group as a madeval group, its ``aggregate_metric_list`` lm-eval's
        (:func:`group_aggregation`); ``None`` for a task or tag."""
        if self._kind(name) != "group":
            return None
        config = lmeval_api.config_of(self._entry(name))
        members = _members(config)
        return GroupSpec(f"{PREFIX}:{name}", tuple(f"{PREFIX}:{m}" for m in members if isinstance(m, str)),
                         group_aggregation(config.get("aggregate_metric_list")), dict(config.get("metadata") or {}))

    def lm_task(self, name: str):
        """lm-eval's task object for ``name``, its data read from madeval's mirrors (built once;
        safe to call from the thread :func:`.task.adapt_prepared` starts)."""
        with self._building:
            if name not in self._built:
                entry = self._entry(name)
                loader = mirrors.dataset_loader(f"{PREFIX}:{name}", lmeval_api.config_of(entry))
                self._built[name] = lmeval_api.build(self.manager, name, loader)
                self._sources[name] = loader.files if loader is not None else None
            return self._built[name]

    def load(self, name: str, extractors, metrics, settings=None):
        """The madeval task for the lm-eval task ``name``, its data read from madeval's mirrors;
        ``settings`` (a run's) give ``num_fewshot`` and the few-shot sampler's seed. Its items are
        read from the disk cache when it holds them for this task, these settings and unchanged
        files (:mod:`.item_cache`), else built through lm-eval and stored there."""
        self._kind(name)
        fewshot, seed = (settings.num_fewshot, settings.seed) if settings is not None else (0, DEFAULT_FEWSHOT_SEED)
        key = item_cache.key_of(name, self.include_path, fewshot, seed)
        stored = item_cache.read(key) if not hub_reachable() else None  # with the hub, rows come from it
        if stored is not None:
            task = adapt_prepared(stored, lambda: self.lm_task(name), name, extractors, metrics)
        else:
            task = adapt(self.lm_task(name), name, extractors, metrics)
            task.store = lambda built, items: self._store(key, name, built, items)
        task.num_fewshot, task.fewshot_seed = fewshot, seed
        return task

    def _store(self, key: str, name: str, task: LmEvalTask, items: list) -> None:
        """Keep ``task``'s items in the disk cache when every split came from a local mirror."""
        mirror_files = self._sources.get(name)
        if mirror_files is None:
            return
        yaml_file = self.index[name][1]
        files, folders = item_cache.sources_of(Path(yaml_file) if yaml_file else None, mirror_files)
        item_cache.write(key, task.prepared(items, files, folders))


#: lm-eval's own default seed of the few-shot sampler (``simple_evaluate``).
DEFAULT_FEWSHOT_SEED = 1234


#: Task file keys that only lm-eval's format has.
LM_EVAL_ONLY_KEYS = ("dataset_path", "output_type", "class")
#: lm-eval's log-likelihood accuracies, which madeval's lettered-option form scores as ``accuracy``.
LOGLIKELIHOOD_ACCURACY = ("acc", "acc_norm")


def group_aggregation(entries) -> tuple[AggregateMetric, ...]:
    """lm-eval's ``aggregate_metric_list`` as madeval's: one entry per (metric, filter) named as
    the tasks' scores are (``exact_match,custom-extract``), ``weight_by_size`` defaulting to true as
    in lm-eval's ``AggMetricConfig``; ``acc``/``acc_norm`` also declare ``accuracy``, the score of
    a multiple-choice task run as generation. Only ``mean`` aggregation exists in both."""
    declared = []
    for entry in entries or []:
        if not isinstance(entry, dict) or "metric" not in entry:
            raise UsageError(f"lm-eval aggregate_metric_list entry without metric: {entry!r}")
        if entry.get("aggregation", "mean") != "mean":
            raise UsageError(f"lm-eval group aggregation {entry['aggregation']!r} is not supported (only mean)")
        filters = entry.get("filter_list") or ["none"]
        filters = [filters] if isinstance(filters, str) else filters
        weight = bool(entry.get("weight_by_size", True))
        names = [f"{entry['metric']},{f}" for f in filters]
        if entry["metric"] in LOGLIKELIHOOD_ACCURACY:
            names.append("accuracy")
        declared += [AggregateMetric(metric, "mean", weight) for metric in names]
    return tuple(dict.fromkeys(declared))


@hookimpl
def register_task_providers(register):
    """lm-evaluation-harness tasks as ``lm_eval:NAME``."""
    register(PREFIX, LmEvalTasks)


def _members(config: dict) -> list:
    """A group config's ``task`` list (one name may stand alone)."""
    members = config.get("task") or []
    return [members] if isinstance(members, str) else list(members)
