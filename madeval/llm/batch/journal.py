"""The run folder's record of submitted batches (``batches.jsonl``), so nothing is paid twice.

Two lines per batch, each synced to disk before the next step: ``{"input_file", "custom_ids"}``
once the request file is uploaded (before the batch is created), and ``{"batch", "input_file",
"window"}`` once the batch exists (before anything waits for it); ``window`` is the completion
window it was created with, which a resumed run waits for it (journals written before it was
recorded lack it: the run's own window holds then). A resumed run reads the file back: a call
whose line is in a batch submitted earlier is answered from that batch (collected when it
finishes, or read from its output file if it already has) instead of being sent again; a line
whose upload was journaled but whose batch was not (a kill between the two) is looked up by its
input file among the endpoint's batches, and sent again only once the endpoint's list proves no batch
was created over it (a list that cannot be read is asked again; see
:meth:`madeval.llm.batch.transport.BatchTransport._look_up`).

The journal is a run folder's file like ``records.jsonl``: a link at its name is refused in one
line, never read or appended through (:mod:`madeval.util.safe_files`).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import NamedTuple

from madeval.llm.batch.settings import window_seconds
from madeval.util.safe_files import appending, open_regular

JOURNAL_NAME = "batches.jsonl"


class Earlier(NamedTuple):
    """An earlier process's upload: its input file, the batch created over it (None: not journaled)
    and that batch's completion window (None: not journaled)."""

    input_file: str
    batch: str | None
    window: str | None


class BatchJournal:
    """Appends to ``folder/batches.jsonl``; knows the batches and uploads of earlier runs."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / JOURNAL_NAME
        #: custom_id -> the latest earlier upload holding it.
        self.earlier: dict[str, Earlier] = {}
        #: input file -> the custom_ids of its lines (until :meth:`sent_in` is asked).
        self._uploads: dict[str, list[str]] = {}
        if not os.path.lexists(self.path):
            return
        uploads = self._uploads
        batches: dict[str, tuple[str, str | None]] = {}
        with open_regular(self.path) as journal:  # a link is refused, never read through
            for raw in journal:
                try:
                    entry = json.loads(raw)
                    input_file = str(entry["input_file"])
                    if "batch" in entry:
                        batches[input_file] = (str(entry["batch"]), _window(entry.get("window")))
                    else:
                        uploads[input_file] = [str(custom_id) for custom_id in entry["custom_ids"]]
                except (ValueError, KeyError, TypeError):
                    continue  # a line cut short by a kill: that step was not recorded
        for input_file, custom_ids in uploads.items():
            for custom_id in custom_ids:
                self.earlier[custom_id] = Earlier(input_file, *batches.get(input_file, (None, None)))

    def claim(self, custom_id: str) -> Earlier | None:
        """The earlier upload holding ``custom_id``, forgotten once claimed (a retry of the line sends
        it anew)."""
        return self.earlier.pop(custom_id, None)

    def sent_in(self, input_file: str) -> frozenset[str]:
        """The ``custom_id`` s of an earlier upload's lines (asked once, when its batch is collected)."""
        return frozenset(self._uploads.pop(input_file, ()))

    def uploaded(self, input_file: str, custom_ids: list[str]) -> None:
        """Record an uploaded request file, before a batch is created over it."""
        self._append({"input_file": input_file, "custom_ids": custom_ids, "at": round(time.time(), 3)})

    def submitted(self, batch_id: str, input_file: str, window: str) -> None:
        """Record a created batch and its completion window, before it is waited for."""
        self._append({"batch": batch_id, "input_file": input_file, "window": window, "at": round(time.time(), 3)})

    def refused(self, step: str, reason: str, wait: float) -> None:
        """Record a refused upload or batch creation, tried again after ``wait`` seconds (what a
        researcher reads when a round took longer; resume reads no such line)."""
        self._append({"refused": step, "reason": reason, "retry_in_s": round(wait, 3), "at": round(time.time(), 3)})

    def _append(self, entry: dict) -> None:
        with appending(self.path) as journal:  # a link is refused, never appended through
            journal.write(json.dumps(entry) + "\n")
            journal.flush()
            os.fsync(journal.fileno())


def _window(value: object) -> str | None:
    """A journaled window, or None when it is missing or no duration (the run's own window holds)."""
    if not isinstance(value, str):
        return None
    try:
        window_seconds(value)
    except ValueError:
        return None
    return value
