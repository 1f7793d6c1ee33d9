"""What the plugin's two on-disk caches (the task index and the prepared items) share: writing a
cache file whole or not at all, and saying once per file and process that one was ignored."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, Callable

#: What reading a hostile or foreign cache file may raise; each means "not a file of this madeval".
NOT_OURS = (ValueError, KeyError, TypeError, AttributeError, RecursionError)

_WARNED: set[str] = set()


def warn_ignored(path: Path, what: str, why: str, redo: str) -> None:
    """Say once per file and process that the cache file ``path`` (``what``) was ignored and why; a
    later read of the same file in the process is silent."""
    if str(path) not in _WARNED:
        _WARNED.add(str(path))
        print(f"madeval: warning: ignored the lm-eval {what} {path} ({why}); {redo}", file=sys.stderr)


def write_atomically(path: Path, text: str) -> bool:
    """Write ``text`` to ``path`` through a temporary file and a rename, so a reader never sees half
    a cache file; False (nothing left behind) when it cannot be written, since a cache is optional."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=path.parent, prefix=path.name,
                                         suffix=".tmp", delete=False) as handle:
            handle.write(text)
        os.replace(handle.name, path)
    except OSError:
        try:
            os.unlink(handle.name)
        except (OSError, UnboundLocalError):
            pass
        return False
    return True


def read_stored(path: Path, fmt: Any, key: str, warn: Callable[[Path, str], None], what: str) -> Any | None:
    """The JSON stored in ``path`` when it is of format ``fmt`` and for ``key``; None when the file is
    missing or for another key (silently), or unreadable, not JSON or of another format (``warn``ed,
    ``what`` naming the kind of file). The caller checks the fields it reads."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        warn(path, type(error).__name__)
        return None
    try:
        data = json.loads(text)
        if data["format"] != fmt:
            raise ValueError("another format")
        if data["key"] != key:
            return None  # another key with the same prefix: built again, and stored over it
    except NOT_OURS as error:
        warn(path, f"not {what} of this madeval: {type(error).__name__}")
        return None
    return data
