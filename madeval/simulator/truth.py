"""What the simulator knows: the gold answer of every question it may be asked.

Questions are found in a request by their first line: the index maps the first line of each
item's input (whitespace collapsed, at most 80 characters) to the items starting with it, and a
request is searched line by line, also after a "Label: " or "question? " prefix on the line, so it
works with every prompt layout that quotes the input. When no line matches, a second pass accepts
a key that is a prefix of such a line ending at a word boundary (the longest first), for layouts
that continue the line after a one-line question, e.g. Du et al.'s "Can you answer the following
question as accurately as possible? {question} Explain your answer." Items sharing a first line
are told apart by checking that their whole input occurs in the request.
"""

from __future__ import annotations

import hashlib
import json
import re
import weakref
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


def _candidates(text: str) -> Iterable[str]:
    """Each non-empty line of ``text``, normalised, then its parts after a "Label: " or
    "question? " prefix; lazily, because the question is usually found within the first lines."""
    for line in text.split("\n"):
        if not line or line.isspace():
            continue
        yield _norm(line)
        for match in _SPLIT_AFTER.finditer(line):
            yield _norm(line[match.end():])


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


def _entry(question: str, kind: str, answer: Any, options: int) -> tuple[str, Gold]:
    """A question's key and gold (:meth:`GoldIndex.add`)."""
    if isinstance(answer, (list, tuple)):
        answer = answer[0] if answer else ""
    return fingerprint(question), Gold(kind, str(answer), options, _norm(question))


#: The keys and golds of each Task object indexed so far, for as long as it lives: a process that
#: starts several simulators over the same tasks (a notebook's power study, madeval's tests) made
#: them again each time (5,000 generated items: 0.07 s).
_TASK_ENTRIES: weakref.WeakKeyDictionary[Any, list[tuple[str, Gold]]] = weakref.WeakKeyDictionary()


class GoldIndex:
    """Questions and their gold answers, looked up from request text."""

    def __init__(self) -> None:
        self._by_print: dict[str, list[Gold]] = {}
        self._short_lengths: list[int] | None = None  # lengths of keys under FINGERPRINT_CHARS, longest first
        self._digest: str | None = None

    def digest(self) -> str:
        """A SHA-256 of every question and its gold answer (the same questions, the same digest)."""
        if self._digest is None:
            golds = sorted((g.input, g.kind, g.answer, g.options) for gs in self._by_print.values() for g in gs)
            self._digest = hashlib.sha256(json.dumps(golds).encode("utf-8", "backslashreplace")).hexdigest()
        return self._digest

    def __len__(self) -> int:
        return sum(len(golds) for golds in self._by_print.values())

    def add(self, question: str, kind: str, answer: Any, options: int = 0) -> None:
        """Register one question; a list of acceptable text answers keeps the first."""
        self._add(*_entry(question, kind, answer, options))

    def _add(self, key: str, gold: Gold) -> None:
        self._by_print.setdefault(key, []).append(gold)
        self._short_lengths = self._digest = None

    def update(self, other: GoldIndex) -> None:
        """Add every question of ``other``."""
        for print_, golds in other._by_print.items():
            self._by_print.setdefault(print_, []).extend(golds)
        self._short_lengths = self._digest = None

    def lookup(self, text: str) -> Gold | None:
        """The gold of the question quoted in ``text``, or ``None``."""
        candidates = []  # the lines looked at so far, kept for the second pass
        for candidate in _candidates(text):
            found = self._pick(self._by_print.get(candidate[:FINGERPRINT_CHARS]), text)
            if found:
                return found
            candidates.append(candidate)
        if self._short_lengths is None:
            self._short_lengths = sorted({len(k) for k in self._by_print if len(k) < FINGERPRINT_CHARS}, reverse=True)
        for candidate in candidates:  # a one-line question followed by more text on its line
            for length in self._short_lengths:
                if length < len(candidate) and not candidate[length].isalnum():
                    found = self._pick(self._by_print.get(candidate[:length]), text)
                    if found:
                        return found
        return None

    def _pick(self, golds: list[Gold] | None, text: str) -> Gold | None:
        """The one of ``golds`` whose whole input occurs in ``text`` (the only one needs no check)."""
        if not golds:
            return None
        if len(golds) == 1:
            return golds[0]
        normalised = _norm(text)
        return next((gold for gold in golds if gold.input in normalised), None)

    @classmethod
    def from_tasks(cls, tasks: Iterable[Any]) -> GoldIndex:
        """Index every item of madeval :class:`~madeval.task.definition.Task` objects."""
        index = cls()
        for task in tasks:
            entries = _TASK_ENTRIES.get(task)
            if entries is None:  # a task's items do not change: its entries are made once
                entries = [_entry(item.input, task.answer_type, item.target, len(item.choices or ()))
                           for item in task.items]
                _TASK_ENTRIES[task] = entries
            for key, gold in entries:
                index._add(key, gold)
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
