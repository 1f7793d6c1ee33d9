"""Every use of lm-eval's API that is not plainly public, in one place (lm-eval >=0.4.12,<0.5).

lm-eval 0.4.12 made ``TaskManager(include_path=...).load([...])`` the public way to build tasks,
but it offers no public way to build one task with a different dataset loader: ``load`` takes a
registered name (no overrides) or a whole inline config (which would bypass the index's
``include`` resolution). So :func:`build_task` calls the manager's private task factory with a
``custom_dataset`` override, and reads the index's ``Entry`` objects (``lm_eval.tasks._index``).
The manager is built over the index :mod:`.index_cache` keeps on disk (``TaskIndex.build`` is
replaced while its constructor runs), so a process does not walk lm-eval's task files again.
``tests/test_lmeval_api.py`` checks each of these names and signatures, so a lm-eval release that
changes them fails there, loudly, rather than somewhere inside a run.
"""

from __future__ import annotations

import functools
import inspect
import logging
from typing import Any, Callable

from . import index_cache

#: The lm-eval releases this module was written against (the package's dependency pins the same).
SUPPORTED = ">=0.4.12,<0.5"


#: What lm-eval logs for every task built with a ``custom_dataset`` (madeval's mirrors): advice
#: about lm-eval's own ``--metadata`` option, which madeval does not have.
METADATA_HINT = "Custom kwargs can be passed to `--metadata`"


def task_manager(include_paths: tuple[str, ...] = ()) -> Any:
    """lm-eval's ``TaskManager`` over its own task folder and ``include_paths``, built once per
    process and set of folders, over the index kept on disk (:mod:`.index_cache`; walking lm-eval's
    ~14,700 task files takes 10 s or more)."""
    return _task_manager(tuple(include_paths))


@functools.lru_cache(maxsize=4)
def _task_manager(include_paths: tuple[str, ...]) -> Any:
    from lm_eval.tasks import TaskManager
    from lm_eval.tasks._index import TaskIndex

    _compile_templates_once()
    index = index_cache.load_index(include_paths)
    built = TaskIndex.__dict__["build"]
    TaskIndex.build = staticmethod(lambda paths, **options: index)  # the constructor's walk, answered
    try:
        return TaskManager(include_path=list(include_paths) or None)
    finally:
        TaskIndex.build = built


@functools.cache
def _compile_templates_once() -> None:
    """Make lm-eval's ``utils.apply_template`` compile each Jinja template once per process.

    lm-eval compiles ``doc_to_text``/``doc_to_target`` again for every doc (``env.from_string``),
    which was most of the time spent building gsm8k's 1,319 prompts before a run's first call. The
    compiled template comes from lm-eval's own environment and renders the same text
    (``tests/test_lmeval_index_cache.py`` compares the two).
    """
    from lm_eval import utils

    original = utils.apply_template
    compiled = functools.lru_cache(maxsize=256)(utils.env.from_string)

    def apply_template(template: str, doc: dict) -> str:
        return compiled(template).render(**doc)

    apply_template.uncached = original  # lm-eval's own, for the test
    utils.apply_template = apply_template


def config_of(entry: Any) -> dict[str, Any]:
    """An index ``Entry``'s config (``include`` merged, ``!function`` unresolved), read from its YAML
    file on first use when the index came from the cache; ``{}`` for a tag."""
    if entry.cfg is None and entry.yaml_path is not None:
        from lm_eval.tasks._yaml_loader import load_yaml

        entry.cfg = load_yaml(entry.yaml_path, resolve_func=False, recursive=True)
    return entry.cfg or {}


class _DropMetadataHint(logging.Filter):
    """Drops lm-eval's advice about its ``--metadata`` option (see :data:`METADATA_HINT`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return METADATA_HINT not in record.getMessage()


@functools.cache
def _quiet_metadata_hint() -> None:
    logging.getLogger("lm_eval.api.task").addFilter(_DropMetadataHint())


def entries(manager: Any) -> dict[str, Any]:
    """The manager's index: every task, group and tag name mapped to its ``Entry`` (``kind``,
    ``yaml_path``, ``cfg`` with ``include`` merged and ``!function`` left unresolved)."""
    return manager.task_index


def build(manager: Any, name: str, custom_dataset: Callable[..., Any] | None) -> Any:
    """Build the registered task, group or tag ``name`` (a Task, a Group, or a list of Tasks for a
    tag), its dataset read by ``custom_dataset`` (called with the task's ``metadata`` and
    ``dataset_kwargs`` as keywords) instead of ``datasets.load_dataset``; ``None`` keeps lm-eval's."""
    overrides = {"custom_dataset": custom_dataset} if custom_dataset is not None else None
    _quiet_metadata_hint()
    return manager._factory.build(manager.task_index[name], overrides=overrides, registry=manager.task_index)


def filter_ensembles(task: Any) -> list[Any]:
    """The task's ``filter_list`` pipelines (``FilterEnsemble`` objects) exactly as lm-eval built
    them; a task without ``filter_list`` has lm-eval's default ``none`` pipeline (``take_first``)."""
    return list(task._filters)


def instance(task: Any, doc: dict[str, Any], doc_id: int, reply: str) -> Any:
    """A ``generate_until`` request of ``task`` for ``doc`` whose model output was ``reply``."""
    from lm_eval.api.instance import Instance

    made = Instance(request_type="generate_until", doc=doc, arguments=("", {}), idx=0,
                    metadata=(task.config.task, doc_id, 1))
    made.resps.append(reply)
    return made


def fewshot_context(task: Any, doc: dict[str, Any], num_fewshot: int) -> Any:
    """lm-eval's prompt for ``doc``: description, ``num_fewshot`` examples, then ``doc_to_text``."""
    return task.fewshot_context(doc=doc, num_fewshot=num_fewshot)


def seed_fewshot(task: Any, seed: int) -> None:
    """Seed the task's few-shot sampler (unseeded until this is called)."""
    task.set_fewshot_seed(seed=seed)


def fewshot_pool(task: Any) -> Any:
    """The docs the few-shot sampler draws from (empty when the task has none)."""
    sampler = getattr(task, "sampler", None)
    return getattr(sampler, "df", None) or []


def signature_of(function: Callable[..., Any]) -> list[str]:
    """The parameter names of ``function`` (for the test that pins this module's assumptions)."""
    return list(inspect.signature(function).parameters)
