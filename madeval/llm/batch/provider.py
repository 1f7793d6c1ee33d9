"""A provider's Files and Batches API (OpenAI, LiteLLM's proxy, the simulator) as a batch service:
upload a request file and create a batch over it; wait for it and read its output and error files."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any, Collection, Iterator

from madeval.llm.batch.lines import CHAT_URL, CutLine, file_lines, note_odd_lines, read_file_outcomes, warn
from madeval.llm.batch.settings import PROVIDER_GRACE_S, BatchSettings, window_seconds
from madeval.llm.openai_transport import OpenAITransport
from madeval.llm.wire import ClientSideError, FatalError, Reply, RetryableError, read_model_list, short

#: The largest output or error file downloaded (streamed to a temporary file in the run folder, then
#: read line by line): 50,000 replies of over a megabyte each fit; past it, one warning line, and the
#: batch's lines fail without being sent (and paid) again. Tests set a smaller bound.
MAX_FILE_BYTES = 64 << 30
#: The name a download starts with in the run folder (deleted once read, or by the next process).
DOWNLOAD_PREFIX = ".batch-download-"
#: Free disk space a download leaves beside the run folder's other files.
DISK_RESERVE_BYTES = 1 << 30
#: The slowest download rate awaited: a file of N bytes gets ``timeout_s + N / DOWNLOAD_RATE`` seconds.
DOWNLOAD_RATE = 1 << 20
#: The largest body of a status, list or creation call (a page of 100 batch objects is kilobytes).
MAX_JSON_BYTES = 64 << 20
#: Statuses after which a batch changes no more.
FINISHED = frozenset({"completed", "expired", "cancelled", "failed"})
#: Tries to download an uploaded request file (to split a batch over the enqueued token limit); a
#: finished batch's output and error files are downloaded again for as long as its window.
MAX_DOWNLOADS = 8
#: The error code of a batch failed for an organisation's enqueued token limit (OpenAI's batch guide).
TOKEN_LIMIT_CODE = "token_limit_exceeded"


class OverTokenLimit(RetryableError):
    """A batch failed as a whole for the provider's enqueued token limit: its lines are sent again
    by the transport once this run's earlier batches finished (or, alone over it, in halves)."""


class FileTooLarge(Exception):
    """An output or error file over :data:`MAX_FILE_BYTES`, or over the run folder disk's free space."""


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

    async def find(self, file_id: str, known: Collection[str] = (), limit: int = 10_000) -> str | None:
        """The newest batch over the input file ``file_id`` other than the ``known`` ones; None only
        when the list proves there is none: it ends, or reaches a batch created before the file was
        (the provider's clock, both). A list that cannot be read raises the transport's errors; one
        of ``limit`` batches without that proof is a :class:`FatalError`."""
        since = await self.created_at(file_id)
        page = await self._call(lambda: self._client.batches.list(limit=100), self._timeout_s)
        seen = 0
        while True:
            for batch in page.data:
                if batch.input_file_id == file_id and batch.id not in known:
                    return str(batch.id)
                if since is not None and isinstance(batch.created_at, int) and batch.created_at < since:
                    return None
            seen += len(page.data)
            if not page.has_next_page():
                return None
            if seen >= limit:
                raise FatalError(f"its batches cannot be told: over {limit:,} batches were made since it was uploaded")
            page = await self._call(page.get_next_page, self._timeout_s)

    async def created_at(self, file_id: str) -> int | None:
        """When the endpoint says a file was uploaded (None: it says not, or no longer knows the file)."""
        try:
            found = await self._call(lambda: self._client.files.retrieve(file_id), self._timeout_s)
        except FatalError:
            return None
        created = getattr(found, "created_at", None)
        return created if isinstance(created, int) and not isinstance(created, bool) else None

    async def retrieve(self, batch_id: str) -> Any:
        """The batch object (``openai.types.Batch``)."""
        return await self._call(lambda: self._client.batches.retrieve(batch_id), self._timeout_s)

    async def size(self, file_id: str) -> int | None:
        """The size in bytes the endpoint gives for a file (None: none given)."""
        found = await self._call(lambda: self._client.files.retrieve(file_id), self._timeout_s)
        size = getattr(found, "bytes", None)
        return size if isinstance(size, int) and not isinstance(size, bool) and size >= 0 else None

    async def download(self, file_id: str, path: Path, limit: int, deadline_s: float) -> None:
        """Stream a file's bytes into ``path`` (emptied first), a MiB at a time written off the event
        loop, within ``deadline_s``; a :class:`FileTooLarge` past ``limit`` bytes."""

        async def stream() -> None:
            written = 0
            with path.open("wb") as out:  # "wb" again on the client's one retry of a stale connection
                async with self._client.files.with_streaming_response.content(file_id) as response:
                    async for chunk in response.iter_bytes(1 << 20):
                        written += len(chunk)
                        if written > limit:
                            raise FileTooLarge(f"file {file_id} is over {limit:,} bytes")
                        try:
                            await asyncio.to_thread(out.write, chunk)
                        except OSError as error:  # a full disk: no connection fault, and not retried
                            raise FileTooLarge(f"file {file_id} cannot be written in {path.parent} "
                                               f"({error.strerror or error})") from None

        await self._call(stream, deadline_s)


class ProviderBatches:
    """Batches through an endpoint's ``/files`` and ``/batches``."""

    #: A provider expires a batch at its window itself: awaited this much longer for its partial output.
    grace_s = PROVIDER_GRACE_S

    def __init__(self, base_url: str, api_key: str, timeout_s: float, max_reply: int):
        self._api = _FilesAPI(base_url, api_key, timeout_s, max_response_bytes=MAX_JSON_BYTES)
        # files are streamed to disk through a client of their own, whose cap is the file bound
        self._files = _FilesAPI(base_url, api_key, timeout_s, max_response_bytes=MAX_FILE_BYTES)
        self._timeout_s = timeout_s
        self._max_reply = max_reply
        self._probed = False
        self.settings = BatchSettings()
        #: Where downloads are streamed (the run folder; None: the system's temporary folder).
        self.folder: Path | None = None

    async def upload(self, content: bytes, custom_ids: list[str]) -> str:
        """Upload a request file (of the lines ``custom_ids``); its file id."""
        return await self._api.upload(content)

    async def create(self, file_id: str) -> str:
        """Create a batch over an uploaded request file; its batch id."""
        return await self._api.create(file_id, self.settings.window)

    async def find(self, file_id: str, known: Collection[str] = ()) -> str | None:
        """The batch created over ``file_id`` among the endpoint's batches, newest first, other than
        the ``known`` ones; None only when the list proves there is none (see :meth:`_FilesAPI.find`)."""
        return await self._api.find(file_id, known)

    async def request_lines(self, file_id: str, custom_ids: list[str]) -> list[tuple[str, bytes]]:
        """The lines of the uploaded request file ``file_id`` that carry ``custom_ids``, in their
        order (to split a batch over the enqueued token limit without keeping every request file in
        memory while its batch is out); a line the file lacks is left out."""
        wanted = set(custom_ids)
        with self._downloaded(file_id) as path:
            await self._download(file_id, path)
            return await asyncio.to_thread(_request_lines, path, wanted, self.settings.max_bytes)

    async def collect(self, batch_id: str) -> Any | RetryableError | FatalError:
        """Wait until the batch is finished: the batch object (``openai.types.Batch``) for
        :meth:`read`, or the error all its lines get.

        A status that cannot be read (a 5xx, a timeout) is looked at again, one warning line per
        streak, for as long as the transport waits (its window): giving up would send, and pay for,
        lines the batch may still answer. A batch that failed as a whole prints one line and is a
        :class:`RetryableError` for all its lines, retried after ``poll_s`` (at once, a failure
        such as too many enqueued tokens would use up every attempt in seconds); one the endpoint
        does not know (404) prints one line and is a :class:`RetryableError` (its lines are sent
        again). One that failed for the enqueued token limit (error code ``token_limit_exceeded``)
        is an :class:`OverTokenLimit`, printing nothing: the transport says it once and handles it."""
        pause, failing = min(self.settings.poll_s, 1.0), False
        while True:
            try:
                batch = await self._api.retrieve(batch_id)
                if failing:
                    warn(f"batch {batch_id}: its status can be read again")
                failing = False
                if batch.status in FINISHED:
                    break
            except FatalError as error:
                warn(f"batch {batch_id} cannot be read ({error}); its lines are sent again")
                return RetryableError(f"batch {batch_id} cannot be read ({short(str(error), 80)})")
            except RetryableError as error:
                if not failing:
                    warn(f"batch {batch_id}: its status cannot be read ({short(error.reason, 80)}); still waiting")
                failing = True
            await asyncio.sleep(pause)
            pause = min(pause * 2, self.settings.poll_s)
        if batch.status == "failed":
            codes = [error.code for error in (batch.errors.data or [])] if batch.errors else []
            if TOKEN_LIMIT_CODE in codes:
                message = batch.errors.data[codes.index(TOKEN_LIMIT_CODE)].message
                return OverTokenLimit(short(message or "enqueued token limit reached", 300),
                                      retry_after=self.settings.poll_s)
            reasons = [error.message for error in (batch.errors.data or [])] if batch.errors else []
            reason = short(reasons[0] if reasons else "no reason given")
            warn(f"batch {batch_id} failed: {reason}")
            return RetryableError(f"batch failed: {reason}", retry_after=self.settings.poll_s)
        return batch

    async def read(self, batch: Any, custom_ids: Collection[str],
                   window: str) -> dict[str, Reply | Exception] | FatalError:
        """The outcome of each line of the finished ``batch`` (sent as ``custom_ids``) that its
        output and error files hold; a line they lack is left out (the transport sends it again).

        Its lines are paid for, so files that cannot be used are read again, not the lines sent
        again: a download that fails, or files yielding fewer lines than the batch's
        ``request_counts`` say (a file that is not JSON or cut short; without counts, one holding
        lines that are no JSON object with a ``custom_id`` while lines are missing) are a provider
        fault, downloaded again after 1, 2, 4... s (at most ``poll_s``) with one warning line per
        streak, for up to the batch's ``window``; then the calls without a line fail with one
        :class:`FatalError` each and one warning line, never sent (and paid) again.

        Each file is streamed to a temporary file in the run folder and read line by line (memory:
        one line, bounded by the reply limit, and the outcomes of the lines sent: a line naming a
        ``custom_id`` never sent is counted, not kept), then deleted; one over
        :data:`MAX_FILE_BYTES`, or over the disk's free space less :data:`DISK_RESERVE_BYTES`, is
        one warning line and a :class:`FatalError` for all the batch's lines. Odd lines (repeated,
        not JSON, naming a ``custom_id`` never sent) are said in one warning line per batch."""
        sent = frozenset(custom_ids)
        counts = getattr(batch, "request_counts", None)
        answered = (counts.completed or 0) + (counts.failed or 0) if counts is not None and counts.total else None
        deadline = time.monotonic() + window_seconds(window)
        pause, streak = min(self.settings.poll_s, 1.0), None
        while True:
            problems: Counter = Counter()
            try:
                outcomes, fault = await self._read_files(batch, sent, problems)
            except FileTooLarge as error:
                reason = f"batch {batch.id}: {error}; its lines fail, not sent (and paid) again"
                warn(reason)
                return FatalError(reason)
            if fault is None:
                fault = _short_files(len(outcomes), answered, len(sent), problems)
            if fault is None:
                if streak is not None:
                    warn(f"batch {batch.id}: its files can be read whole again")
                note_odd_lines(f"batch {batch.id}", problems)
                return outcomes
            if time.monotonic() >= deadline:
                reason = (f"batch {batch.id}: {fault}, still after its window of {window}; its lines are paid for: "
                          "not sent again")
                missing = len(sent) - len(outcomes)
                warn(f"{reason} ({missing:,} calls fail)")
                return {**{custom_id: FatalError(reason) for custom_id in sent}, **outcomes}
            if streak is None:
                warn(f"batch {batch.id}: {fault}; reading its files again for up to its window of {window} "
                     "(its lines are paid for: they are not sent again)")
            streak = fault
            await asyncio.sleep(pause)
            pause = min(pause * 2, self.settings.poll_s)

    async def _read_files(self, batch: Any, sent: frozenset[str],
                          problems: Counter) -> tuple[dict[str, Reply | Exception], str | None]:
        """One reading of ``batch``'s error and output files (an output line wins over an error
        line): the outcomes of the lines ``sent``, and what failed (None: every file downloaded)."""
        outcomes: dict[str, Reply | Exception] = {}
        for kind, file_id in (("error", batch.error_file_id), ("output", batch.output_file_id)):
            if not file_id:
                continue
            with self._downloaded(file_id) as path:
                try:
                    await self._download(file_id, path, tries=1)
                except (RetryableError, FatalError) as error:
                    return outcomes, f"its {kind} file {file_id} cannot be downloaded ({short(str(error), 80)})"
                outcomes.update(await asyncio.to_thread(read_file_outcomes, path, self._max_reply, batch.status,
                                                        problems, sent))
        return outcomes, None

    @staticmethod
    def unanswered(batch_id: str) -> str:
        """What is missing when ``batch_id`` is given up (one clause of the warning line)."""
        return f"batch {batch_id} did not finish"

    @contextlib.contextmanager
    def _downloaded(self, file_id: str) -> Iterator[Path]:
        """A temporary file for ``file_id``'s download in the run folder, deleted afterwards."""
        handle, name = tempfile.mkstemp(prefix=DOWNLOAD_PREFIX, suffix=".jsonl", dir=self.folder)
        os.close(handle)
        try:
            yield Path(name)
        finally:
            Path(name).unlink(missing_ok=True)

    async def _download(self, file_id: str, path: Path, tries: int = MAX_DOWNLOADS) -> None:
        """A file streamed into ``path``, tried ``tries`` times (1, 2, 4... s apart, at most ``poll_s``).

        Its size (as the endpoint gives it) is checked first against :data:`MAX_FILE_BYTES` and the
        disk's free space (a :class:`FileTooLarge`), and sets the deadline, at ``DOWNLOAD_RATE``."""
        try:
            size = await self._files_call(lambda: self._api.size(file_id), tries)
        except FatalError:  # an endpoint that serves a file's content but not its metadata
            size = None
        free = shutil.disk_usage(path.parent).free - DISK_RESERVE_BYTES
        if size is not None and size > MAX_FILE_BYTES:
            raise FileTooLarge(f"file {file_id} is {size:,} bytes, over the bound of {MAX_FILE_BYTES:,}")
        if size is not None and size > free:
            raise FileTooLarge(f"file {file_id} is {size:,} bytes, over the {max(free, 0):,} bytes free (keeping "
                               f"{DISK_RESERVE_BYTES:,}) on the disk of {path.parent}")
        deadline = self._timeout_s + (size if size is not None else MAX_FILE_BYTES) / DOWNLOAD_RATE
        limit = min(MAX_FILE_BYTES, max(free, 0))
        await self._files_call(lambda: self._files.download(file_id, path, limit, deadline), tries)

    async def _files_call(self, send, tries: int):
        """``send()``'s answer, a retryable failure tried ``tries`` times in all."""
        pause = min(self.settings.poll_s, 1.0)
        for attempt in range(1, tries + 1):
            try:
                return await send()
            except RetryableError:
                if attempt == tries:
                    raise
            await asyncio.sleep(pause)
            pause = min(pause * 2, self.settings.poll_s)
        raise AssertionError("unreachable")

    async def models(self) -> list[str]:
        """The model ids the endpoint lists, once it proved it serves the Batch API (see
        :meth:`model_list_body`)."""
        return read_model_list(await self.model_list_body())

    async def model_list_body(self) -> bytes:
        """The raw ``/models`` body, once the endpoint proved it serves the Batch API: one that
        refuses ``GET /batches`` with a 4xx other than 401/403/408/409/429 is a
        :class:`ClientSideError`, a setting to fix (the run's preflight asks this first)."""
        body = await self._api.model_list_body()
        if not self._probed:
            try:
                await self._api.probe()
            except FatalError as error:
                if error.status in (401, 403):
                    raise
                raise ClientSideError(f"does not serve the Batch API (GET /batches: {error}); "
                                      "use another --transport") from None
            self._probed = True
        return body

    async def close(self) -> None:
        """Close the connections."""
        await self._api.close()
        await self._files.close()


def _short_files(read: int, answered: int | None, sent: int, problems: Counter) -> str | None:
    """Why a batch's files, downloaded, cannot be used whole (None: they can): ``read`` lines of the
    ``sent`` ones found where its ``request_counts`` say ``answered`` (None: it gives no counts)."""
    bad = problems["bad"] + problems["cut"]
    lines = f"{bad:,} line{'' if bad == 1 else 's'}"
    spoilt = f" ({lines} not JSON or cut short)" if bad else ""
    if answered is not None and read < min(answered, sent):
        return f"its files yield {read:,} of the {answered:,} lines its request_counts say{spoilt}"
    if answered is None and bad and read < sent:
        return f"its files hold {lines} not JSON or cut short, and {read:,} of its {sent:,} lines"
    return None


def _request_lines(path: Path, wanted: set[str], max_line: int) -> list[tuple[str, bytes]]:
    """``(custom_id, line)`` of each line of a request file whose ``custom_id`` is in ``wanted``
    (each once; the transport wrote the file, but it comes back from the endpoint: a line over
    ``max_line`` bytes is none of the transport's)."""
    found: list[tuple[str, bytes]] = []
    for raw in file_lines(path, max_line):
        if isinstance(raw, CutLine):
            continue
        try:
            custom_id = json.loads(raw)["custom_id"]
        except (ValueError, KeyError, TypeError, RecursionError):
            continue
        if isinstance(custom_id, str) and custom_id in wanted:
            wanted.discard(custom_id)
            found.append((custom_id, raw.rstrip(b"\r\n") + b"\n"))
    return found
