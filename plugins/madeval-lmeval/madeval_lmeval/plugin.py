"""The madeval hooks of madeval-lmeval: the ``lm_eval`` task provider."""

from __future__ import annotations

from madeval import hookimpl
from madeval.errors import UsageError
from madeval.taskfiles import closest

from . import lmeval_api, mirrors
from .task import PREFIX, adapt


class LmEvalTasks:
    """lm-eval's tasks, groups and tags as ``lm_eval:NAME``, read through lm-eval's ``TaskManager``.

    Nothing of lm-eval is imported until a name is looked up; its index is built once per process.
    """

    def __init__(self):
        self._built: dict[str, object] = {}

    @property
    def manager(self):
        """lm-eval's task manager (built on first use)."""
        return lmeval_api.task_manager()

    def names(self) -> list[str]:
        """Every lm-eval task, group and tag name."""
        return list(self.manager.all_tasks)

    def _entry(self, name: str):
        found = lmeval_api.entries(self.manager).get(name)
        if found is None:
            raise UsageError(f"unknown task '{PREFIX}:{name}'{closest(name, self.manager.all_tasks)}")
        return found

    def expand(self, name: str) -> list[str]:
        """The lm-eval tasks ``name`` stands for (a group or tag: its leaf tasks, loaded)."""
        if lmeval_api.kind_of(self._entry(name)) in ("task", "py_task"):
            return [name]
        raise UsageError(f"{PREFIX}:{name} is an lm-eval group or tag: not supported yet (name its tasks)")

    def load(self, name: str, extractors, metrics):
        """The madeval task for the lm-eval task ``name``, its data read from madeval's mirrors."""
        if name not in self._built:
            entry = self._entry(name)
            loader = mirrors.dataset_loader(f"{PREFIX}:{name}", entry.cfg or {})
            self._built[name] = lmeval_api.build(self.manager, name, loader)
        return adapt(self._built[name], name, extractors, metrics)


@hookimpl
def register_task_providers(register):
    """lm-evaluation-harness tasks as ``lm_eval:NAME``."""
    register(PREFIX, LmEvalTasks)
