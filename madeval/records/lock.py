"""One writer per run folder: an operating-system lock on ``run.lock`` inside the folder.

A run and ``madeval rescore`` hold the lock while they write the folder; a second process that
tries is refused at once with one line naming the folder and the holder's process id, before it
writes anything. The lock is ``flock(2)`` on an open file, so the kernel drops it when the holder
exits however it ends (SIGKILL included): a stale lock cannot block a resume. The file itself
stays; its content (the last holder's pid) is informational only.

Within one process the lock is re-entrant (a run that rescores, or tests that run twice in a
row), counted per folder.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import threading
import time
from pathlib import Path
from typing import Iterator

from madeval.errors import StorageError, UsageError
from madeval.util.safe_files import open_descriptor

LOCK_FILE = "run.lock"

_held: dict[str, tuple[int, int]] = {}  # real folder path -> (file descriptor, holds)
_guard = threading.Lock()


def acquire(folder: str | Path) -> None:
    """Take the write lock of ``folder`` (created if missing); a one-line UsageError when another
    process holds it, a StorageError when the folder or its lock file cannot be created."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise StorageError(f"cannot create run folder {folder}: {error.strerror}") from None
    key = os.path.realpath(folder)
    with _guard:
        if key in _held:
            descriptor, holds = _held[key]
            _held[key] = (descriptor, holds + 1)
            return
        path = folder / LOCK_FILE
        try:
            descriptor = open_descriptor(path, os.O_RDWR | os.O_CREAT)  # a link is refused, not followed
        except OSError as error:
            raise StorageError(f"cannot write to run folder {folder}: {error.strerror}") from None
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as error:
            holder = _holder(descriptor)
            os.close(descriptor)
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise StorageError(f"cannot lock run folder {folder}: {error.strerror}") from None
            by = f" (pid {holder})" if holder else ""
            raise UsageError(
                f"{folder} is in use by another madeval process{by}; wait for it to finish "
                "or choose another --output-path"
            ) from None
        _note_holder(descriptor)
        _held[key] = (descriptor, 1)


def release(folder: str | Path) -> None:
    """Give back one hold of ``folder``'s lock; the last one unlocks it."""
    key = os.path.realpath(folder)
    with _guard:
        if key not in _held:
            return
        descriptor, holds = _held[key]
        if holds > 1:
            _held[key] = (descriptor, holds - 1)
            return
        del _held[key]
        os.close(descriptor)  # closing the only descriptor drops the flock


def abandoned(folder: str | Path) -> bool:
    """Whether ``folder`` has a lock file that no process holds (its holder ended, however: the
    kernel dropped the lock). False while a process holds it, when it has no lock file, and when its
    lock file is a link or cannot be opened (not ours to judge)."""
    try:
        descriptor = open_descriptor(Path(folder) / LOCK_FILE, os.O_RDWR)  # never made here, never through a link
    except (OSError, UsageError):
        return False
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)  # another descriptor: held by this process too fails
        return True
    except OSError:
        return False
    finally:
        os.close(descriptor)  # and the lock taken to look with it


@contextlib.contextmanager
def hold(folder: str | Path) -> Iterator[None]:
    """``with hold(folder):`` the folder's write lock for the duration of the block."""
    acquire(folder)
    try:
        yield
    finally:
        release(folder)


def _note_holder(descriptor: int) -> None:
    """Write our pid into the lock file (best effort: a full disk must not stop a run here)."""
    with contextlib.suppress(OSError):
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)


def _holder(descriptor: int) -> int | None:
    """The pid the current holder wrote, if it is readable.

    The holder writes its pid just after taking the lock, so a process refused in between finds
    the file empty: it looks again for up to about 0.2 s before giving up on naming the holder.
    """
    for _ in range(10):
        try:
            text = os.pread(descriptor, 32, 0).decode("ascii", "replace").strip()
        except OSError:
            return None
        if text.isdigit():
            return int(text)
        time.sleep(0.02)
    return None
