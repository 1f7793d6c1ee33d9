"""A SQLite response cache (opt-in: ``--cache on`` or ``--cache FILE``).

The key is a SHA-256 over the full request (endpoint URL, model, messages, sampling parameters),
what the endpoint reports about the model when it reports anything (its ``/models`` entry, see
:func:`.model_identity.served_identity`), and the *scope* that makes repeats distinct: (item, repeat, agent, turn,
purpose, re-ask number). An identical re-run therefore makes no calls, while repeats and re-asks
still get fresh samples. Each stored reply keeps what the original call cost (tokens and latency)
and the ``system_fingerprint`` it came with: a hit reports the original cost, and the client
treats a hit whose fingerprint differs from the endpoint's current one as a miss. API keys never
enter the key or the stored rows.

Text is stored and keyed the way records are written (:func:`madeval.records.folder.encode_line`): a lone
surrogate, which UTF-8 cannot encode, becomes its JSON escape (``\\ud800``) and reads back as the
same text.

A cache that cannot be opened (a folder, a file that is not SQLite, a folder that cannot be made or
written) is a one-line :class:`madeval.errors.UsageError` naming the file and what to do. Damage
found later (a page that cannot be read, a write that fails) never fails a call: a read error is a
miss and a write error stops writing, each said once on stderr.

The database runs in WAL mode. Writes made on an event loop are committed together, at most
:data:`COMMIT_DELAY_S` after the first of them (a commit per write cost about 50 us of the event
loop's time per call): a run killed with SIGKILL loses at most that last fraction of a second of
responses, which a resumed run asks for again; the records of finished units are never at risk
(they are written by :mod:`madeval.records.folder`). Writes made with no running loop commit at once.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any, NamedTuple

from madeval.errors import UsageError
from madeval.util.json_text import encode_json

# ``replies`` replaced ``responses`` (kept text as is, no cost, no fingerprint): an older cache file
# keeps its old table, unread, and its keys would not match anyway (they lack the model's identity).
SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    text TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_s REAL NOT NULL,
    system_fingerprint TEXT
)
"""

#: The longest a write made on an event loop waits for its commit (seconds).
COMMIT_DELAY_S = 0.05

WHAT_TO_DO = "give --cache another file, or --cache off"


class CachedReply(NamedTuple):
    """A stored reply and what its original call cost."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    system_fingerprint: str | None


def storable(text: str) -> str:
    """``text`` as SQLite can store it: JSON, with lone surrogates as their escapes, as records
    write it (:func:`madeval.util.json_text.encode_json`)."""
    return encode_json(text).decode("utf-8")


def request_key(request: dict[str, Any], scope: tuple[Any, ...]) -> str:
    """The cache key of ``request`` (without credentials) within ``scope``."""
    blob = json.dumps([request, list(scope)], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode("utf-8", "backslashreplace")).hexdigest()


class ResponseCache:
    """Stored replies by request key. Safe to share between threads of one process."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._warned: set[str] = set()
        self._writable = True
        self._db: sqlite3.Connection | None = _open(self.path)
        self._commit_loop: asyncio.AbstractEventLoop | None = None  # the loop a commit is due on

    def get(self, key: str) -> CachedReply | None:
        """The stored reply for ``key``, or ``None`` (also when it cannot be read: said once)."""
        with self._lock:
            if self._db is None:
                return None
            try:
                row = self._db.execute(
                    "SELECT text, prompt_tokens, completion_tokens, latency_s, system_fingerprint "
                    "FROM replies WHERE key = ?", (key,)).fetchone()
                if row is None:
                    return None
                return CachedReply(json.loads(row[0]), int(row[1]), int(row[2]), float(row[3]), row[4])
            except (sqlite3.Error, ValueError, TypeError) as error:
                self._warn("read", f"cannot read it ({error}): those replies are asked for again; "
                           "delete the file to start it afresh")
                return None

    def put(self, key: str, text: str, prompt_tokens: int, completion_tokens: int, latency_s: float = 0.0,
            system_fingerprint: str | None = None, *, replace: bool = False) -> None:
        """Store a reply with its original cost (the first stored reply for a key wins, unless
        ``replace``); see the module text for when it is committed. A failed write is said once
        and ends writing; the call it came from is not affected."""
        with self._lock:
            if self._db is None or not self._writable:
                return
            verb = "INSERT OR REPLACE" if replace else "INSERT OR IGNORE"
            try:
                self._db.execute(f"{verb} INTO replies VALUES (?, ?, ?, ?, ?, ?)",
                                 (key, storable(text), prompt_tokens, completion_tokens, float(latency_s),
                                  system_fingerprint))
            except sqlite3.Error as error:
                self._write_failed(error)
                return
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:  # no event loop in this thread
                self._commit()
                return
            if self._commit_loop is not loop:  # else a commit is already due on this loop
                loop.call_later(COMMIT_DELAY_S, self.commit)
                self._commit_loop = loop

    def commit(self) -> None:
        """Commit the writes not yet committed (nothing once closed)."""
        with self._lock:
            self._commit_loop = None
            self._commit()

    def _commit(self) -> None:
        if self._db is not None and self._writable:
            try:
                self._db.commit()
            except sqlite3.Error as error:
                self._write_failed(error)

    def _write_failed(self, error: sqlite3.Error) -> None:
        self._writable = False
        self._warn("write", f"cannot write it ({error}): no more replies are stored in this run")

    def _warn(self, what: str, message: str) -> None:
        """Say ``message`` about this cache on stderr, once per kind of failure."""
        if what not in self._warned:
            self._warned.add(what)
            print(f"madeval: warning: response cache {self.path}: {message}", file=sys.stderr)

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0]

    def close(self) -> None:
        """Commit what is pending and close the database."""
        with self._lock:
            if self._db is not None:
                self._commit()
                try:
                    self._db.close()
                except sqlite3.Error:  # nothing left to lose: every write was committed or said
                    pass
                self._db = None


def _open(path: Path) -> sqlite3.Connection:
    """The cache database at ``path``, ready; a one-line UsageError naming the file when it
    cannot be (a folder, not SQLite, damaged at its start, a folder that cannot be made or written)."""
    if path.is_dir():
        raise UsageError(f"response cache {path} is a folder: give --cache a file path, or --cache off")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UsageError(f"cannot make the folder of response cache {path} ({error.strerror or error}): "
                         f"set MADEVAL_CACHE_DIR to a writable folder, {WHAT_TO_DO}") from None
    db = None
    try:
        db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(SCHEMA)  # reads the schema page: a file that is not SQLite, or cut short, fails here
        db.commit()
        return db
    except sqlite3.DatabaseError as error:
        if db is not None:
            db.close()
        text = str(error)
        if isinstance(error, sqlite3.OperationalError) and ("readonly" in text or "unable to open" in text):
            raise UsageError(f"cannot write response cache {path} ({text}): {WHAT_TO_DO}") from None
        raise UsageError(f"response cache {path} is not a usable SQLite file ({text}): delete it, "
                         f"or {WHAT_TO_DO}") from None
