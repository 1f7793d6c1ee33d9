"""``run.json``, the run folder's description: what a process adds to it after the run began.

A resume may change the settings that change no result (the transport, concurrency, timeouts, batch
options, ...: :data:`madeval.settings.config.NOT_RESULT_KEYS`), while ``run.json``'s ``settings`` stay the
first run's. So ``run.json`` also lists its ``sessions``, one per process that ran into the folder,
each with when it started and those settings as it had them (:func:`session_entry`); a reader that
wants the settings the run was last run with takes :func:`latest_settings`.
"""

from __future__ import annotations

import datetime
from pathlib import Path
from typing import Any

from madeval.records.folder import RUN_FILE, read_run_file, write_json_atomically
from madeval.settings.config import NOT_RESULT_KEYS

#: The debate viewer's page in a run folder (``madeval view``), which the leaderboard links.
VIEWER_FILE = "debates.html"


#: ``run.json``'s list of the processes that ran into the folder (see the module's note)
SESSIONS_KEY = "sessions"


def session_entry(settings: dict[str, Any], estimate: dict[str, Any] | None = None,
                  started: str | None = None) -> dict[str, Any]:
    """One process's entry in ``run.json``'s ``sessions``: when it started (UTC, ISO 8601; now unless
    ``started``), its settings a resume may change (from ``settings``, the public settings as
    ``run.json`` keeps them: no secret is among them) and its long-run ``estimate`` when it asked."""
    when = started or datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
    entry = {"started": when, "settings": _changeable(settings)}
    return {**entry, "estimate": estimate} if estimate else entry


def _changeable(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings of ``settings`` a resume may change (they change no result)."""
    return {key: value for key, value in settings.items() if key in NOT_RESULT_KEYS}


def with_session(stored: dict[str, Any], entry: dict[str, Any]) -> list[dict[str, Any]]:
    """``stored``'s sessions with ``entry`` added; a folder written before sessions were kept gets a
    first entry for its first run (start time unknown: None), its settings from ``run.json``'s."""
    sessions = stored.get(SESSIONS_KEY)
    if not isinstance(sessions, list):
        first = stored.get("settings") if isinstance(stored.get("settings"), dict) else {}
        sessions = [{"started": None, "settings": _changeable(first)}]
    return [*sessions, entry]


def latest_settings(run: dict[str, Any]) -> dict[str, Any]:
    """``run.json``'s settings as the last process that ran into the folder had them: the first run's,
    with those a resume may change taken from its last session (see the module's note)."""
    settings = dict(run.get("settings") or {}) if isinstance(run.get("settings"), dict) else {}
    sessions = run.get(SESSIONS_KEY)
    last = sessions[-1] if isinstance(sessions, list) and sessions else None
    if isinstance(last, dict) and isinstance(last.get("settings"), dict):
        settings.update(_changeable(last["settings"]))
    return settings


def note_in_run_file(folder: Path, key: str, value: Any) -> None:
    """Keep ``value`` under ``key`` in the folder's run.json (rewritten atomically, only when it
    changes): ``cached_calls`` (``{"cached": n, "calls": m}``, how many of the recorded calls the
    response cache answered, as the board shows it), a resumed run's ``estimate`` and its ``sessions``
    (:data:`SESSIONS_KEY`)."""
    path = folder / RUN_FILE
    described = read_run_file(path)
    if described.get(key) != value:
        write_json_atomically(path, {**described, key: value})
