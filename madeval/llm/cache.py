"""A SQLite response cache.

The key is a SHA-256 over the full request (endpoint URL, model, messages, sampling parameters)
and the *scope* that makes repeats distinct: (item, repeat, agent, turn, purpose, re-ask number).
An identical re-run therefore makes no calls, while repeats and re-asks still get fresh samples.
API keys never enter the key or the stored rows.

The database runs in WAL mode. Writes made on an event loop are committed together, at most
:data:`COMMIT_DELAY_S` after the first of them (a commit per write cost about 50 us of the event
loop's time per call): a run killed with SIGKILL loses at most that last fraction of a second of
responses, which a resumed run asks for again; the records of finished units are never at risk
(they are written by :mod:`madeval.records`). Writes made with no running loop commit at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL
)
"""

#: The longest a write made on an event loop waits for its commit (seconds).
COMMIT_DELAY_S = 0.05


def request_key(request: dict[str, Any], scope: tuple[Any, ...]) -> str:
    """The cache key of ``request`` (without credentials) within ``scope``."""
    blob = json.dumps([request, list(scope)], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Stored replies by request key. Safe to share between threads of one process."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(SCHEMA)
        self._db.commit()
        self._commit_loop: asyncio.AbstractEventLoop | None = None  # the loop a commit is due on

    def get(self, key: str) -> tuple[str, int, int] | None:
        """``(text, prompt_tokens, completion_tokens)`` for ``key``, or ``None``."""
        with self._lock:
            row = self._db.execute(
                "SELECT text, prompt_tokens, completion_tokens FROM responses WHERE key = ?", (key,)
            ).fetchone()
        return (row[0], row[1], row[2]) if row else None

    def put(self, key: str, text: str, prompt_tokens: int, completion_tokens: int) -> None:
        """Store a reply (the first stored reply for a key wins); see the module text for when it
        is committed."""
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?)",
                (key, text, prompt_tokens, completion_tokens),
            )
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no event loop in this thread
                self._db.commit()
                return
            if self._commit_loop is not loop:  # else a commit is already due on this loop
                loop.call_later(COMMIT_DELAY_S, self.commit)
                self._commit_loop = loop

    def commit(self) -> None:
        """Commit the writes not yet committed (nothing once closed)."""
        with self._lock:
            self._commit_loop = None
            if self._db is not None:
                self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        """Commit what is pending and close the database."""
        with self._lock:
            if self._db is not None:
                self._db.commit()
                self._db.close()
                self._db = None
