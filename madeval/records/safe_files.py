"""Opening a run folder's files without trusting what is already in the folder.

A run folder may sit in a shared, world-writable place (the system temporary folder), where
another local user can put a symbolic link named ``records.jsonl`` or ``leaderboard.csv`` before
the run starts. Following it would make the run write (or cut) whatever file the link points to.
So every file of a run folder is opened with ``O_NOFOLLOW`` (a link is refused with one line), and
every output that is rewritten is written to a new temporary file (``O_EXCL``: never an existing
one) and renamed over its name: a rename replaces a link, it does not write through it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from pathlib import Path

from madeval.errors import StorageError, UsageError

#: Flags that keep ``os.open`` from following a link at the last component of a path.
NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


def refuse_link(path: Path) -> None:
    """A one-line UsageError when ``path`` is a symbolic link or not a regular file (a fifo,
    a device); nothing when it is a regular file or missing."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise StorageError(f"cannot read {path}: {error.strerror}") from None
    if stat.S_ISLNK(mode):
        raise UsageError(f"{path} is a symbolic link; madeval does not follow links in a run folder: "
                         "remove it or choose another --output-path")
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise UsageError(f"{path} is not a regular file; remove it or choose another --output-path")


def refuse_linked_folder(path: Path) -> None:
    """A one-line UsageError when ``path`` (a folder inside a run folder, e.g. ``charts``) is a
    symbolic link: files renamed into it would land wherever it points."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise UsageError(f"{path} is a symbolic link; madeval does not follow links in a run folder: "
                             "remove it or choose another --output-path")


def open_descriptor(path: Path, flags: int, mode: int = 0o644) -> int:
    """``os.open(path, flags | O_NOFOLLOW)``; a link is a one-line UsageError, any other failure
    an OSError as ``os.open`` raises it."""
    try:
        return os.open(path, flags | NOFOLLOW, mode)
    except OSError as error:
        if error.errno == errno.ELOOP:
            refuse_link(path)  # raises for a link; ELOOP from a path with too many links goes on
        raise


def open_binary(path: Path, mode: str = "rb"):
    """A file object for reading (``rb``) or updating (``rb+``) ``path`` without following a link."""
    flags = os.O_RDONLY if mode == "rb" else os.O_RDWR
    return os.fdopen(open_descriptor(path, flags), mode)


def write_bytes_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a new temporary file in the same folder and a rename.

    The temporary file is created with ``O_EXCL`` (never an existing file or link), and the rename
    replaces whatever ``path`` was, a link included, without writing through it. A failed write
    leaves ``path`` as it was, removes the temporary file and raises the OSError (named after
    ``path``) for the caller to word (:func:`madeval.records.folder.writing`). A regular file replaced
    keeps its permission bits (a history kept private stays so); a new one is 0644."""
    path = Path(path)
    mode = kept_mode(path)
    try:
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            os.fchmod(handle.fileno(), mode)  # mkstemp makes it 0600
            handle.write(data)
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise OSError(error.errno, error.strerror, str(path)) from None


def kept_mode(path: Path) -> int:
    """The read, write and run bits of the regular file ``path``; 0644 when there is none (or a link: the
    rename replaces the link, not what it points to)."""
    try:
        found = os.lstat(path)
    except OSError:
        return 0o644
    return found.st_mode & 0o777 if stat.S_ISREG(found.st_mode) else 0o644  # no set-id bits


def write_text_atomically(path: Path, text: str) -> None:
    """:func:`write_bytes_atomically` of ``text`` in UTF-8 (lone surrogates as ``\\udXXX`` escapes)."""
    write_bytes_atomically(path, text.encode("utf-8", "backslashreplace"))
