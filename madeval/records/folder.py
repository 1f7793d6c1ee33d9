"""The run folder: ``run.json`` (what was run), ``records.jsonl`` (one line per finished unit) and
``errors.jsonl`` (units that failed for good; they are retried on resume).

Records are appended as units finish, one whole line each, never rewriting the file. One process
writes a folder at a time (:mod:`madeval.records.lock`). A write that fails (disk full, a file too
large, a read-only folder) is cut back to the last complete line and ends the run with one line
(:class:`StorageError`), so the same command resumes; a run killed mid-write leaves at most one
partial last line, which :class:`RecordSink` cuts off when the run resumes. Finished units are
then skipped.

Reading never trusts the file: a line that is not a record (two writers interleaved, a network
file system) is skipped, a second record of a unit already read is ignored (the first complete
one counts), and both are counted in a :class:`ReadReport` that the run summary and the
leaderboard show.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from madeval.errors import StorageError, UsageError
from madeval.llm.batch.journal import JOURNAL_NAME
from madeval.records import lock as folder_lock
from madeval.util.json_text import encode_json
from madeval.util.safe_files import open_binary, open_descriptor, refuse_link, write_text_atomically

RUN_FILE = "run.json"
RECORDS_FILE = "records.jsonl"
ERRORS_FILE = "errors.jsonl"
#: The replies a run made and other configurations' debates may still reuse (:mod:`.shared_replies`).
SHARED_FILE = "shared.jsonl"
#: Files only madeval writes in a run folder, besides run.json: a folder holding one of them without
#: a run.json is not a run of ours (another tool's records.jsonl), and is refused rather than cut.
OWN_FILES = (RECORDS_FILE, ERRORS_FILE, SHARED_FILE, "rescored.jsonl", "leaderboard.md", "leaderboard.csv",
             "comparisons.csv", "leaderboard.json", "leaderboard.html", JOURNAL_NAME)


@dataclass
class ReadReport:
    """What reading record files left out: broken lines (skipped) and duplicate records."""

    #: where each broken line was, as ``file:line`` (a line that is not a JSON record with a unit key)
    broken: list[str] = field(default_factory=list)
    #: records of a unit already read (the first complete record of a unit is the one kept)
    duplicates: int = 0

    def __bool__(self) -> bool:
        return bool(self.broken or self.duplicates)

    def summary(self) -> str:
        """One phrase for the user, e.g. ``1 broken line skipped (records.jsonl:3), 2 duplicate
        records ignored``; empty when nothing was left out."""
        parts = []
        if self.broken:
            shown = ", ".join(self.broken[:3]) + (", ..." if len(self.broken) > 3 else "")
            parts.append(f"{_count(len(self.broken), 'broken line')} skipped ({shown})")
        if self.duplicates:
            parts.append(f"{_count(self.duplicates, 'duplicate record')} ignored")
        return ", ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """For ``leaderboard.json``: the counts and where the broken lines were."""
        return {"broken_lines": len(self.broken), "duplicates": self.duplicates, "broken_at": self.broken}


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def read_jsonl_records(path: str | Path, report: ReadReport | None = None,
                       seen: set[str] | None = None,
                       keep: Callable[[dict[str, Any]], bool] | None = None) -> Iterator[dict[str, Any]]:
    """The records of a JSONL file, each unit once, in the order written.

    A line without its newline at the end of the file is a write in progress or cut short (left
    for :class:`RecordSink` to cut); any other line that is not a JSON object with a
    ``unit.key`` is skipped, and a record whose key is in ``seen`` is ignored; both are counted
    in ``report``. ``seen`` collects the keys read (pass one set to read several files as one).
    With ``keep``, a record it refuses counts as a broken line too (e.g. :func:`complete_record`).
    """
    path = Path(path)
    report = ReadReport() if report is None else report
    seen = set() if seen is None else seen
    if not os.path.lexists(path):
        return
    with open_binary(path) as handle:  # a link is refused, not followed
        for number, line in enumerate(handle, 1):
            if not line.endswith(b"\n"):
                return
            record, key = _parse(line)
            if key is None or (keep is not None and not keep(record)):
                report.broken.append(f"{path.name}:{number}")
                continue
            if key in seen:
                report.duplicates += 1
                continue
            seen.add(key)
            yield record


def _parse(line: bytes) -> tuple[Any, str | None]:
    """A line's record and unit key; the key is None when the line is not a record."""
    try:
        record = json.loads(line)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, or nested past the parser's depth
        return None, None
    unit = record.get("unit") if isinstance(record, dict) else None
    key = unit.get("key") if isinstance(unit, dict) else None
    return record, key if isinstance(key, str) else None


#: The most turns a record may say its debate took (madeval's own debates stop at ``max_turns``;
#: MALLM's at 7 by default): a larger count is a damaged or hostile line, not a debate.
MAX_RECORD_TURNS = 10_000
#: Numbers a record holds are below this in size (2**53: every integer a float holds exactly).
MAX_RECORD_NUMBER = 2**53


def _number(value: Any) -> bool:
    """A finite number of a sane size (``Infinity`` and ``NaN``, which Python's JSON reader reads,
    are not; nor is an integer of hundreds of digits, which no float holds)."""
    if isinstance(value, float):
        return math.isfinite(value) and abs(value) < MAX_RECORD_NUMBER
    return isinstance(value, int) and abs(value) < MAX_RECORD_NUMBER


def _counted(value: Any, most: int = MAX_RECORD_NUMBER) -> bool:
    return type(value) is int and 0 <= value <= most


def complete_record(record: dict[str, Any]) -> bool:
    """Whether ``record`` holds what a leaderboard takes from a record (the unit's parts, the
    scores, turns, calls, tokens, the decision), each of its type and in its range (scores finite;
    turns from 0 to :data:`MAX_RECORD_TURNS`; calls, tokens and seconds not negative): for a
    leaderboard, a line with a unit key and less is as broken as one that is not JSON (``keep`` of
    :func:`read_jsonl_records`)."""
    unit, metrics, tokens = record["unit"], record.get("metrics"), record.get("tokens")
    return (all(isinstance(unit.get(part), str) for part in ("config", "task", "item"))
            and type(unit.get("repeat")) is int
            and isinstance(metrics, dict) and all(_number(score) for score in metrics.values())
            and isinstance(tokens, dict) and _number(tokens.get("total")) and tokens["total"] >= 0
            and _counted(record.get("turns"), MAX_RECORD_TURNS) and _counted(record.get("calls"))
            and isinstance(record.get("decision_success"), bool) and isinstance(record.get("parse_failure"), bool)
            and all(_number(record[name]) and record[name] >= 0 for name in ("wall_s", "llm_s")
                    if record.get(name) is not None)
            and isinstance(record.get("configuration", {}), dict))


def read_records(folder: str | Path, report: ReadReport | None = None,
                 keep: Callable[[dict[str, Any]], bool] | None = None) -> Iterator[dict[str, Any]]:
    """Every complete record of a run folder, one per unit, in the order it was written
    (see :func:`read_jsonl_records`; ``report`` counts what was left out)."""
    return read_jsonl_records(Path(folder) / RECORDS_FILE, report, keep=keep)


@contextlib.contextmanager
def writing(what: str, hint: str = "") -> Iterator[None]:
    """Turn a failed write inside the block into a one-line :class:`StorageError` about ``what``."""
    tail = f"; {hint}" if hint else ""
    try:
        yield
    except StorageError as error:  # from a write that already says what failed
        raise StorageError(f"{error}{tail}") from None
    except OSError as error:
        named = error.filename and str(error.filename) not in what
        where = f"{what} ({error.filename})" if named else what
        raise StorageError(f"cannot write {where}: {error.strerror or error}{tail}") from None


def write_json_atomically(path: Path, data: Any) -> None:
    """Write ``data`` as JSON to ``path`` through a temporary file and a rename; a failed write
    leaves the old file as it was and raises a one-line :class:`StorageError` (see
    :func:`madeval.util.safe_files.write_bytes_atomically`: a link at ``path`` is replaced, never
    written through)."""
    try:
        write_text_atomically(path, json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
    except OSError as error:
        raise StorageError(f"cannot write {path}: {error.strerror or error}") from None


def encode_line(record: dict[str, Any]) -> bytes:
    """One JSONL line: the record as :func:`encode_json` writes it."""
    return encode_json(record) + b"\n"


class LineAppender:
    """Appends whole lines to a file: a write that fails is cut back, so the file still ends with
    a complete line, and raises a one-line :class:`StorageError`."""

    def __init__(self, path: Path):
        self.path = path
        try:
            # O_NOFOLLOW: a link named like our file is refused, never appended to
            self._descriptor: int | None = open_descriptor(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        except OSError as error:
            raise StorageError(f"cannot write {path}: {error.strerror}") from None

    def append(self, data: bytes) -> None:
        """Write ``data`` (whole lines) at the end of the file, to the operating system at once."""
        assert self._descriptor is not None, "appender is closed"
        start = os.fstat(self._descriptor).st_size  # the folder lock makes us the only writer
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._descriptor, view):]
        except OSError as error:
            with contextlib.suppress(OSError):
                os.ftruncate(self._descriptor, start)
            raise StorageError(f"cannot write {self.path}: {error.strerror}") from None

    def close(self) -> None:
        """Close the file (again: nothing)."""
        if self._descriptor is not None:
            os.close(self._descriptor)
            self._descriptor = None


class RecordSink:
    """Appends records to a run folder and knows which units are finished.

    It holds the folder's write lock from creation to :meth:`close`: a second process is refused
    with one line before anything is written."""

    def __init__(self, folder: str | Path, description: dict[str, Any], fingerprint: str,
                 older: Callable[[dict[str, Any]], bool] | None = None,
                 refusal: Callable[[Path, dict[str, Any], dict[str, Any]], str] | None = None):
        """``older`` accepts a stored run.json of an older madeval as this run; ``refusal`` words
        the line that refuses a folder holding another run (from the folder, what it holds and what
        this run is; :func:`madeval.run.resume.different_run` names what differs)."""
        self.folder = Path(folder)
        #: broken lines and duplicates found in ``records.jsonl`` when the sink opened it
        self.report = ReadReport()
        self.finished: set[str] = set()
        self._records: LineAppender | None = None
        self._errors: LineAppender | None = None
        refuse_foreign_folder(self.folder)  # before the lock file is made in someone else's folder
        folder_lock.acquire(self.folder)
        self._locked = True
        try:
            self._open(description, fingerprint, older, refusal)
        except BaseException:
            self.close()
            raise

    def _open(self, description: dict[str, Any], fingerprint: str,
              older: Callable[[dict[str, Any]], bool] | None,
              refusal: Callable[[Path, dict[str, Any], dict[str, Any]], str] | None) -> None:
        refuse_foreign_folder(self.folder)  # again, under the lock
        for name in (RUN_FILE, *OWN_FILES):
            refuse_link(self.folder / name)
        run_file = self.folder / RUN_FILE
        if run_file.exists():  # a resume: of this run only (``older`` accepts a folder of an older madeval)
            stored = read_run_file(run_file)
            if stored.get("fingerprint") != fingerprint and not (older is not None and older(stored)):
                now = {**description, "fingerprint": fingerprint}
                raise UsageError(refusal(self.folder, stored, now) if refusal is not None else
                                 f"{self.folder} holds a different run; choose another --output-path")
        else:
            write_json_atomically(run_file, {**description, "fingerprint": fingerprint})
        cut_partial_line(self.folder / RECORDS_FILE)
        self.finished = {record["unit"]["key"] for record in read_records(self.folder, self.report)}
        self._records = LineAppender(self.folder / RECORDS_FILE)
        self._errors = LineAppender(self.folder / ERRORS_FILE)

    def write(self, record: dict[str, Any]) -> None:
        """Append one finished unit's record; it counts as finished once the line is written."""
        self._append(self._records, encode_line(record))
        self.finished.add(record["unit"]["key"])

    def write_error(self, unit: dict[str, Any], error: str) -> None:
        """Note a unit that failed for good (it is not finished and will be retried on resume)."""
        self._append(self._errors, encode_line({"unit": unit, "error": error}))

    def _append(self, appender: LineAppender, data: bytes) -> None:
        try:
            appender.append(data)
        except StorageError as error:
            raise StorageError(
                f"{error}; the {len(self.finished)} units recorded so far are kept: "
                "run the same command again to finish the run"
            ) from None

    def close(self) -> None:
        """Close both files and give back the folder's lock (again: nothing)."""
        for appender in (self._records, self._errors):
            if appender is not None:
                appender.close()
        self._records = self._errors = None
        if self._locked:
            self._locked = False
            folder_lock.release(self.folder)


def refuse_foreign_folder(folder: Path) -> None:
    """A one-line UsageError when ``folder`` holds one of madeval's file names (``records.jsonl``,
    ``leaderboard.csv``, ...) but no ``run.json``: those files are another tool's, not a run to
    resume, and are left as they are."""
    if not folder.is_dir() or os.path.lexists(folder / RUN_FILE):
        return
    found = [name for name in OWN_FILES if os.path.lexists(folder / name)]
    if found:
        raise UsageError(f"{folder} holds {found[0]} but no {RUN_FILE}: it is not a madeval run folder; "
                         "choose another --output-path")


def read_run_file(path: Path) -> dict[str, Any]:
    """``run.json``; one that is not a JSON object is a one-line UsageError (a link too)."""
    try:
        with open_binary(path) as handle:
            stored = json.loads(handle.read().decode("utf-8"))
    except (ValueError, RecursionError) as error:
        raise UsageError(f"{path} is not valid JSON ({error}); choose another --output-path") from None
    if not isinstance(stored, dict):
        raise UsageError(f"{path} is not a madeval run description; choose another --output-path")
    return stored


def cut_partial_line(path: Path, chunk: int = 1 << 16) -> None:
    """Cut ``path`` back to its last complete line (a write cut short by a kill or a crash)."""
    if not os.path.lexists(path):
        return
    with writing(str(path)), open_binary(path, "rb+") as handle:
        size = handle.seek(0, os.SEEK_END)
        end = size
        while end > 0:  # from the end backwards, a chunk at a time: the file may be large
            start = max(0, end - chunk)
            handle.seek(start)
            newline = handle.read(end - start).rfind(b"\n")
            if newline >= 0:
                end = start + newline + 1
                break
            end = start
        if end != size:
            handle.truncate(end)
