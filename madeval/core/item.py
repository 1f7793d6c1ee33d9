"""One task item as madeval uses it (:class:`Item`): the unit that tasks produce, components and
metrics read, and plans and records name by id.

It lives apart from :mod:`madeval.task.definition`, which builds items, so that metrics and components can
name the type without importing the task machinery.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

#: Hex digits of a content id: 48 bits, so 14,000 items collide with probability about 4e-7 (and
#: :attr:`madeval.task.definition.Task.items` refuses ids that are not unique).
CONTENT_ID_DIGITS = 12


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


def content_id(text: str, context: str | None, choices: tuple[str, ...] | None, target: Any) -> str:
    """A short stable id made from an item's content: its question text (before the options are
    appended), context, options and gold target, as canonical JSON hashed with SHA-256.

    It does not depend on the row's position, so a re-ordered or re-mirrored copy of a dataset
    gives every item the same id (``doc_to_id: !content`` in a task file).
    """
    canonical = json.dumps([text, context, list(choices) if choices else None, target],
                           ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:CONTENT_ID_DIGITS]
