"""The question each debate was about, for the viewer and the inspect export.

A record names its item by id and does not carry the question (the task does). So the run's
tasks are loaded again, by name, and each item the run used is looked up; a record that carries
its own ``input`` (an importer's) is read as it is. A task is loaded only when the first record
that needs its questions is read (a page of a slice, or records that carry their question, load
none), and from a local mirror only the rows of the run's items are made into items
(:meth:`madeval.task.definition.Task.items_with_ids`). A task that cannot be loaded any more (its data gone, a
plugin uninstalled) is not an error: its debates are shown without their question, and
:attr:`Questions.notes` says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from madeval.core.plugins import registries
from madeval.errors import MadevalError
from madeval.settings.config import RunSettings
from madeval.task.definition import task_loader
from madeval.task.files import task_index


@dataclass
class Questions:
    """Item texts by (task, item id), read from each task on first use, and one note per task
    whose items could not be read. ``wanted`` is the run's item ids by task, ``include`` its
    ``include_path``."""

    wanted: dict[str, set[str]] = field(default_factory=dict)
    include: list[str] = field(default_factory=list)
    texts: dict[tuple[str, str], str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    loaded: set[str] = field(default_factory=set)

    def of(self, record: Mapping[str, Any]) -> str | None:
        """The question of ``record``'s debate (with its options, as the agents saw it), or None."""
        carried = record.get("input")
        if isinstance(carried, str):
            return carried
        unit = record.get("unit") or {}
        task, item = str(unit.get("task")), str(unit.get("item"))
        if task not in self.loaded:
            self.loaded.add(task)
            if task in self.wanted:
                self._load(task)
        return self.texts.get((task, item))

    def _load(self, name: str) -> None:
        wanted = self.wanted[name]
        try:
            built = registries()
            settings = RunSettings(tasks=[name], include_path=self.include)
            task = task_loader(task_index(built, self.include), built.extractors, built.metrics, settings)(name)
            items = task.items_with_ids(wanted)
        except (MadevalError, OSError, KeyError, ValueError) as error:  # ValueError: a broken mirror line
            self.notes.append(f"the questions of task {name} could not be read ({error})")
            return
        for item in items:
            if item.id in wanted:
                self.texts[(name, item.id)] = item.input if not item.context else f"{item.context}\n\n{item.input}"


def load_questions(run: Mapping[str, Any]) -> Questions:
    """The questions of the items that ``run`` (a ``run.json``) lists for each of its tasks, each
    task read when a record first asks for one of its questions (:meth:`Questions.of`)."""
    wanted = {str(name): {str(item) for item in (described or {}).get("items") or []}
              for name, described in (run.get("tasks") or {}).items()}
    return Questions(wanted, list((run.get("settings") or {}).get("include_path") or []))
