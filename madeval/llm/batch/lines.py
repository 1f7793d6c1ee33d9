"""Reading a batch's output and error files (the OpenAI batch line format, which ``vllm run-batch``
also writes): each line's reply, or the error its call raises."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any, Container, Iterable, Iterator

from madeval.llm.wire import FatalError, Reply, RetryableError, read_reply, short, status_error
from madeval.util.safe_files import open_regular

#: Where a request line sends its body.
CHAT_URL = "/v1/chat/completions"
#: A line of an output file may hold this much besides its reply's body (ids, status, error).
LINE_ENVELOPE = 64 << 10
#: What is kept of a line over its bound: enough to find its ``custom_id``.
CUT_HEAD = 4096
_CUSTOM_ID = re.compile(rb'"custom_id"\s*:\s*"([^"\\]{1,256})"')


class CutLine(bytes):
    """The first :data:`CUT_HEAD` bytes of a file's line over its bound (the rest was not read)."""


def file_lines(path: Path, limit: int) -> Iterator[bytes]:
    """Each line of the file at ``path``, read with at most ``limit`` bytes of it in memory: a line
    over ``limit`` is a :class:`CutLine` (its head), the rest of it skipped. A link or anything but a
    regular file at ``path`` is a one-line UsageError (:func:`madeval.util.safe_files.open_regular`)."""
    with open_regular(Path(path), "remove it") as lines:
        while line := lines.readline(limit + 1):
            if len(line) <= limit or line.endswith(b"\n"):
                yield line
                continue
            head = CutLine(line[:CUT_HEAD])
            del line
            while (rest := lines.readline(1 << 20)) and not rest.endswith(b"\n"):
                pass
            yield head


def read_file_outcomes(path: Path, max_reply: int, status: str, problems: Counter | None = None,
                       expected: Container[str] | None = None) -> dict[str, Reply | Exception]:
    """:func:`read_outcomes` of the output or error file at ``path``, read line by line: a line
    over ``max_reply`` plus :data:`LINE_ENVELOPE` bytes is never held whole (its call fails as a
    reply over ``max_reply`` when its head names its ``custom_id``; else it is counted in
    ``problems["cut"]`` and its call, missing, is retried)."""
    return read_outcomes(file_lines(path, max_reply + LINE_ENVELOPE), max_reply, status, problems, expected)


def read_outcomes(content: bytes | Iterable[bytes], max_reply: int, status: str, problems: Counter | None = None,
                  expected: Container[str] | None = None) -> dict[str, Reply | Exception]:
    """Each line's outcome in an output or error file (its bytes, or its lines): its reply, or the
    error to raise.

    Lines are untrusted: one that is not a JSON object with a ``custom_id`` is skipped (its call is
    then missing) and counted in ``problems["bad"]`` (a blank line is not counted); a body over
    ``max_reply`` bytes fails its call without retry; a ``custom_id`` repeated in the file keeps its
    first line (counted in ``problems["repeated"]``: which of two answers to one request is right
    cannot be told, and the first is what a reader of the file sees first). With ``expected`` (the
    ``custom_id`` s sent), a line naming another is counted in ``problems["unknown"]`` and not kept,
    so a file of strangers' lines costs no memory."""
    outcomes: dict[str, Reply | Exception] = {}
    problems = problems if problems is not None else Counter()
    for raw in content.splitlines() if isinstance(content, bytes) else content:
        if isinstance(raw, CutLine):
            found = _CUSTOM_ID.search(raw)
            if found is None:
                problems["cut"] += 1
                continue
            custom_id = found.group(1).decode("utf-8", "replace")
            if expected is not None and custom_id not in expected:
                problems["unknown"] += 1
                continue
            outcomes.setdefault(custom_id, _too_large(max_reply))
            continue
        try:
            entry = json.loads(raw)
            custom_id = entry["custom_id"]
            response, error = entry.get("response"), entry.get("error")
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            if raw.strip():
                problems["bad"] += 1
            continue
        if not isinstance(custom_id, str):
            problems["bad"] += 1
            continue
        if expected is not None and custom_id not in expected:
            problems["unknown"] += 1
            continue
        if custom_id in outcomes:
            problems["repeated"] += 1
            continue
        outcomes[custom_id] = _outcome(response, error, max_reply, status)
    return outcomes


def _outcome(response: Any, error: Any, max_reply: int, status: str) -> Reply | Exception:
    if isinstance(response, dict) and isinstance(response.get("status_code"), int):
        body = response.get("body")
        raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        if len(raw) > max_reply:
            return _too_large(max_reply)
        if response["status_code"] == 200:
            try:
                return read_reply(raw)
            except RetryableError as malformed:
                return malformed
        return status_error(response["status_code"], {}, raw)
    code = error.get("code") if isinstance(error, dict) else None
    return RetryableError(f"batch line {short(str(code or status), 60)}")


def _too_large(max_reply: int) -> FatalError:
    return FatalError(f"reply over {max_reply / (1 << 20):g} MiB (--max-response-mb)")


def note_odd_lines(where: str, problems: Counter) -> None:
    """One warning line for a batch whose output repeats a ``custom_id``, names one it was not sent,
    or holds lines that are no JSON object with a ``custom_id`` (counts only: the line is bounded)."""
    parts = []
    if problems["repeated"]:
        parts.append(f"{problems['repeated']:,} repeat a custom_id (the first line of each kept)")
    if problems["cut"]:
        parts.append(f"{problems['cut']:,} are over the line bound and name no custom_id (skipped)")
    if problems["bad"]:
        parts.append(f"{problems['bad']:,} are not JSON objects with a custom_id (skipped)")
    if problems["unknown"]:
        parts.append(f"{problems['unknown']:,} name a custom_id it was not sent (ignored)")
    if parts:
        warn(f"{where}: output lines that {' and '.join(parts)}")


def warn(message: str) -> None:
    """One warning line on stderr."""
    import sys

    print(f"madeval: warning: {message}", file=sys.stderr)
