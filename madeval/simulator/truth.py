"""What the simulator knows: the gold answer of every question it may be asked.

Questions are found in a request by their first line: the index maps the first line of each
item's input (whitespace collapsed, at most 80 characters) to the items starting with it, and a
request is searched line by line, also after a "Label: " or "question? " prefix on the line, so it
works with every prompt layout that quotes the input. Items sharing a first line are told apart by
checking that their whole input occurs in the request.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

FINGERPRINT_CHARS = 80
_SPACES = re.compile(r"\s+")
_SPLIT_AFTER = re.compile(r"(?:[:?]\s+)")


def _norm(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def fingerprint(text: str) -> str:
    """The lookup key of a question: its first line, whitespace collapsed, truncated."""
    first = text.strip().split("\n", 1)[0]
    return _norm(first)[:FINGERPRINT_CHARS]


@dataclass(frozen=True)
class Gold:
    """The truth about one question.

    ``kind`` is a task answer type (``choice``, ``yes_no``, ``number``, ``text``); ``answer`` is
    the gold answer in that form (an option letter, "yes"/"no", a number string, a text);
    ``options`` is the number of choices for ``choice`` items.
    """

    kind: str
    answer: str
    options: int = 0
    input: str = ""


class GoldIndex:
    """Questions and their gold answers, looked up from request text."""

    def __init__(self) -> None:
        self._by_print: dict[str, list[Gold]] = {}

    def __len__(self) -> int:
        return sum(len(golds) for golds in self._by_print.values())

    def add(self, question: str, kind: str, answer: Any, options: int = 0) -> None:
        """Register one question; a list of acceptable text answers keeps the first."""
        if isinstance(answer, (list, tuple)):
            answer = answer[0] if answer else ""
        gold = Gold(kind, str(answer), options, _norm(question))
        self._by_print.setdefault(fingerprint(question), []).append(gold)

    def update(self, other: GoldIndex) -> None:
        """Add every question of ``other``."""
        for print_, golds in other._by_print.items():
            self._by_print.setdefault(print_, []).extend(golds)

    def lookup(self, text: str) -> Gold | None:
        """The gold of the question quoted in ``text``, or ``None``."""
        normalised = None
        for line in text.split("\n"):
            candidates = [line]
            candidates.extend(line[m.end():] for m in _SPLIT_AFTER.finditer(line))
            for candidate in candidates:
                golds = self._by_print.get(_norm(candidate)[:FINGERPRINT_CHARS])
                if not golds:
                    continue
                if len(golds) == 1:
                    return golds[0]
                normalised = normalised or _norm(text)
                for gold in golds:
                    if gold.input in normalised:
                        return gold
        return None

    @classmethod
    def from_tasks(cls, tasks: Iterable[Any]) -> GoldIndex:
        """Index every item of madeval :class:`~madeval.task.Task` objects."""
        index = cls()
        for task in tasks:
            for item in task.items:
                index.add(item.input, task.answer_type, item.target, len(item.choices or ()))
        return index

    @classmethod
    def from_jsonl(cls, path: str | Path) -> GoldIndex:
        """Read a gold file: one JSON object per line with ``input``, ``answer`` and optionally
        ``kind`` (default ``choice``) and ``options`` (default 4)."""
        index = cls()
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                if line.strip():
                    row = json.loads(line)
                    index.add(row["input"], row.get("kind", "choice"), row["answer"], int(row.get("options", 4)))
        return index
