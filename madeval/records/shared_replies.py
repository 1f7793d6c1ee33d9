"""The run folder's journal of replies made for sharing (``shared.jsonl``): a resumed run asks none again.

With shared calls on (:mod:`madeval.llm.shared`), each reply made is appended as one line as it comes
back: ``{"group", "key", "by", "reply"}`` (the group of calls that can be identical, the request's
key, the unit key of the debate that made it, and the call as :class:`madeval.llm.client.Completion`
holds it). A debate of another configuration that is not finished when the run stops (killed,
or a unit that failed) would otherwise ask again what a finished one already paid for: a resumed run
reads back the lines of the groups it still has units in and shares them like replies made in this
process. A line cut short by a kill, or one that is not such a line, is skipped: its request is
made again.

The file holds only what a resume can use. Reading it back rewrites it with the lines of the groups
still open, and the end of a run rewrites it with the lines of the groups whose units did not all
finish (removing it when every unit did). Lines are written to the operating system at once, not
synced: a power cut may lose the last ones, which a resumed run asks again.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path
from typing import Iterator

from madeval.llm.client import Completion
from madeval.llm.shared import Made
from madeval.records.folder import SHARED_FILE, LineAppender, writing
from madeval.util.json_text import encode_json
from madeval.util.safe_files import open_binary, write_bytes_atomically

#: The fields of a stored reply and the types each may hold (a reused call is never stored).
REPLY_FIELDS: dict[str, tuple[type, ...]] = {
    "text": (str,), "prompt_tokens": (int,), "completion_tokens": (int,), "latency_s": (int, float),
    "attempts": (int,), "cached": (bool,), "errors": (list,), "system_fingerprint": (str, type(None)),
    "cached_prompt_tokens": (int, type(None)), "transport": (str, type(None)),
}


def journal_line(group: str, key: str, made: Made) -> bytes:
    """One line of the journal: ``made``'s reply in ``group`` under ``key``."""
    reply = {name: value for name, value in asdict(made.completion).items() if name in REPLY_FIELDS}
    return encode_json({"group": group, "key": key, "by": made.by, "reply": reply}) + b"\n"


def read_line(line: bytes) -> tuple[str, str, Made] | None:
    """A journal line's (group, key, reply made); None for a line that is not one."""
    try:
        entry = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past the parser's depth
        return None
    if not isinstance(entry, dict) or not all(isinstance(entry.get(name), str) for name in ("group", "key", "by")):
        return None
    reply = entry.get("reply")
    if not isinstance(reply, dict) or set(reply) != set(REPLY_FIELDS):
        return None
    if any(not isinstance(reply[name], kinds) or (kinds == (int,) and isinstance(reply[name], bool))
           for name, kinds in REPLY_FIELDS.items()):
        return None
    if not all(isinstance(error, str) for error in reply["errors"]):
        return None
    return entry["group"], entry["key"], Made(Completion(**reply), entry["by"])


class SharedJournal:
    """Appends the replies made to ``folder/shared.jsonl``; reads back and trims those of earlier processes."""

    def __init__(self, folder: str | Path):
        self.path = Path(folder) / SHARED_FILE
        self._appender: LineAppender | None = None
        self._read = 0  # lines in the file as last read

    def resume(self, groups: set[str]) -> list[tuple[str, str, Made]]:
        """The replies an earlier process made in ``groups`` (the groups with units left); the file
        keeps only their lines from now on. Opens the file for :meth:`append`."""
        kept = list(self._lines(groups))
        self._rewrite([line for line, _ in kept], unless_all=True)
        self._appender = LineAppender(self.path)
        return [entry for _, entry in kept]

    def append(self, group: str, key: str, made: Made) -> None:
        """Add one reply made (a failed write ends the run with one line, as a record's does)."""
        if self._appender is None:
            self._appender = LineAppender(self.path)
        self._appender.append(journal_line(group, key, made))

    def close(self, groups: set[str]) -> None:
        """Close the file, keeping only the lines of ``groups`` (those with units not finished)."""
        if self._appender is not None:
            self._appender.close()
            self._appender = None
        self._rewrite([line for line, _ in self._lines(groups)])

    def _lines(self, groups: set[str]) -> Iterator[tuple[bytes, tuple[str, str, Made]]]:
        """The whole lines of ``groups``, with what each holds (:attr:`_read` counts every line)."""
        self._read = 0
        if not os.path.lexists(self.path):
            return
        with open_binary(self.path) as handle:  # a link is refused, not followed
            for line in handle:
                self._read += 1
                entry = read_line(line) if line.endswith(b"\n") else None
                if entry is not None and entry[0] in groups:
                    yield line, entry

    def _rewrite(self, lines: list[bytes], unless_all: bool = False) -> None:
        """The file with ``lines`` only (written anew and renamed over it), or no file when none;
        ``unless_all``: left as it is when ``lines`` are all its lines."""
        if unless_all and lines and len(lines) == self._read:
            return
        with writing(f"the journal of shared replies {self.path}"):
            if lines:
                write_bytes_atomically(self.path, b"".join(lines))
            elif os.path.lexists(self.path):
                os.unlink(self.path)

