"""One task item as madeval uses it (:class:`Item`): the unit that tasks produce, components and
metrics read, and plans and records name by id.

It lives apart from :mod:`madeval.task`, which builds items, so that metrics and components can
name the type without importing the task machinery.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Item:
    """One task item as madeval uses it: a stable id, the rendered input and the gold target.

    ``target`` is an option letter for ``choice`` tasks, ``"yes"``/``"no"`` for ``yes_no``, a
    number string for ``number``, a LaTeX answer for ``math`` and a string (or list of acceptable
    strings) for ``text``.
    """

    id: str
    input: str
    target: Any
    context: str | None = None
    choices: tuple[str, ...] | None = None
    doc: dict[str, Any] = field(default_factory=dict, compare=False, hash=False, repr=False)
