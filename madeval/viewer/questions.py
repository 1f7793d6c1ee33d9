"""The question each debate was about, for the viewer and the inspect export.

A record names its item by id and does not carry the question (the task does). So the run's
tasks are loaded again, by name, and each item the run used is looked up; a record that carries
its own ``input`` (an importer's) is read as it is. A task that cannot be loaded any more (its
data gone, a plugin uninstalled) is not an error: its debates are shown without their question,
and :attr:`Questions.notes` says why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..config import RunSettings
from ..errors import MadevalError
from ..plugins import registries
from ..run import load_tasks


@dataclass
class Questions:
    """Item texts by (task, item id), and one note per task whose items could not be read."""

    texts: dict[tuple[str, str], str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def of(self, record: Mapping[str, Any]) -> str | None:
        """The question of ``record``'s debate (with its options, as the agents saw it), or None."""
        carried = record.get("input")
        if isinstance(carried, str):
            return carried
        unit = record.get("unit") or {}
        return self.texts.get((str(unit.get("task")), str(unit.get("item"))))


def load_questions(run: Mapping[str, Any]) -> Questions:
    """The questions of the items that ``run`` (a ``run.json``) lists for each of its tasks."""
    found = Questions()
    include = list((run.get("settings") or {}).get("include_path") or [])
    for name, described in (run.get("tasks") or {}).items():
        wanted = {str(item) for item in (described or {}).get("items") or []}
        try:
            task = load_tasks(RunSettings(tasks=[name], include_path=include), registries())[name]
            items = task.items
        except (MadevalError, OSError, KeyError) as error:
            found.notes.append(f"the questions of task {name} could not be read ({error})")
            continue
        for item in items:
            if item.id in wanted:
                found.texts[(name, item.id)] = item.input if not item.context else f"{item.context}\n\n{item.input}"
    return found
