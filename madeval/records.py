"""The run folder: ``run.json`` (what was run), ``records.jsonl`` (one line per finished unit) and
``errors.jsonl`` (units that failed for good; they are retried on resume).

Records are appended and flushed as units finish, one line each, never rewriting the file. A run
killed mid-write leaves at most one partial last line, which :class:`RecordSink` cuts off when the
run resumes; finished units are then skipped.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterator

from .errors import UsageError

RUN_FILE = "run.json"
RECORDS_FILE = "records.jsonl"
ERRORS_FILE = "errors.jsonl"


def read_records(folder: str | Path) -> Iterator[dict[str, Any]]:
    """Every complete record of a run folder, in the order it was written."""
    path = Path(folder) / RECORDS_FILE
    if not path.exists():
        return
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.endswith("\n"):
                yield json.loads(line)


def write_json_atomically(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` through a temporary file and a rename."""
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, sort_keys=True, default=str)
        handle.write("\n")
    os.replace(temporary, path)


class RecordSink:
    """Appends records to a run folder and knows which units are finished."""

    def __init__(self, folder: str | Path, description: dict[str, Any], fingerprint: str):
        self.folder = Path(folder)
        run_file = self.folder / RUN_FILE
        if run_file.exists():
            stored = json.loads(run_file.read_text(encoding="utf-8"))
            if stored.get("fingerprint") != fingerprint:
                raise UsageError(
                    f"{self.folder} holds a different run (other configurations, tasks, items or "
                    "seed); choose another --output-path"
                )
        self.folder.mkdir(parents=True, exist_ok=True)
        if not run_file.exists():
            write_json_atomically(run_file, {**description, "fingerprint": fingerprint})
        self._cut_partial_line(self.folder / RECORDS_FILE)
        self.finished = {record["unit"]["key"] for record in read_records(self.folder)}
        self._records = open(self.folder / RECORDS_FILE, "a", encoding="utf-8")
        self._errors = open(self.folder / ERRORS_FILE, "a", encoding="utf-8")

    @staticmethod
    def _cut_partial_line(path: Path) -> None:
        if not path.exists():
            return
        with open(path, "rb+") as handle:
            data = handle.read()
            end = data.rfind(b"\n") + 1
            if end != len(data):
                handle.truncate(end)

    def write(self, record: dict[str, Any]) -> None:
        """Append one finished unit's record and flush it to the operating system."""
        self._records.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        self._records.flush()
        self.finished.add(record["unit"]["key"])

    def write_error(self, unit: dict[str, Any], error: str) -> None:
        """Note a unit that failed for good (it is not finished and will be retried on resume)."""
        self._errors.write(json.dumps({"unit": unit, "error": error}, ensure_ascii=False) + "\n")
        self._errors.flush()

    def close(self) -> None:
        """Close both files."""
        self._records.close()
        self._errors.close()
