"""Opening, writing and replacing files without trusting what is already in their folder.

A run folder (or a page's folder, an exchange folder) may sit in a shared, world-writable place
(the system temporary folder), where another local user can put a symbolic link named
``records.jsonl`` or ``debates.html.tmp`` before madeval writes there. Following it would make
madeval write (or cut, or read whole) whatever file the link points to. So every file madeval
writes or reads in such a folder goes through this module, the one way to do it:

* a file is opened with ``O_NOFOLLOW`` (a link is refused with one line) and, for reading, only
  when it is a regular file (a fifo would block, ``/dev/zero`` never ends): :func:`open_descriptor`,
  :func:`open_binary`, :func:`open_regular`, :func:`appending`;
* an output that is written whole is written to a new temporary file (``mkstemp``: ``O_EXCL``,
  never an existing file or link, under a name nobody can guess) and renamed over its name when
  complete: a rename replaces a link, it does not write through it, and a failure leaves the old
  file as it was: :func:`replacing`, :func:`replacing_path` (for a library that writes by name),
  :func:`write_bytes_atomically`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from pathlib import Path
from typing import IO, Iterator

from madeval.errors import StorageError, UsageError

#: Flags that keep ``os.open`` from following a link at the last component of a path.
NOFOLLOW = os.O_NOFOLLOW | os.O_CLOEXEC


#: What a refusal of a run folder's file asks the user to do.
RUN_FOLDER_HINT = "remove it or choose another --output-path"


def refuse_link(path: Path, hint: str = RUN_FOLDER_HINT) -> None:
    """A one-line UsageError when ``path`` is a symbolic link or not a regular file (a fifo,
    a device); nothing when it is a regular file or missing. ``hint`` says what to do."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    except OSError as error:
        raise StorageError(f"cannot read {path}: {error.strerror}") from None
    if stat.S_ISLNK(mode):
        raise UsageError(f"{path} is a symbolic link; madeval does not follow links: {hint}")
    if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
        raise UsageError(f"{path} is not a regular file; {hint}")


def refuse_linked_folder(path: Path) -> None:
    """A one-line UsageError when ``path`` (a folder inside a run folder, e.g. ``charts``) is a
    symbolic link: files renamed into it would land wherever it points."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise UsageError(f"{path} is a symbolic link; madeval does not follow links: {RUN_FOLDER_HINT}")


def open_descriptor(path: Path, flags: int, mode: int = 0o644, hint: str = RUN_FOLDER_HINT) -> int:
    """``os.open(path, flags | O_NOFOLLOW)``; a link is a one-line UsageError (``hint``: what to
    do), any other failure an OSError as ``os.open`` raises it."""
    try:
        return os.open(path, flags | NOFOLLOW, mode)
    except OSError as error:
        if error.errno == errno.ELOOP:
            refuse_link(path, hint)  # raises for a link; ELOOP from a path with too many links goes on
        raise


def open_binary(path: Path, mode: str = "rb"):
    """A file object for reading (``rb``) or updating (``rb+``) ``path`` without following a link."""
    flags = os.O_RDONLY if mode == "rb" else os.O_RDWR
    return os.fdopen(open_descriptor(path, flags), mode)


def open_regular(path: Path, hint: str = RUN_FOLDER_HINT) -> IO[bytes]:
    """``path`` opened for reading bytes when it is a regular file: a link, a fifo or a device (a link
    to ``/dev/zero`` would never end) is a one-line UsageError (``hint``: what to do); a missing or
    unreadable file is the OSError ``os.open`` raises. The file is opened without blocking (a fifo
    would wait for a writer) and checked on the open descriptor, so it cannot be swapped in between."""
    descriptor = open_descriptor(path, os.O_RDONLY | os.O_NONBLOCK, hint=hint)
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):
            raise UsageError(f"{path} is not a regular file; {hint}")
        os.set_blocking(descriptor, True)
        return os.fdopen(descriptor, "rb")
    except BaseException:
        os.close(descriptor)
        raise


@contextlib.contextmanager
def appending(path: Path, hint: str = RUN_FOLDER_HINT) -> Iterator[IO[str]]:
    """``with appending(path) as text:`` ``path`` opened to append text (made when missing),
    never through a link (a one-line UsageError, ``hint``: what to do)."""
    descriptor = open_descriptor(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, hint=hint)
    with os.fdopen(descriptor, "a", encoding="utf-8") as handle:
        yield handle


@contextlib.contextmanager
def replacing(path: Path, mode: str = "wb") -> Iterator[IO]:
    """``with replacing(path) as handle:`` write ``path`` whole through a new temporary file in its
    folder, renamed over ``path`` when the block ends without an error.

    ``mode`` is ``"wb"`` or ``"w"`` (UTF-8 text). The temporary file is made by ``mkstemp``
    (``O_EXCL``: never an existing file or link, under a name nobody can plant in advance), and the
    rename replaces whatever ``path`` was, a link included, without writing through it. An error in
    the block or in the write leaves ``path`` as it was and removes the temporary file; an OSError
    is raised named after ``path``, for the caller to word (:func:`madeval.records.folder.writing`).
    A regular file replaced keeps its permission bits (a history kept private stays so); a new one is
    0644."""
    path = Path(path)
    file_mode = kept_mode(path)
    try:
        descriptor, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from None
    try:
        text = {"encoding": "utf-8"} if "b" not in mode else {}
        with os.fdopen(descriptor, mode, **text) as handle:
            os.fchmod(handle.fileno(), file_mode)  # mkstemp makes it 0600
            yield handle
        os.replace(temporary, path)
    except OSError as error:
        _remove(temporary)
        raise OSError(error.errno, error.strerror, str(path)) from None
    except BaseException:
        _remove(temporary)
        raise


@contextlib.contextmanager
def replacing_path(path: Path) -> Iterator[Path]:
    """``with replacing_path(path) as temporary:`` for a library that writes a file by its name:
    ``temporary`` (named like ``path``, so a suffix that picks a format still does) lies in a new
    private folder beside ``path`` (``mkdtemp``: mode 0700, nobody else can put anything in it),
    and is renamed over ``path`` when the block ends without an error. The folder is removed in any
    case; errors are raised as :func:`replacing` raises them."""
    path = Path(path)
    try:
        folder = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"))
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from None
    try:
        temporary = folder / path.name
        yield temporary
        os.chmod(temporary, kept_mode(path))
        os.replace(temporary, path)
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _remove(temporary: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(temporary)


def write_bytes_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a new temporary file in the same folder and a rename
    (:func:`replacing`): a link at ``path`` is replaced, never written through, and a failed write
    leaves ``path`` as it was and raises the OSError named after ``path``."""
    with replacing(path) as handle:
        handle.write(data)


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
