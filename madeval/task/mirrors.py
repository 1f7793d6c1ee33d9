"""Rows of a local JSON-lines mirror, exactly as ``datasets.load_dataset("json", ...)`` gives them.

Why the :mod:`json` module and not ``datasets``: importing ``datasets`` (pyarrow, pandas) costs
about 1.2 s of CPU before a built-in task's first call, for files of a few MB that the standard
library parses in a fraction of that. The rows must still be the ones ``datasets`` gives, so this
module reproduces what its JSON builder (pyarrow's JSON reader, then ``Dataset.to_list``) does
to plain JSON lines:

- every row has every column, in the order the columns first appear; a column a row lacks is
  ``None`` (so is a field a nested object lacks);
- a column (or nested field, or list element) holding both ints and floats holds floats;
- nested objects come back with their fields in first-appearance order.

What it does not reproduce, it refuses with :class:`MirrorNotPlain`, and the caller falls back to
``datasets``: a file that is a JSON array, a line that is not an object, values of conflicting
kinds in one column (``datasets`` then stores them as JSON text), nested objects whose keys differ
from row to row or that are empty (likewise), a key named twice in one object, strings pyarrow
would read as timestamps (exactly those: other text opening with a date keeps this reader), integers
beyond 64 bits or non-finite numbers, and a later part of a file over ``datasets``' 10 MiB chunk
changing the columns inferred from the first chunk. ``tests/task/test_mirror_rows.py`` checks every
mirror in the shared data folder against ``datasets`` itself.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from madeval.errors import UsageError

# datasets' JSON builder reads 10 MiB at a time and infers the features from the first chunk.
DATASETS_CHUNK_BYTES = 10 << 20
# A line longer than this is not a dataset row we can vouch for: datasets reads it instead.
MAX_LINE_BYTES = 64 << 20
INT64 = (-(1 << 63), (1 << 63) - 1)
# Deeper values are refused (datasets reads them): the recursive walks below stay far from
# Python's recursion limit whatever the caller's stack. No dataset row nests anywhere near this.
MAX_DEPTH = 64
# pyarrow's JSON reader (26.x) turns a string into a timestamp[s] when its ISO 8601 parser reads
# the whole string: a real date YYYY-MM-DD (years 0000-9999, Gregorian leap years), optionally
# followed by T or one space and HH, HH:MM or HH:MM:SS (no fractions, no leap second), optionally
# followed by Z or an offset +HH, +HHMM or +HH:MM (hours < 24, minutes < 60). Measured against
# pyarrow by tests/task/test_mirror_rows.py (a list of forms and a seeded random search); other
# strings, such as a question opening with a date, stay text and keep the fast path.
_TIMESTAMP_FORM = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})"
    r"(?:[T ]([0-9]{2})(?::([0-9]{2})(?::([0-9]{2}))?)?(?:Z|[+-]([0-9]{2})(?::?([0-9]{2}))?)?)?"
)
_DAYS_IN_MONTH = (31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)

# datasets (4.x) reads a file whose columns look like an agent trace (Claude Code, Codex, Hermes,
# Droid) as traces, not rows: such files go to datasets (the kinds of the columns are not checked).
AGENT_TRACE_COLUMNS = ({"type", "message"}, {"type", "payload"}, {"type", "id", "version", "cwd"},
                       {"id", "source", "model", "system_prompt", "messages"})

# Kinds of a value: "null", "bool", "int", "float", "str", ("list", element kind),
# ("struct", {field: kind}) with fields in first-appearance order.
Kind = Any
NULL = "null"


class MirrorNotPlain(ValueError):
    """The file is not plain JSON lines this reader gives exactly as ``datasets`` does."""


class MirrorBroken(UsageError):
    """A line of the mirror is not JSON at all (``datasets`` cannot read it either): one clear line
    naming the file and line, instead of a reader's traceback."""


def read_mirror(path: Path) -> list[dict[str, Any]]:
    """Every row of the mirror at ``path``, as ``datasets.load_dataset("json", ...).to_list()``.

    Raises :class:`MirrorNotPlain` when the file needs ``datasets``' own handling and
    :class:`MirrorBroken` when a line is not JSON."""
    docs, columns = _parse(path, keep=True)
    conform = _conformer(columns)
    return [conform(doc) for doc in docs]


def mirror_rows(path: Path) -> Iterator[dict[str, Any]]:
    """The rows of :func:`read_mirror` one at a time, holding one row in memory (the file is read
    twice: once for the columns, once for the rows). Raises :class:`MirrorNotPlain` before the
    first row when the file needs ``datasets``."""
    _, columns = _parse(path, keep=False)
    conform = _conformer(columns)
    return (conform(doc) for doc in _docs(path))


def _docs(path: Path) -> Iterator[dict[str, Any]]:
    """The parsed object of each non-blank line."""
    return (doc for _, doc in _offsets_and_docs(path))


def _offsets_and_docs(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Each non-blank line's parsed object with the byte offset where the line starts; a leading
    byte-order mark is skipped, as datasets does. Lines are read in binary, at most
    ``MAX_LINE_BYTES`` at a time, so one huge line cannot exhaust memory."""
    offset = 0
    with open(path, "rb") as lines:
        for number, line in enumerate(iter(lambda: lines.readline(MAX_LINE_BYTES + 1), b""), 1):
            start, offset = offset, offset + len(line)
            if len(line) > MAX_LINE_BYTES:
                raise MirrorNotPlain(f"{path}:{number}: line longer than {MAX_LINE_BYTES} bytes")
            if number == 1 and line.startswith(b"\xef\xbb\xbf"):
                line = line[3:]
            if not line.strip():
                continue
            try:
                doc = _DECODER.decode(line.decode(json.detect_encoding(line), "surrogatepass"))  # as json.loads
            except (json.JSONDecodeError, UnicodeDecodeError) as error:
                raise MirrorBroken(f"mirror {path}, line {number}: not JSON ({error})") from None
            except RecursionError:
                raise MirrorNotPlain(f"{path}:{number}: nested too deep for the json module") from None
            if not isinstance(doc, dict):
                raise MirrorNotPlain(f"{path}:{number}: a line is not a JSON object")
            yield start, doc


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A parsed JSON object; one naming a key twice is refused. The json module would keep the
    last value, while pyarrow refuses a row that names a column twice (datasets then fails on the
    file) and, inside a nested object, datasets gives neither value as such: datasets decides."""
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise MirrorNotPlain(f"a key named twice in one object ({_twice(pairs)!r})")
    return obj


def _twice(pairs: list[tuple[str, Any]]) -> str:
    """The first key of ``pairs`` that appears again (for the refusal's message)."""
    seen: set[str] = set()
    for key, _ in pairs:
        if key in seen:
            return key[:40]
        seen.add(key)
    return ""


def _refuse_constant(name: str) -> float:
    raise MirrorNotPlain(f"non-finite number {name}")


# One decoder for every line (json.loads with options would build a new one per line).
_DECODER = json.JSONDecoder(parse_constant=_refuse_constant, object_pairs_hook=_object)


def _parse(path: Path, keep: bool) -> tuple[list[dict[str, Any]], dict[str, Kind]]:
    """The rows (when ``keep``) and the merged columns of the file; refuses what is not plain."""
    with open(path, "rb") as head:
        if head.read(64).lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"["):
            raise MirrorNotPlain(f"{path}: a JSON array, not JSON lines")
    docs: list[dict[str, Any]] = []
    columns: dict[str, Kind] = {}
    first_chunk: dict[str, Kind] | None = None
    for start, doc in _offsets_and_docs(path):
        if first_chunk is None and start >= DATASETS_CHUNK_BYTES:  # datasets' second chunk begins here
            first_chunk = dict(columns)
        for column, value in doc.items():
            kind, known = _kind(value), columns.get(column)
            if kind is not known:  # most rows repeat the kinds known (a constant kind is the same object)
                columns[column] = _merge(NULL if known is None else known, kind, column)
        if keep:
            docs.append(doc)
    if any(marker <= columns.keys() for marker in AGENT_TRACE_COLUMNS):
        raise MirrorNotPlain(f"{path}: columns of an agent trace, which datasets reads its own way")
    if first_chunk is not None and first_chunk != columns:
        raise MirrorNotPlain(f"{path}: columns change after the first {DATASETS_CHUNK_BYTES} bytes")
    return docs, columns


#: The kind of a list of strings (the common column beside scalars: a row's options).
_STRINGS = ("list", "str")


def _kind(value: Any, depth: int = 0) -> Kind:
    if depth > MAX_DEPTH:
        raise MirrorNotPlain(f"values nested more than {MAX_DEPTH} deep")
    # the common kinds first, by exact type (a parsed value is of exactly one of JSON's types)
    kind = type(value)
    if kind is str:
        return _text_kind(value)
    if kind is list and value and depth < MAX_DEPTH and all(type(item) is str for item in value):
        for item in value:
            _text_kind(item)
        return _STRINGS
    if value is None:
        return NULL
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        if not INT64[0] <= value <= INT64[1]:
            raise MirrorNotPlain(f"integer {value} beyond 64 bits")
        return "int"
    if isinstance(value, float):
        if not math.isfinite(value):
            raise MirrorNotPlain("non-finite number")
        return "float"
    if isinstance(value, list):
        element: Kind = NULL
        for item in value:
            element = _merge(element, _kind(item, depth + 1), "[]")
        return ("list", element)
    if not value:
        raise MirrorNotPlain("an empty object (datasets stores it as JSON text)")
    return ("struct", {field: _kind(item, depth + 1) for field, item in value.items()})


def _text_kind(text: str) -> Kind:
    """``"str"``, unless pyarrow would read ``text`` as a timestamp (:class:`MirrorNotPlain`)."""
    if _reads_as_timestamp(text):
        raise MirrorNotPlain(f"string {text[:40]!r} reads as a timestamp in pyarrow")
    return "str"


def _reads_as_timestamp(text: str) -> bool:
    """True when pyarrow's JSON reader would turn ``text`` into a timestamp (see ``_TIMESTAMP_FORM``)."""
    form = _TIMESTAMP_FORM.fullmatch(text) if text[:1].isdigit() else None
    if form is None:
        return False
    year, month, day, hour, minute, second, zone_hours, zone_minutes = (
        int(part) if part else 0 for part in form.groups())
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    return (1 <= month <= 12 and 1 <= day <= _DAYS_IN_MONTH[month - 1] + (leap and month == 2)
            and hour < 24 and minute < 60 and second < 60 and zone_hours < 24 and zone_minutes < 60)


def _merge(old: Kind, new: Kind, where: str) -> Kind:
    """The kind holding values of both kinds, as pyarrow's type inference widens them."""
    if old == NULL:
        return new
    if new == NULL or old == new:  # equal structs may list their fields in another order: keep the first
        return old
    if isinstance(old, str) and isinstance(new, str) and {old, new} == {"int", "float"}:
        return "float"
    if isinstance(old, tuple) and isinstance(new, tuple) and old[0] == new[0]:
        if old[0] == "list":
            return ("list", _merge(old[1], new[1], where))
        if set(old[1]) != set(new[1]):
            raise MirrorNotPlain(f"{where}: objects with different fields (datasets stores them as JSON text)")
        return ("struct", {field: _merge(kind, new[1].get(field, NULL), where) for field, kind in old[1].items()})
    raise MirrorNotPlain(f"{where}: values of kinds {_name(old)} and {_name(new)} in one column")


def _name(kind: Kind) -> str:
    return kind if isinstance(kind, str) else kind[0]


def _conform(doc: dict[str, Any], columns: dict[str, Kind]) -> dict[str, Any]:
    return {column: _value(doc.get(column), kind) for column, kind in columns.items()}


def _conformer(columns: dict[str, Kind]):
    """:func:`_conform` for ``columns``, or, when no column's values change (no float column that
    may hold ints, no object fields to order or fill), a function that gives a row holding every
    column in order as it is (a parsed row is used once) and conforms the others."""
    if any(_changes(kind) for kind in columns.values()):
        return lambda doc: _conform(doc, columns)
    order = list(columns)
    return lambda doc: doc if list(doc) == order else _conform(doc, columns)


def _changes(kind: Kind) -> bool:
    """Whether :func:`_value` may give something other than the value itself for ``kind``."""
    if kind == "float":
        return True
    return isinstance(kind, tuple) and (kind[0] == "struct" or _changes(kind[1]))


def _value(value: Any, kind: Kind) -> Any:
    if value is None:
        return None
    if kind == "float":
        return float(value)
    if isinstance(kind, tuple):
        if kind[0] == "list":
            return [_value(item, kind[1]) for item in value]
        return {field: _value(value.get(field), sub) for field, sub in kind[1].items()}
    return value
