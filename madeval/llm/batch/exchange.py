"""File exchange for offline engines: ``--base-url file:///FOLDER --transport batch``.

Each round's request file is written to FOLDER as ``madeval-<stamp>-<n>.jsonl`` (atomically: it
appears complete), and its answers are read from ``madeval-<stamp>-<n>.output.jsonl`` once that
appears there, in the OpenAI batch line format, as ``vllm run-batch -i IN -o OUT`` writes it. No
server is needed: a loop on the cluster answers each request file (see docs/scale.md). An output file
is read once it answers every line, or once it has not grown for ``STABLE_LOOKS`` looks (what is
missing is then retried in a later file).

The folder is shared with whatever answers the files, so nothing in it is trusted: an output file
is read a line at a time (a line over the reply bound is never held whole) and only when it is a
regular file (a link is refused in one line: a link to ``/dev/zero`` would be read without end),
and a request file is written as a new file and renamed (:mod:`madeval.util.safe_files`).
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import stat
import time
from collections import Counter
from pathlib import Path
from typing import Collection
from urllib.parse import unquote, urlsplit

from madeval.errors import UsageError
from madeval.llm.batch.lines import LINE_ENVELOPE, file_lines, note_odd_lines, read_file_outcomes
from madeval.llm.batch.settings import BatchSettings
from madeval.llm.wire import ClientSideError, Reply
from madeval.util.safe_files import refuse_link, replacing

REQUEST_SUFFIX = ".jsonl"
OUTPUT_SUFFIX = ".output.jsonl"
#: Looks at an output file that does not grow before it is read though incomplete.
STABLE_LOOKS = 10
#: What a refusal of a file in the exchange folder asks the user to do.
EXCHANGE_HINT = "remove it from the exchange folder (output files must be regular files)"


def exchange_folder(base_url: str) -> Path | None:
    """The folder of a ``file://`` base URL (None for any other URL)."""
    parts = urlsplit(base_url)
    if parts.scheme != "file":
        return None
    return Path(unquote(parts.path))


class FileExchange:
    """Request files written to a folder, output files awaited there."""

    #: An output file is awaited for the batch's window and no longer (no engine expires it for us).
    grace_s = 0.0

    def __init__(self, folder: Path, max_reply: int):
        self.folder = folder
        self._max_reply = max_reply
        self._names = itertools.count(1)
        self._stamp = time.strftime("%Y%m%d-%H%M%S")
        self._ids: dict[str, frozenset[str]] = {}  # the custom_ids of each request file written
        self.settings = BatchSettings()

    async def create(self, name: str) -> str:
        """The request file is the batch: its name."""
        return name

    async def find(self, name: str, known: Collection[str] = ()) -> str | None:
        """``name`` when its request file was written (a kill may come before the rename) and is
        not among ``known``."""
        return name if name not in known and (self.folder / (name + REQUEST_SUFFIX)).exists() else None

    async def upload(self, content: bytes, custom_ids: list[str]) -> str:
        """Write a request file (whole, then renamed) of the lines ``custom_ids``; its name without suffix."""
        name = f"madeval-{self._stamp}-{os.getpid()}-{next(self._names)}"
        path = self.folder / (name + REQUEST_SUFFIX)
        await asyncio.to_thread(_write, path, content)
        self._ids[name] = frozenset(custom_ids)
        return name

    async def collect(self, name: str) -> dict[str, Reply | Exception]:
        """Wait for ``name``'s output file; the outcome of each line of the request file it answers
        (a line naming another ``custom_id`` is ignored, one warning line per file)."""
        output = self.folder / (name + OUTPUT_SUFFIX)
        expected = self._ids.get(name)
        if expected is None:  # a request file of an earlier process: read its ids once
            expected = await asyncio.to_thread(_request_ids, self.folder / (name + REQUEST_SUFFIX), self._max_reply)
        pause, last_size, stable = min(self.settings.poll_s, 1.0), -1, 0
        while True:
            size = _size(output)
            if size >= 0:  # read a line at a time, never through a link (see _size)
                problems: Counter = Counter()
                outcomes = await asyncio.to_thread(read_file_outcomes, output, self._max_reply, "completed", problems)
                answered = {custom_id: outcome for custom_id, outcome in outcomes.items() if custom_id in expected}
                stable = stable + 1 if size == last_size else 0
                if len(answered) >= len(expected) or stable >= STABLE_LOOKS:
                    self._ids.pop(name, None)
                    problems["unknown"] = len(outcomes) - len(answered)
                    note_odd_lines(str(output), problems)
                    return answered
            last_size = size
            await asyncio.sleep(pause)
            pause = min(pause * 2, self.settings.poll_s)

    async def read(self, outcomes: dict[str, Reply | Exception], custom_ids: Collection[str],
                   window: str) -> dict[str, Reply | Exception]:
        """The outcomes :meth:`collect` read (it reads the output file to know it is complete)."""
        return outcomes

    def unanswered(self, name: str) -> str:
        """What is missing when ``name`` is given up (one clause of the warning line)."""
        return f"no output file {self.folder / (name + OUTPUT_SUFFIX)} appeared"

    async def models(self) -> list[str]:
        """No model list (give ``--model``); refuses a folder that is missing or not writable."""
        if not self.folder.is_dir() or not os.access(self.folder, os.W_OK | os.X_OK):
            raise ClientSideError(f"the exchange folder {self.folder} is not a writable folder")
        return []

    async def model_list_body(self) -> bytes:
        """An empty model list (give ``--model``), after the checks of :meth:`models`."""
        await self.models()
        return b'{"object": "list", "data": []}'

    async def close(self) -> None:
        """Nothing to close."""


def _request_ids(path: Path, max_reply: int) -> frozenset[str]:
    """The ``custom_id`` of each line of a request file (none when it is missing), read a line at
    a time (a line is at most a request: bounded like an output line)."""
    if not os.path.lexists(path):
        return frozenset()
    ids = set()
    for raw in file_lines(path, max_reply + LINE_ENVELOPE):
        try:
            custom_id = json.loads(raw)["custom_id"]
        except (ValueError, KeyError, TypeError, RecursionError):
            continue
        if isinstance(custom_id, str):
            ids.add(custom_id)
    return frozenset(ids)


def _size(path: Path) -> int:
    """The size of the output file at ``path``, -1 while there is none. The exchange folder is
    shared with the engine's side: a link or anything but a regular file at an output's name (a
    link to ``/dev/zero`` would be read without end) is a one-line UsageError, never read."""
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return -1
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror}") from None
    if not stat.S_ISREG(found.st_mode):
        refuse_link(path, EXCHANGE_HINT)
    return found.st_size


def _write(path: Path, content: bytes) -> None:
    """Write a request file whole, synced, through a new temporary file renamed over ``path`` (a
    link planted at the name is replaced, never written through)."""
    with replacing(path) as handle:
        handle.write(content)
        handle.flush()
        os.fsync(handle.fileno())
