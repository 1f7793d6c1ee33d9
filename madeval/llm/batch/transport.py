"""The ``batch`` transport: chat calls gathered into Batch API request files, awaited together."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

from ..openai_transport import OpenAITransport
from ..wire import DEFAULT_MAX_RESPONSE_BYTES, ClientSideError, FatalError, Reply, RetryableError, read_reply, short, status_error
from .journal import BatchJournal
from .settings import BatchSettings

CHAT_URL = "/v1/chat/completions"
#: The largest output or error file read (a batch of 50,000 replies of a few kilobytes each fits).
MAX_FILE_BYTES = 1 << 30
#: Statuses after which a batch changes no more.
FINISHED = frozenset({"completed", "expired", "cancelled", "failed"})
#: Consecutive failed looks at a batch's status before its lines are given up (and retried anew).
MAX_POLL_FAILURES = 8

Outcome = "Reply | Exception"


class _FilesAPI(OpenAITransport):
    """The Files and Batches calls, through the official client with the openai transport's
    guarantees (one deadline per request, a size cap on every body, errors turned into the
    transport's two)."""

    async def upload(self, content: bytes) -> str:
        """Upload a request file (purpose ``batch``); its file id."""
        uploaded = await self._call(
            lambda: self._client.files.create(file=("madeval-requests.jsonl", content), purpose="batch"),
            self._timeout_s)
        return str(uploaded.id)

    async def create(self, file_id: str, window: str) -> str:
        """Create a batch over an uploaded request file; its batch id."""
        batch = await self._call(lambda: self._client.batches.create(
            input_file_id=file_id, endpoint=CHAT_URL, completion_window=window), self._timeout_s)
        return str(batch.id)

    async def probe(self) -> None:
        """Ask for one batch of the list: fails when the endpoint has no Batch API."""
        await self._call(lambda: self._client.batches.list(limit=1), min(self._timeout_s, 10.0))

    async def retrieve(self, batch_id: str) -> Any:
        """The batch object (``openai.types.Batch``)."""
        return await self._call(lambda: self._client.batches.retrieve(batch_id), self._timeout_s)

    async def content(self, file_id: str) -> bytes:
        """The bytes of a file (an output or error file)."""
        answer = await self._call(lambda: self._client.files.content(file_id), self._timeout_s)
        return answer.content


class BatchTransport:
    """Sends each chat call as one line of a batch; see :mod:`madeval.llm.batch`.

    Identical requests in flight at once (same model, messages and parameters, the seed included)
    share one line: their ``custom_id`` is a digest of the request. ``configure_batches`` sets the options
    and the run folder's journal; without it the defaults hold and nothing is journaled.
    """

    name = "batch"

    def __init__(self, base_url: str, api_key: str, timeout_s: float,
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES):
        self._api = _FilesAPI(base_url, api_key, timeout_s, max_response_bytes=MAX_FILE_BYTES)
        self._max_reply = max_response_bytes
        self.settings = BatchSettings()
        self.journal: BatchJournal | None = None
        self._pending: list[tuple[str, bytes]] = []  # (custom_id, request line) not yet sent
        self._pending_bytes = 0
        self._first = self._last = 0.0  # when the oldest and the newest pending call arrived
        self._waiting: dict[str, asyncio.Future] = {}  # custom_id -> its reply, pending or sent
        self._flusher: asyncio.Task | None = None
        self._earlier: dict[str, asyncio.Task] = {}  # an earlier process's batch id -> its outcomes
        self._tasks: set[asyncio.Task] = set()
        #: Batches created by this process (what a test compares with the dependency chain).
        self.batches_created = 0
        self._probed = False

    def configure_batches(self, settings: BatchSettings, folder: Path | None) -> None:
        """Use ``settings``; journal submitted batches in ``folder`` and resume the ones found there."""
        self.settings = settings
        self.journal = None if folder is None else BatchJournal(folder)

    async def chat(self, model: str, messages: list[dict[str, str]], params: dict[str, Any],
                   headers: dict[str, str] | None = None) -> Reply:
        """The reply to one chat call, once the batch holding it is done.

        ``headers`` (the routing key) are not sent: a batch line carries no headers."""
        body = {"model": model, "messages": messages, **params}
        encoded = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        custom_id = hashlib.sha256(encoded.encode()).hexdigest()[:32]
        future = self._waiting.get(custom_id)
        if future is None:
            future = self._waiting[custom_id] = asyncio.get_running_loop().create_future()
            future.add_done_callback(_retrieved)
            earlier = None if self.journal is None else self.journal.claim(custom_id)
            if earlier is not None:
                self._spawn(self._from_earlier(earlier, custom_id))
            else:
                line = f'{{"custom_id":"{custom_id}","method":"POST","url":"{CHAT_URL}","body":{encoded}}}\n'
                self._enqueue(custom_id, line.encode())
        return await asyncio.shield(future)

    def _enqueue(self, custom_id: str, line: bytes) -> None:
        """Add a line to the next request file; send that file now if the line would overfill it."""
        limits = self.settings
        if len(line) > limits.max_bytes:
            self._deliver([custom_id], {}, FatalError(f"request of {len(line)} bytes is over the batch file "
                                                      f"limit of {limits.max_bytes} (--batch-options max_bytes)"))
            return
        if self._pending and (len(self._pending) >= limits.max_lines
                              or self._pending_bytes + len(line) > limits.max_bytes):
            self._flush()
        now = time.monotonic()
        if not self._pending:
            self._first = now
        self._last = now
        self._pending.append((custom_id, line))
        self._pending_bytes += len(line)
        if self._flusher is None:
            self._flusher = asyncio.get_running_loop().create_task(self._flush_when_quiet())

    async def _flush_when_quiet(self) -> None:
        """Send the pending lines once no call arrived for ``flush_s`` (``20 * flush_s`` at most)."""
        try:
            while self._pending:
                due = min(self._last + self.settings.flush_s, self._first + 20 * self.settings.flush_s)
                now = time.monotonic()
                if now >= due:
                    break
                await asyncio.sleep(due - now)
        finally:
            self._flusher = None
        self._flush()

    def _flush(self) -> None:
        """Send the pending lines as one batch (in the background)."""
        lines, self._pending, self._pending_bytes = self._pending, [], 0
        if lines:
            self._spawn(self._submit(lines))

    async def _submit(self, lines: list[tuple[str, bytes]]) -> None:
        """Upload, create, journal, wait, deliver: one batch round trip."""
        custom_ids = [custom_id for custom_id, _ in lines]
        try:
            file_id = await self._api.upload(b"".join(line for _, line in lines))
            batch_id = await self._api.create(file_id, self.settings.window)
            self.batches_created += 1
            if self.journal is not None:
                self.journal.submitted(batch_id, file_id, custom_ids)
        except (RetryableError, FatalError) as error:
            kind = type(error)
            self._deliver(custom_ids, {}, kind(f"batch not submitted: {error}"))
            return
        self._deliver(custom_ids, await self._collect(batch_id), RetryableError("line missing from its batch"))

    async def _from_earlier(self, batch_id: str, custom_id: str) -> None:
        """Answer ``custom_id`` from a batch an earlier process submitted (collected once)."""
        task = self._earlier.get(batch_id)
        if task is None:
            task = self._earlier[batch_id] = asyncio.get_running_loop().create_task(self._collect(batch_id))
        self._deliver([custom_id], await task, RetryableError("line missing from its earlier batch"))

    async def _collect(self, batch_id: str) -> dict[str, Reply | Exception]:
        """Wait until the batch is finished; the outcome of each line its output and error files hold.

        A batch that failed as a whole prints one line and answers nothing (its lines are retried);
        so does one whose status cannot be read ``MAX_POLL_FAILURES`` times in a row."""
        pause, failures = min(self.settings.poll_s, 1.0), 0
        while True:
            try:
                batch = await self._api.retrieve(batch_id)
                failures = 0
                if batch.status in FINISHED:
                    break
            except FatalError as error:
                _warn(f"batch {batch_id} cannot be read ({error}); its lines are sent again")
                return {}
            except RetryableError:
                failures += 1
                if failures >= MAX_POLL_FAILURES:
                    _warn(f"batch {batch_id} did not answer {failures} looks in a row; its lines are sent again")
                    return {}
            await asyncio.sleep(pause)
            pause = min(pause * 2, self.settings.poll_s)
        if batch.status == "failed":
            reasons = [error.message for error in (batch.errors.data or [])] if batch.errors else []
            _warn(f"batch {batch_id} failed: {short(reasons[0] if reasons else 'no reason given')}")
            return {}
        outcomes: dict[str, Reply | Exception] = {}
        for file_id in (batch.error_file_id, batch.output_file_id):  # an output line wins over an error line
            if file_id:
                try:
                    content = await self._api.content(file_id)
                except (RetryableError, FatalError) as error:
                    _warn(f"batch {batch_id}: file {file_id} cannot be read ({error}); its lines are sent again")
                    continue
                outcomes.update(await asyncio.to_thread(read_outcomes, content, self._max_reply, batch.status))
        return outcomes

    def _deliver(self, custom_ids: list[str], outcomes: dict[str, Reply | Exception], missing: Exception) -> None:
        """Resolve the waiting calls of ``custom_ids`` with their outcomes (``missing`` when absent)."""
        for custom_id in custom_ids:
            future = self._waiting.pop(custom_id, None)
            if future is None or future.done():
                continue
            outcome = outcomes.get(custom_id, missing)
            if isinstance(outcome, Exception):
                future.set_exception(outcome)
            else:
                future.set_result(outcome)

    def _spawn(self, coroutine) -> None:
        task = asyncio.get_running_loop().create_task(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def models(self) -> list[str]:
        """The model ids the endpoint lists (as the openai transport asks them), once the endpoint
        proved it serves the Batch API (the run's preflight asks this before anything is written):
        an endpoint that refuses ``GET /batches`` with a 4xx other than 408/409/429 is a
        :class:`ClientSideError`, a setting to fix."""
        listed = await self._api.models()
        if not self._probed:
            try:
                await self._api.probe()
            except FatalError as error:
                if error.status in (401, 403):
                    raise
                raise ClientSideError(f"does not serve the Batch API (GET /batches: {error}); "
                                      "use another --transport") from None
            self._probed = True
        return listed

    async def close(self) -> None:
        """Stop the background work and close the connections (submitted batches stay journaled)."""
        for task in [*self._tasks, *self._earlier.values(), *([self._flusher] if self._flusher else [])]:
            task.cancel()
        await self._api.close()


def read_outcomes(content: bytes, max_reply: int, status: str) -> dict[str, Reply | Exception]:
    """Each line's outcome in an output or error file: its reply, or the error to raise.

    Lines are untrusted: one that is not a JSON object with a ``custom_id`` is skipped (its call is
    then missing, and retried); a body over ``max_reply`` bytes fails its call without retry."""
    outcomes: dict[str, Reply | Exception] = {}
    for raw in content.splitlines():
        try:
            entry = json.loads(raw)
            custom_id = entry["custom_id"]
            response, error = entry.get("response"), entry.get("error")
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
            continue
        if not isinstance(custom_id, str):
            continue
        outcomes[custom_id] = _outcome(response, error, max_reply, status)
    return outcomes


def _outcome(response: Any, error: Any, max_reply: int, status: str) -> Reply | Exception:
    if isinstance(response, dict) and isinstance(response.get("status_code"), int):
        body = response.get("body")
        raw = body.encode() if isinstance(body, str) else json.dumps(body).encode()
        if len(raw) > max_reply:
            return FatalError(f"reply over {max_reply / (1 << 20):g} MiB (--max-response-mb)")
        if response["status_code"] == 200:
            try:
                return read_reply(raw)
            except RetryableError as malformed:
                return malformed
        return status_error(response["status_code"], {}, raw)
    code = error.get("code") if isinstance(error, dict) else None
    return RetryableError(f"batch line {short(str(code or status), 60)}")


def _retrieved(future: asyncio.Future) -> None:
    """Mark a future's exception as seen (a call cancelled meanwhile must not log it as lost)."""
    if not future.cancelled():
        future.exception()


def _warn(message: str) -> None:
    print(f"madeval: warning: {message}", file=sys.stderr)
