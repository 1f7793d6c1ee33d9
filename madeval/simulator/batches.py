"""The simulator's OpenAI Files and Batches API, so the batch transport is tested on loopback.

Routes (the shapes of the openai client's ``FileObject`` and ``Batch`` types):

- ``POST /v1/files`` (multipart/form-data, ``purpose`` and ``file``) -> a file object;
- ``GET /v1/files/{id}`` and ``GET /v1/files/{id}/content``;
- ``POST /v1/batches`` (JSON: ``input_file_id``, ``endpoint``, ``completion_window``) -> a batch;
- ``GET /v1/batches`` (the list, newest first), ``GET /v1/batches/{id}`` and
  ``POST /v1/batches/{id}/cancel``.

A batch is ``in_progress`` from its creation and finishes at the first look at it (retrieve or
cancel) ``completion_delay_s`` or more later (the delay in force at that look counts, so a test may
shorten it for batches already created): then every line of its input file is answered by the
server's ordinary chat logic (faults included) and the answers go to the output file (status 200)
or the error file (any other status, an injected failed line, or a line the batch did not reach),
one JSON object per line in the OpenAI batch format::

    {"id": "batch_req_N", "custom_id": "...", "response": {"status_code": 200, "request_id": "...",
     "body": {...chat.completion...}}, "error": null}

``fail_rate`` of the lines (seeded) fail with ``{"response": null, "error": {"code": "server_error"}}``;
with ``expire_after_lines`` the batch ``expired`` after answering that many lines, the rest in the
error file with code ``batch_expired`` (what OpenAI does with a batch its window ran out on); with
``cancel_after_lines`` the provider cancels the batch after answering that many lines (status
``cancelled``, the answered lines in the output file, the others absent); with ``fail_batches`` every
batch ``failed`` as a whole when it is created; ``refuse_uploads`` answers the first that many file
uploads with HTTP 429 and a ``Retry-After`` of ``retry_after_s``, ``refuse_looks`` the first that
many looks at a batch (``GET /v1/batches/{id}``) with HTTP 503. With ``enqueued_token_limit`` a
batch whose prompt tokens (each line's messages, a token per 4 characters as the chat logic counts
them), added to those of the batches not yet finished (younger than ``completion_delay_s``), would
pass the limit ``failed`` at its creation, as OpenAI fails one over an organisation's enqueued token
limit: ``errors.data[0]`` is ``{"code": "token_limit_exceeded", "message": "Enqueued token limit
reached for MODEL in organization org-simulator. Limit: N enqueued tokens. ..."}``. A batch cancelled
by the client answers nothing. ``stats()`` counts files, batches and lines for ``GET /stats``.
"""

from __future__ import annotations

import email.parser
import email.policy
import itertools
import json
import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable

CHAT_URL = "/v1/chat/completions"
#: The most lines one batch input file may hold (OpenAI's limit).
MAX_LINES = 50_000

Response = tuple[int, bytes, str]  # status, JSON body, extra header lines


@dataclass
class BatchOptions:
    """How the simulated batch service behaves."""

    completion_delay_s: float = 0.0  # seconds from creation to completion
    fail_rate: float = 0.0  # share of lines that fail with a server_error in the error file
    expire_after_lines: int | None = None  # expire after answering this many lines (None: never)
    seed: int | None = 0  # seeds the failed-line draws
    fail_batches: bool = False  # every batch fails as a whole (status "failed", no output)
    cancel_after_lines: int | None = None  # the provider cancels each batch after this many lines
    refuse_uploads: int = 0  # the first this many file uploads get HTTP 429
    refuse_looks: int = 0  # the first this many looks at a batch get HTTP 503
    retry_after_s: float = 1.0  # the Retry-After of a refused upload
    enqueued_token_limit: int | None = None  # prompt tokens of unfinished batches at most (None: no limit)

    def __post_init__(self) -> None:
        if not 0.0 <= self.fail_rate <= 1.0:
            raise ValueError(f"fail_rate must be in [0, 1]: {self.fail_rate}")
        if self.completion_delay_s < 0:
            raise ValueError(f"completion_delay_s must be >= 0: {self.completion_delay_s}")
        for name in ("expire_after_lines", "cancel_after_lines"):
            if (getattr(self, name) or 0) < 0:
                raise ValueError(f"{name} must be >= 0: {getattr(self, name)}")
        for name in ("refuse_uploads", "refuse_looks"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0: {getattr(self, name)}")
        if self.enqueued_token_limit is not None and self.enqueued_token_limit < 1:
            raise ValueError(f"enqueued_token_limit must be >= 1: {self.enqueued_token_limit}")
        if not 0 <= self.retry_after_s <= 3600:
            raise ValueError(f"retry_after_s must be in [0, 3600]: {self.retry_after_s}")


@dataclass
class _File:
    id: str
    filename: str
    purpose: str
    content: bytes
    created_at: int = field(default_factory=lambda: int(time.time()))

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": len(self.content),
            "created_at": self.created_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "expires_at": None,
            "status_details": None,
        }


class BatchService:
    """Files and batches of one simulator server.

    ``chat(body) -> (status, body bytes)`` answers one chat request the way the server answers
    ``POST /v1/chat/completions``.
    """

    def __init__(self, chat: Callable[[bytes], tuple[int, bytes]], options: BatchOptions | None = None):
        self._chat = chat
        self._due: dict[str, tuple[float, list[dict[str, Any]]]] = {}  # batch id -> (created, its lines)
        self._tokens: dict[str, int] = {}  # batch id -> the prompt tokens of its lines, while it is due
        self.options = options or BatchOptions()
        self._rng = random.Random(self.options.seed)
        self._ids = itertools.count(1)
        self.files: dict[str, _File] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.counts = {
            "files": 0,
            "batches_created": 0,
            "batches_completed": 0,
            "batches_expired": 0,
            "batches_cancelled": 0,
            "batches_failed": 0,
            "lines_submitted": 0,
            "lines": 0,
            "lines_failed": 0,
            "uploads_refused": 0,
            "looks_refused": 0,
            "batches_over_token_limit": 0,
            "most_tokens_enqueued": 0,
        }

    def stats(self) -> dict[str, int]:
        """The counters ``GET /stats`` shows under ``batches``."""
        return dict(self.counts)

    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> Response | None:
        """The response to a Files or Batches request; None when ``path`` is not one of theirs."""
        parts = path.strip("/").split("/")  # v1, files|batches, [id], [content|cancel]
        if len(parts) < 2 or parts[0] != "v1" or parts[1] not in ("files", "batches"):
            return None
        kind, rest = parts[1], parts[2:]
        if kind == "files":
            if method == "POST" and not rest:
                return self._upload(headers.get("content-type", ""), body)
            if method == "GET" and rest and rest[0] in self.files:
                found = self.files[rest[0]]
                if len(rest) == 1:
                    return _ok(found.as_json())
                if rest[1:] == ["content"]:
                    return 200, found.content, ""
            return _error(404, f"No such file: {'/'.join(rest)}", "not_found")
        if method == "POST" and not rest:
            return self._create(body)
        if method == "GET" and not rest:
            data = list(reversed(self.batches.values()))[:20]
            return _ok(
                {
                    "object": "list",
                    "data": data,
                    "has_more": len(self.batches) > 20,
                    "first_id": data[0]["id"] if data else None,
                    "last_id": data[-1]["id"] if data else None,
                }
            )
        if rest and rest[0] in self.batches:
            if method == "GET" and len(rest) == 1 and self.counts["looks_refused"] < self.options.refuse_looks:
                self.counts["looks_refused"] += 1
                return _error(503, "The batch service is unavailable (simulated).", "service_unavailable")
            batch = self.batches[rest[0]]
            due = self._due.get(batch["id"])
            if due is not None and time.monotonic() - due[0] >= self.options.completion_delay_s:
                del self._due[batch["id"]]
                self._tokens.pop(batch["id"], None)
                self._finish(batch, due[1])
            if method == "GET" and len(rest) == 1:
                return _ok(batch)
            if method == "POST" and rest[1:] == ["cancel"]:
                if batch["status"] in ("validating", "in_progress"):
                    batch["status"] = "cancelled"
                    batch["cancelling_at"] = batch["cancelled_at"] = int(time.time())
                    self.counts["batches_cancelled"] += 1
                return _ok(batch)
        return _error(404, f"No such batch: {'/'.join(rest)}", "not_found")

    def _upload(self, content_type: str, body: bytes) -> Response:
        """``POST /v1/files``: a multipart form with ``purpose`` and ``file``."""
        if self.counts["uploads_refused"] < self.options.refuse_uploads:
            self.counts["uploads_refused"] += 1
            status, body, _ = _error(429, "Too many file uploads (simulated).", "rate_limit_exceeded")
            return status, body, f"retry-after: {self.options.retry_after_s:g}\r\n"
        if not content_type.lower().startswith("multipart/form-data"):
            return _error(400, "Send the file as multipart/form-data.", "invalid_request")
        # The standard library's MIME parser reads form-data (the header line supplies the boundary).
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + content_type.encode("latin-1") + b"\r\n\r\n" + body
        )
        fields: dict[str, tuple[str | None, bytes]] = {}
        for part in message.iter_parts() if message.is_multipart() else ():
            name = part.get_param("name", header="content-disposition")
            if name:
                fields[name] = (part.get_filename(), part.get_payload(decode=True) or b"")
        purpose = fields.get("purpose", (None, b""))[1].decode("utf-8", "replace")
        if "file" not in fields or purpose != "batch":
            return _error(400, "A file upload needs a 'file' part and purpose=batch.", "invalid_request")
        filename, content = fields["file"]
        uploaded = _File(f"file-sim-{next(self._ids)}", filename or "upload.jsonl", purpose, content)
        self.files[uploaded.id] = uploaded
        self.counts["files"] += 1
        return _ok(uploaded.as_json())

    def _create(self, body: bytes) -> Response:
        """``POST /v1/batches``: validate the input file now, answer it ``completion_delay_s`` later."""
        try:
            request = json.loads(body)
            input_id = request["input_file_id"]
            endpoint = request["endpoint"]
            window = request.get("completion_window", "24h")
        except (ValueError, KeyError, TypeError):
            return _error(400, "A batch needs input_file_id, endpoint and completion_window.", "invalid_request")
        if endpoint != CHAT_URL:
            return _error(400, f"Only {CHAT_URL} is served in batches.", "invalid_request")
        if input_id not in self.files:
            return _error(400, f"No such file: {input_id}", "invalid_request")
        now = int(time.time())
        batch = {
            "id": f"batch_sim_{next(self._ids)}",
            "object": "batch",
            "endpoint": endpoint,
            "errors": None,
            "input_file_id": input_id,
            "completion_window": str(window),
            "status": "in_progress",
            "output_file_id": None,
            "error_file_id": None,
            "created_at": now,
            "in_progress_at": now,
            "expires_at": now + 86400,
            "finalizing_at": None,
            "completed_at": None,
            "failed_at": None,
            "expired_at": None,
            "cancelling_at": None,
            "cancelled_at": None,
            "request_counts": {"total": 0, "completed": 0, "failed": 0},
            "metadata": request.get("metadata") if isinstance(request.get("metadata"), dict) else None,
        }
        self.batches[batch["id"]] = batch
        self.counts["batches_created"] += 1
        lines, problem = _read_lines(self.files[input_id].content)
        if problem is None and self.options.fail_batches:
            problem = "The batch failed (simulated)."
        code = "invalid_request"
        tokens = sum(_prompt_tokens(line["body"]) for line in lines)
        limit = self.options.enqueued_token_limit
        if problem is None and limit is not None and self._enqueued() + tokens > limit:
            code, problem = (
                "token_limit_exceeded",
                (
                    f"Enqueued token limit reached for {str(lines[0]['body'].get('model'))[:100]} in organization "
                    f"org-simulator. Limit: {limit:,} enqueued tokens. Please try again once some in_progress "
                    "batches have been completed."
                ),
            )
            self.counts["batches_over_token_limit"] += 1
        if problem is not None:
            batch.update(
                status="failed",
                failed_at=now,
                errors={"object": "list", "data": [{"code": code, "message": problem, "line": None, "param": None}]},
            )
            self.counts["batches_failed"] += 1
            return _ok(batch)
        batch["request_counts"]["total"] = len(lines)
        self.counts["lines_submitted"] += len(lines)
        self._due[batch["id"]] = (time.monotonic(), lines)
        self._tokens[batch["id"]] = tokens
        self.counts["most_tokens_enqueued"] = max(self.counts["most_tokens_enqueued"], self._enqueued())
        return _ok(batch)

    def _enqueued(self) -> int:
        """The prompt tokens of the batches not finished yet: in progress and younger than
        ``completion_delay_s`` (an older one is done, and answers at its next look)."""
        now = time.monotonic()
        return sum(
            self._tokens[batch_id]
            for batch_id, (created, _) in self._due.items()
            if batch_id in self._tokens
            and self.batches[batch_id]["status"] == "in_progress"
            and now - created < self.options.completion_delay_s
        )

    def _finish(self, batch: dict[str, Any], lines: list[dict[str, Any]]) -> None:
        """Answer every line of ``batch`` (unless it was cancelled) and write its output files."""
        if batch["status"] != "in_progress":
            return
        outputs: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        limit = self.options.expire_after_lines
        cancel_at = self.options.cancel_after_lines
        for number, line in enumerate(lines):
            if cancel_at is not None and number >= cancel_at:
                break  # the provider cancelled the batch: the lines it did not reach are in no file
            entry = {
                "id": f"batch_req_{next(self._ids)}",
                "custom_id": line["custom_id"],
                "response": None,
                "error": None,
            }
            if limit is not None and number >= limit:
                entry["error"] = {
                    "code": "batch_expired",
                    "message": "This request could not be executed before the completion window expired.",
                }
                errors.append(entry)
                continue
            self.counts["lines"] += 1
            if self._rng.random() < self.options.fail_rate:
                entry["error"] = {"code": "server_error", "message": "The line failed (simulated)."}
                errors.append(entry)
                continue
            status, answer = self._chat(json.dumps(line["body"]).encode())
            try:
                answer_json = json.loads(answer)
            except ValueError:  # a malformed-reply fault: sent as the text it is
                answer_json = answer.decode("utf-8", "replace")
            entry["response"] = {"status_code": status, "request_id": entry["id"], "body": answer_json}
            (outputs if status == 200 else errors).append(entry)
        now = int(time.time())
        self.counts["lines_failed"] += len(errors)
        batch["request_counts"].update(completed=len(outputs), failed=len(errors))
        if outputs:
            batch["output_file_id"] = self._store(batch["id"] + "_output.jsonl", outputs)
        if errors:
            batch["error_file_id"] = self._store(batch["id"] + "_error.jsonl", errors)
        batch["finalizing_at"] = now
        if cancel_at is not None and cancel_at < len(lines):
            batch.update(status="cancelled", cancelling_at=now, cancelled_at=now)
            self.counts["batches_cancelled"] += 1
        elif limit is not None and limit < len(lines):
            batch.update(status="expired", expired_at=now)
            self.counts["batches_expired"] += 1
        else:
            batch.update(status="completed", completed_at=now)
            self.counts["batches_completed"] += 1

    def answer_file(self, content: bytes) -> bytes:
        """The output file ``vllm run-batch`` would write for a request file: one line per request,
        failed ones included (a stand-in offline engine for the file-exchange mode's tests)."""
        lines, problem = _read_lines(content)
        if problem is not None:
            raise ValueError(problem)
        entries = []
        for line in lines:
            status, answer = self._chat(json.dumps(line["body"]).encode())
            self.counts["lines"] += 1
            entries.append(
                {
                    "id": f"batch_req_{next(self._ids)}",
                    "custom_id": line["custom_id"],
                    "response": {
                        "status_code": status,
                        "request_id": line["custom_id"],
                        "body": json.loads(answer) if status == 200 else answer.decode(),
                    },
                    "error": None,
                }
            )
        return "".join(json.dumps(entry) + "\n" for entry in entries).encode()

    def _store(self, filename: str, entries: list[dict[str, Any]]) -> str:
        content = "".join(json.dumps(entry) + "\n" for entry in entries).encode()
        stored = _File(f"file-sim-{next(self._ids)}", filename, "batch_output", content)
        self.files[stored.id] = stored
        return stored.id


def _read_lines(content: bytes) -> tuple[list[dict[str, Any]], str | None]:
    """The request lines of a batch input file, or a one-line reason it is refused."""
    lines: list[dict[str, Any]] = []
    seen: set[str] = set()
    for number, raw in enumerate(content.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            line = json.loads(raw)
            custom_id, method, url, body = line["custom_id"], line["method"], line["url"], line["body"]
        except (ValueError, KeyError, TypeError):
            return [], f"line {number} is not a batch request"
        if not isinstance(custom_id, str) or custom_id in seen:
            return [], f"line {number}: custom_id missing or repeated"
        if method != "POST" or url != CHAT_URL or not isinstance(body, dict):
            return [], f"line {number}: only POST {CHAT_URL} with a JSON body is served"
        seen.add(custom_id)
        lines.append(line)
    if not lines or len(lines) > MAX_LINES:
        return [], f"a batch holds 1 to {MAX_LINES} lines, this file has {len(lines)}"
    return lines, None


def _prompt_tokens(body: dict[str, Any]) -> int:
    """A request's prompt tokens as the simulator's chat logic counts them (a token per 4 characters
    of its messages' contents, at least 1)."""
    messages = body.get("messages")
    contents = (
        [str(m.get("content") or "") for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []
    )
    return max(1, len("\n".join(contents)) // 4)


def _ok(payload: dict[str, Any]) -> Response:
    return 200, json.dumps(payload).encode(), ""


def _error(status: int, message: str, code: str) -> Response:
    body = {"error": {"message": message, "type": "invalid_request_error", "param": None, "code": code}}
    return status, json.dumps(body).encode(), ""
