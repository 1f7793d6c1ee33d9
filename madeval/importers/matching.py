"""Finding the task item an imported record is about: by id, by question text, or by content.

* **id**: the record's own id of the dataset row (MALLM's ``datasetId`` is MMLU-Pro's
  ``question_id``, which is madeval's item id for ``mmlu_pro``; lm-eval's ``doc_id`` is the row
  position, which is the id of an ``lm_eval:TASK`` item, ``lm_eval:TASK-<doc_id>``).
* **text**: the question as shown to the agents, compared with every item's rendered input with
  white space collapsed (the question and its lettered options); when the options are written
  another way, the question alone, if exactly one item has it.
* **doc hash**: lm-eval's ``doc_hash``, the SHA-256 of the dataset row as lm-eval dumps it
  (:func:`doc_hash`), compared with the same hash of every item's row: a content match, whatever the
  row's position or the task's item ids.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from typing import Any

from madeval.core.item import Item
from madeval.task.definition import Task

#: The first lettered option of a question as MALLM and madeval show it ("A) ...", "(A) ...").
FIRST_OPTION = re.compile(r"(?m)^\s*\(?A\)\s")


def collapse(text: str) -> str:
    """``text`` with runs of white space made one space, and trimmed."""
    return " ".join(text.split())


def question_part(text: str) -> str:
    """The question of a rendered multiple-choice input: the text before its first option line."""
    found = FIRST_OPTION.search(text)
    return collapse(text[: found.start()] if found else text)


def doc_hash(doc: Any) -> str:
    """lm-eval's ``doc_hash`` of a dataset row: SHA-256 of ``json.dumps(doc, indent=2,
    ensure_ascii=False)`` (``lm_eval/evaluator.py`` with ``lm_eval.utils.hash_string``; values JSON
    cannot write are written as ``str``, as lm-eval's ``handle_non_serializable`` does)."""
    text = json.dumps(doc, indent=2, default=str, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ItemIndex:
    """The items of one task, looked up by id, by question text or by the hash of their row.

    The text and hash tables are built on first use (a task of 12,000 items takes a fraction of
    a second), so an import whose records all carry ids never builds them.
    """

    def __init__(self, task: Task):
        self.task = task
        self.by_id: dict[str, Item] = {item.id: item for item in task.items}

    def get(self, item_id: Any) -> Item | None:
        """The item whose id is ``item_id`` (compared as text), else None."""
        return None if item_id is None else self.by_id.get(str(item_id))

    def by_text(self, text: str) -> Item | None:
        """The item whose rendered input is ``text`` (white space aside), else the one item whose
        question is the question part of ``text``; None when there is none, or several."""
        found = self._inputs.get(collapse(text))
        if found is not None:
            return found
        matches = self._questions.get(question_part(text), [])
        return matches[0] if len(matches) == 1 else None

    def by_doc_hash(self, digest: str) -> Item | None:
        """The item whose dataset row has lm-eval's ``doc_hash`` ``digest``, else None."""
        return self._hashes.get(digest)

    @functools.cached_property
    def _inputs(self) -> dict[str, Item]:
        return {collapse(item.input): item for item in self.task.items}

    @functools.cached_property
    def _questions(self) -> dict[str, list[Item]]:
        table: dict[str, list[Item]] = {}
        for item in self.task.items:
            table.setdefault(question_part(item.input), []).append(item)
        return table

    @functools.cached_property
    def _hashes(self) -> dict[str, Item]:
        return {doc_hash(item.doc): item for item in self.task.items if item.doc}
