"""Appending an entry to a CI history file (``leaderboard check --history FILE``), whole or not at all.

The file is the user's: it may be missing (it is created, with its folder), or hold the entries of
earlier checks. An append reads it, checks that it is a madeval history, and writes its old
content and the new line to a temporary file that is renamed over it
(:func:`madeval.util.safe_files.write_bytes_atomically`): a reader, a check killed half-way or a full
disk never leaves a torn line, and a failed write leaves the file as it was. Two checks appending
to one file at once (two CI jobs on one runner, a shared folder) take turns under an ``flock(2)``
on the file's folder, so neither entry is lost. A torn last line left by an older madeval stays a
broken line, which :func:`madeval.leaderboard.history.read` skips and counts.

Refused with one line (:class:`UsageError`, exit status 2), before the check writes anything
(:func:`check_target`) and again under the lock: a path that is a folder, a symbolic link or not a
regular file (a FIFO would block the check), a folder that is not a folder or cannot be written,
a file over :data:`MAX_BYTES`, and a non-empty file that holds no madeval history entry (another
tool's file, or garbage: appending would make it neither).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import stat
import time
from pathlib import Path
from typing import Any, Iterator

from madeval.errors import StorageError, UsageError
from madeval.leaderboard.history import FORMAT, parse
from madeval.util.safe_files import write_bytes_atomically

#: The largest history file appended to (bytes): an entry is a few kilobytes, so years of checks.
MAX_BYTES = 64 << 20
#: How long an append waits for another one to the same folder (seconds).
LOCK_WAIT_S = 60.0
#: Errors of a write that are about the path given, not about the disk: bad input (status 2).
PATH_ERRORS = {errno.EACCES, errno.EPERM, errno.EROFS, errno.EISDIR, errno.ENOTDIR, errno.ENAMETOOLONG}


def check_target(path: Path) -> None:
    """Refuse a ``--history`` path that cannot take an entry (see the module), in one line."""
    existing(path)
    folder = path.parent
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--history {path}: {folder} is not a folder")
    if folder.is_dir() and not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"--history {path}: cannot write in {folder} (permission denied)")


def append(path: Path, line: dict[str, Any]) -> None:
    """Append ``line`` to the history file ``path`` as one whole JSON line, atomically (see the module)."""
    data = (json.dumps(line, sort_keys=True) + "\n").encode("utf-8")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageError(f"--history {path}: cannot make its folder: {error.strerror}") from None
    with _turn(path.parent):
        old = existing(path)
        if old and not old.endswith(b"\n"):
            old += b"\n"
        try:
            write_bytes_atomically(path, old + data)
        except OSError as error:
            if error.errno in PATH_ERRORS:
                raise UsageError(f"--history {path}: cannot write it: {error.strerror}") from None
            raise StorageError(f"cannot write the history {path}: {error.strerror or error}; it is as it "
                               "was") from None


def existing(path: Path) -> bytes:
    """The content of the history file ``path`` (empty when there is none), refused in one line when
    it is not a regular file of madeval history entries (see the module)."""
    found = regular_file(path, f"--history {path}", "history.jsonl")
    if found is None:
        return b""
    if found.st_size > MAX_BYTES:
        raise UsageError(f"--history {path} is larger than {MAX_BYTES >> 20} MB; start a new history file")
    try:
        with open(path, "rb") as handle:
            content = handle.read(MAX_BYTES + 1)
    except OSError as error:
        raise UsageError(f"--history {path}: cannot read it: {error.strerror}") from None
    if content.strip() and not parse(content)[0]:
        raise UsageError(f"--history {path} holds no madeval history entry ({FORMAT}); it is not a history "
                         "file of 'leaderboard check', so nothing was appended")
    return content


def regular_file(path: Path, named: str, example: str, follow_link: bool = False) -> os.stat_result | None:
    """``path``'s status when it is a regular file, None when there is none; refused in one line
    (:class:`UsageError`, ``named`` says which option) when it is a folder (``example``: a file name
    to suggest in it), a symbolic link (unless
    ``follow_link``: an append writes through one, a rename would replace it) or not a regular
    file (a FIFO would block the writer)."""
    try:
        found = os.stat(path) if follow_link else os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        raise UsageError(f"{named}: {path.parent} is not a folder") from None
    except OSError as error:
        raise UsageError(f"{named}: {error.strerror}") from None
    if stat.S_ISDIR(found.st_mode):
        raise UsageError(f"{named} is a folder; give a file (e.g. {path / example})")
    if stat.S_ISLNK(found.st_mode):
        raise UsageError(f"{named} is a symbolic link; give the file it points to")
    if not stat.S_ISREG(found.st_mode):
        raise UsageError(f"{named} is not a regular file")
    return found


@contextlib.contextmanager
def _turn(folder: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``folder`` (waiting up to :data:`LOCK_WAIT_S`)."""
    try:
        descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    except OSError as error:
        raise UsageError(f"cannot open the folder {folder}: {error.strerror}") from None
    try:
        deadline = time.monotonic() + LOCK_WAIT_S
        while True:
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise StorageError(f"another process has been appending to a history in {folder} for "
                                       f"{LOCK_WAIT_S:.0f} s; try again") from None
                time.sleep(0.02)
        yield
    finally:
        os.close(descriptor)  # drops the lock
