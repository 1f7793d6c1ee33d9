"""A SQLite response cache.

The key is a SHA-256 over the full request (endpoint URL, model, messages, sampling parameters)
and the *scope* that makes repeats distinct: (item, repeat, agent, turn, purpose, re-ask number).
An identical re-run therefore makes no calls, while repeats and re-asks still get fresh samples.
API keys never enter the key or the stored rows.

The database runs in WAL mode with one short transaction per write, so a run killed with SIGKILL
keeps every response it already received.
"""

from __future__ import annotations

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


def request_key(request: dict[str, Any], scope: tuple[Any, ...]) -> str:
    """The cache key of ``request`` (without credentials) within ``scope``."""
    blob = json.dumps([request, list(scope)], sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Stored replies by request key. Safe to share between threads of one process."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(SCHEMA)
        self._db.commit()

    def get(self, key: str) -> tuple[str, int, int] | None:
        """``(text, prompt_tokens, completion_tokens)`` for ``key``, or ``None``."""
        with self._lock:
            row = self._db.execute(
                "SELECT text, prompt_tokens, completion_tokens FROM responses WHERE key = ?", (key,)
            ).fetchone()
        return (row[0], row[1], row[2]) if row else None

    def put(self, key: str, text: str, prompt_tokens: int, completion_tokens: int) -> None:
        """Store a reply (the first stored reply for a key wins)."""
        with self._lock:
            self._db.execute(
                "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?)",
                (key, text, prompt_tokens, completion_tokens),
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()
