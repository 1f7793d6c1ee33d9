"""The run folder's record of submitted batches (``batches.jsonl``), so nothing is paid twice.

A batch's id and the ids of its lines are appended (and synced to disk) as soon as the batch is
created, before anything waits for it. A resumed run reads the file back: a call whose line is in
a batch submitted earlier is answered from that batch (collected when it finishes, or read from
its output file if it already has) instead of being sent again.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

JOURNAL_NAME = "batches.jsonl"


class BatchJournal:
    """Appends submitted batches to ``folder/batches.jsonl``; knows the batches of earlier runs."""

    def __init__(self, folder: Path):
        self.path = Path(folder) / JOURNAL_NAME
        #: custom_id -> the latest batch of an earlier process that holds it (used at most once each).
        self.earlier: dict[str, str] = {}
        if self.path.exists():
            with self.path.open("rb") as journal:
                for raw in journal:
                    try:
                        entry = json.loads(raw)
                        batch, custom_ids = str(entry["batch"]), entry["custom_ids"]
                    except (ValueError, KeyError, TypeError):
                        continue  # a line cut short by a kill: that batch was not recorded
                    for custom_id in custom_ids:
                        self.earlier[str(custom_id)] = batch

    def claim(self, custom_id: str) -> str | None:
        """The earlier batch that holds ``custom_id``, forgotten once claimed (a retry sends it anew)."""
        return self.earlier.pop(custom_id, None)

    def submitted(self, batch_id: str, input_file_id: str, custom_ids: list[str]) -> None:
        """Record a created batch durably, before it is waited for."""
        line = json.dumps({"batch": batch_id, "input_file": input_file_id, "submitted_at": round(time.time(), 3),
                           "custom_ids": custom_ids}) + "\n"
        with self.path.open("a", encoding="utf-8") as journal:
            journal.write(line)
            journal.flush()
            os.fsync(journal.fileno())
