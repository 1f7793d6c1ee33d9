"""What an importer is: the contract between a format's reader and madeval's run folder.

An :class:`Importer` reads one file of another tool's output and yields :class:`ImportedDebate`
objects: the task item a record is about and the debate as a madeval
:class:`~madeval.core.transcript.Transcript` (agents with personas, messages with turn, agent, stage,
text, solution, extracted answer and agreement, decider events, the decision). The shared writer
(:mod:`madeval.importers.writer`) turns each into an ordinary record through
:func:`madeval.records.unit.unit_record`, the one place a record is built, so an imported run is read,
scored, rescored and viewed like madeval's own.

A format plugin subclasses :class:`Importer` and registers it with ``register_importers``
(:mod:`madeval.core.hookspecs`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from madeval.core.item import Item
from madeval.core.transcript import NO_ANSWER, Transcript
from madeval.importers.matching import collapse
from madeval.task.definition import Task


@dataclass
class ImportedDebate:
    """One record of the input as a madeval debate: the item, which repeat of it, the transcript
    (with its decision) and the debate's elapsed seconds when the input says (else ``None``)."""

    item: Item
    transcript: Transcript
    repeat: int = 0
    wall_s: float | None = None


@dataclass
class FileReport:
    """What reading one input file left out, each kind counted with one example for the user."""

    #: records that match no item of the task: how many, and the first one described
    unmatched: int = 0
    unmatched_example: str = ""
    #: records whose own id was already read in this file (the first one is kept)
    duplicates: int = 0
    duplicate_example: str = ""
    #: other remarks worth one line each (e.g. a doc whose hash differs from the task's)
    notes: list[str] = field(default_factory=list)

    #: the record ids read so far (see :meth:`first_of`)
    seen: set[str] = field(default_factory=set, repr=False)

    def first_of(self, key: str, where: str) -> bool:
        """Whether ``key`` is the first record of its id in the file; a later one is counted as a
        duplicate (``where`` describes it for the first example) and must be skipped."""
        if key in self.seen:
            self.duplicates += 1
            self.duplicate_example = self.duplicate_example or where
            return False
        self.seen.add(key)
        return True

    def lines(self, name: str) -> list[str]:
        """One line per kind of record left out or remark, about the file called ``name``."""
        found = []
        if self.unmatched:
            one = self.unmatched == 1
            found.append(f"{name}: {_count(self.unmatched, 'record')} {'matches' if one else 'match'} no item of "
                         f"the task and {'is' if one else 'are'} not imported (first: {self.unmatched_example})")
        if self.duplicates:
            found.append(f"{name}: {_count(self.duplicates, 'duplicate record')} skipped, the first of each "
                         f"id kept (first: {self.duplicate_example})")
        found.extend(f"{name}: {note}" for note in self.notes)
        return found


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


@dataclass
class ImportedFile:
    """One input file read as one configuration: its label, the configuration's options (keys of
    :class:`madeval.settings.config.DebateConfig`), what the input says of the setup (kept in the
    configuration's ``imported`` description) and its debates, read lazily."""

    label: str
    options: dict[str, Any]
    description: dict[str, Any]
    debates: Iterator[ImportedDebate]
    report: FileReport


class Importer:
    """Reads files of one format as madeval debates (one file, one configuration).

    ``name`` is set by the registry to the registered name (``madeval import NAME FILE...``).
    Keyword parameters of ``__init__`` are the importer's options, passed from the command line
    (``--filter`` of lm-eval samples), as for every other component.
    """

    name = ""

    def read(self, path: Path, task: Task, label: str | None) -> ImportedFile:
        """Open ``path`` and return its configuration with its debates as a lazy iterator.

        Problems found before any debate is read (not the format, a key missing from the first
        record) raise a one-line :class:`madeval.errors.UsageError`; problems found while the
        debates are read raise it from the iterator, and the writer then keeps nothing of the
        import. Records the task has no item for, and duplicates, are counted in the
        :class:`FileReport`, never dropped silently.
        """
        raise NotImplementedError


def short(value: Any, limit: int = 60) -> str:
    """``value`` as one short line for a message: JSON-quoted, cut at ``limit`` characters, so
    control characters and markup from the input are shown as text."""
    try:
        text = value if isinstance(value, str) else json.dumps(value, default=str)
    except (ValueError, RecursionError):  # nested past the encoder's depth: not worth showing
        text = f"<{type(value).__name__}>"
    text = collapse(text)
    return json.dumps(text[:limit] + ("..." if len(text) > limit else ""), ensure_ascii=True)


def read_answer(task: Task, text: str | None, item: Any) -> tuple[str | None, tuple[str, ...]]:
    """The answer ``task`` reads from one imported reply and the message's parse notes: none when
    it reads one, else ``"no answer: <why>"`` as a live debate records it. Both come from one
    :meth:`Task.read` (a task provider's own :meth:`Task.extract` included: lm-eval's filters)."""
    if not text:
        return None, ()
    reading = task.read(text, item)
    if reading.answer is not None:
        return reading.answer, ()
    return None, (f"{NO_ANSWER}: {reading.note}",)
