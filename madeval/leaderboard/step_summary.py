"""Appending ``leaderboard check --format github``'s Markdown to a CI job summary ($GITHUB_STEP_SUMMARY).

The file is the CI runner's, shared by the steps of a job: it is appended to (never rewritten), in
one ``write(2)`` of the whole text on a descriptor opened with ``O_APPEND``, so two steps writing
at once cannot interleave their summaries. A path that is a folder or not a regular file (a FIFO
would block the check) is refused with one line and exit status 2, before the check runs
(:func:`check_target`) and again on the opened descriptor, as :mod:`.history_file` refuses a
``--history`` path (its :func:`~.history_file.regular_file`). A link is followed: appending writes
through it, it does not replace it.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from madeval.errors import StorageError, UsageError
from madeval.leaderboard.history_file import PATH_ERRORS, regular_file

#: Names the path in the one line a refusal is.
NAMED = "$GITHUB_STEP_SUMMARY"


def check_target(path: Path) -> None:
    """Refuse a summary path that cannot take the text (see the module), in one line."""
    regular_file(path, f"{NAMED} {path}", "summary.md", follow_link=True)
    if not path.parent.is_dir():
        raise UsageError(f"{NAMED} {path}: {path.parent} is not a folder")


def append(path: Path, text: str) -> None:
    """Append ``text`` to the job summary ``path`` in one write (see the module)."""
    data = text.encode("utf-8", "backslashreplace")
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        descriptor = os.open(path, flags, 0o644)
    except OSError as error:
        if error.errno == errno.ENXIO:  # a FIFO nobody reads
            raise UsageError(f"{NAMED} {path} is not a regular file") from None
        if error.errno in PATH_ERRORS or error.errno == errno.ENOENT:
            raise UsageError(f"{NAMED} {path}: cannot write it: {error.strerror}") from None
        raise StorageError(f"cannot write the job summary {path}: {error.strerror or error}") from None
    try:
        if not stat.S_ISREG(os.fstat(descriptor).st_mode):  # swapped for a FIFO or a device since the check
            raise UsageError(f"{NAMED} {path} is not a regular file")
        written = os.write(descriptor, data)
        while written < len(data):  # only on a full disk or a signal; the rest follows at once
            written += os.write(descriptor, data[written:])
    except OSError as error:
        raise StorageError(f"cannot write the job summary {path}: {error.strerror or error}") from None
    finally:
        os.close(descriptor)
