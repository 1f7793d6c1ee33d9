"""The ``batch`` transport: chat calls gathered into request files, awaited together.

Where the files go is a *service*: a provider's Batch API (:mod:`.provider`), or a folder that an
offline engine answers (:mod:`.exchange`, for a ``file://`` base URL). Both take a request file and
later give each line's outcome.

A batch not answered within its completion window (``--batch-options window``, plus the service's
``grace_s``) from when this process began waiting for it is given up: one warning line, and every
call waiting (on it or on any other batch) fails with :class:`Unanswered`, which the client does not
retry, since its line would be sent and paid again while the batch may still answer. Nothing more is
sent, so the run ends; its submitted batches stay journaled, and the same command resumes by waiting
for them again."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import json
import re
import time
from pathlib import Path
from typing import Any, Collection, Iterator

from madeval.llm.batch.exchange import FileExchange, exchange_folder
from madeval.llm.batch.journal import BatchJournal, Earlier
from madeval.llm.batch.lines import CHAT_URL, warn
from madeval.llm.batch.provider import DOWNLOAD_PREFIX, FileTooLarge, OverTokenLimit, ProviderBatches
from madeval.llm.batch.settings import BatchSettings, window_seconds
from madeval.llm.wire import DEFAULT_MAX_RESPONSE_BYTES, FatalError, Reply, RetryableError, Unanswered, short

Outcomes = dict[str, Reply | Exception]
#: What :meth:`BatchTransport._unless_stopped` gives when the work did not end.
_NOTHING = object()
#: Bytes of a request file per prompt token at least, for telling a batch over the enqueued token
#: limit alone from one that meets the organisation's other batches: English text is about 4 bytes
#: a token, CJK text 3 bytes a character and up to 1.5 tokens each, and each line adds its JSON.
BYTES_PER_TOKEN_AT_LEAST = 2
_STATED_LIMIT = re.compile(r"Limit: ([\d,]{1,20}) enqueued tokens")
#: Tries of a batch's upload, and of its creation, before its lines fail (and go to the client's retry).
SUBMIT_ATTEMPTS = 4
#: What the calls of an upload are told when whether a batch was made over it cannot be told.
UNCONFIRMED = ("its lines are not sent again, as that batch would hold them (paid): run the same command again "
               "to look it up again")


class Unconfirmed(FatalError):
    """A request file over which a batch may have been made (a creation that failed, a kill before
    its journal line) whose batches cannot be listed: its calls fail, not sent (and paid) again."""


class BatchTransport:
    """Sends each chat call as one line of a batch; see :mod:`madeval.llm.batch`.

    Identical requests in flight at once (same model, messages and parameters, the seed included)
    share one line: their ``custom_id`` is a digest of the request. ``configure_batches`` sets the options
    and the run folder's journal; without it the defaults hold and nothing is journaled.
    """

    name = "batch"
    #: The client retries a failed line at once, unless the error asks for a wait: the next batch's
    #: turnaround is the backoff, and a jittered delay would send a round's retries, and from then on
    #: their debates' calls, in batches of their own (each one more provider turnaround).
    retries_at_once = True
    #: The client makes no test call through it (the response cache's fingerprint, the long-run
    #: estimate): one would be a batch of its own, a provider turnaround before the run starts.
    no_test_calls = True

    def __init__(self, base_url: str, api_key: str, timeout_s: float,
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES):
        folder = exchange_folder(base_url)
        self._service: ProviderBatches | FileExchange = (
            ProviderBatches(base_url, api_key, timeout_s, max_response_bytes) if folder is None
            else FileExchange(folder, max_response_bytes))
        self.settings = BatchSettings()
        self.journal: BatchJournal | None = None
        self._pending: list[tuple[str, bytes]] = []  # (custom_id, request line) not yet sent
        self._pending_bytes = 0
        self._first = self._last = 0.0  # when the oldest and the newest pending call arrived
        self._waiting: dict[str, asyncio.Future] = {}  # custom_id -> its reply, pending or sent
        self._flusher: asyncio.Task | None = None
        self._earlier: dict[str, asyncio.Task] = {}  # an earlier process's input file -> its outcomes
        self._tasks: set[asyncio.Task] = set()
        self._given_up: str | None = None  # why the run stopped waiting (a batch past its window)
        self._stop = asyncio.Event()  # set with _given_up: every wait ends
        self._out = 0  # batches created (from the request on) and not yet finished: the provider's enqueued
        self._batch_finished = asyncio.Event()  # set (and replaced) each time one of them finishes
        self._token_limit_said = False
        self._made: dict[str, set[str]] = {}  # an uploaded file -> the batches this process made over it
        #: Batches created by this process (what a test compares with the dependency chain).
        self.batches_created = 0

    def configure_batches(self, settings: BatchSettings, folder: Path | None) -> None:
        """Use ``settings``; journal submitted batches in ``folder`` and resume the ones found there;
        download output files into it."""
        self.settings = self._service.settings = settings
        self.journal = None if folder is None else BatchJournal(folder)
        if isinstance(self._service, ProviderBatches):
            self._service.folder = folder  # where output files are streamed before they are read
            for stale in () if folder is None else Path(folder).glob(DOWNLOAD_PREFIX + "*"):
                stale.unlink(missing_ok=True)  # a killed process's downloads (run.lock keeps one process)

    async def chat(self, model: str, messages: list[dict[str, str]], params: dict[str, Any],
                   headers: dict[str, str] | None = None) -> Reply:
        """The reply to one chat call, once the batch holding it is done.

        ``headers`` (the routing key) are not sent: a batch line carries no headers."""
        if self._given_up is not None:
            raise Unanswered(self._given_up)
        body = {"model": model, "messages": messages, **params}
        encoded = json.dumps(body, ensure_ascii=False, sort_keys=True, separators=(",", ":"))
        custom_id = hashlib.sha256(encoded.encode()).hexdigest()[:32]
        future = self._waiting.get(custom_id)
        if future is None:
            future = self._waiting[custom_id] = asyncio.get_running_loop().create_future()
            future.add_done_callback(_retrieved)
            earlier = None if self.journal is None else self.journal.claim(custom_id)
            if earlier is not None:
                self._spawn(self._from_earlier(earlier, custom_id), [custom_id])
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
        """Send the pending lines once no call arrived for ``flush_s`` (``20 * flush_s`` at most).

        A bug in here fails the pending calls with one clear error (as :meth:`_guarded` does for a
        batch's work) instead of leaving them waiting forever for a flush that never comes."""
        try:
            while self._pending:
                due = min(self._last + self.settings.flush_s, self._first + 20 * self.settings.flush_s)
                now = time.monotonic()
                if now >= due:
                    break
                await asyncio.sleep(due - now)
            self._flusher = None
            self._flush()
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - reported on the calls it would have sent
            pending, self._pending, self._pending_bytes = self._pending, [], 0
            self._deliver([custom_id for custom_id, _ in pending], {}, _failure(error))
        finally:
            self._flusher = None

    def _flush(self) -> None:
        """Send the pending lines as one batch (in the background)."""
        lines, self._pending, self._pending_bytes = self._pending, [], 0
        if lines:
            self._spawn(self._submit(lines), [custom_id for custom_id, _ in lines])

    async def _submit(self, lines: list[tuple[str, bytes]]) -> None:
        """Upload, create, journal, wait, deliver: one batch round trip (more when the batch meets
        the provider's enqueued token limit: see :meth:`_over_token_limit`)."""
        custom_ids = [custom_id for custom_id, _ in lines]
        if self._given_up is not None:
            self._deliver(custom_ids, {}, Unanswered(self._given_up))
            return
        window = self.settings.window
        content = b"".join(line for _, line in lines)
        try:
            file_id = await self._submitting("upload", functools.partial(self._service.upload, content, custom_ids))
            if self.journal is not None:
                self.journal.uploaded(file_id, custom_ids)
        except (FatalError, RetryableError) as error:
            self._deliver(custom_ids, {}, _not_submitted(error))
            return
        size = len(content)
        del content, lines  # the request file (up to max_bytes) is not held for the hours of the wait
        try:
            outcomes, refused_at = await self._send(file_id, window, custom_ids), time.monotonic()
            while isinstance(outcomes, OverTokenLimit):
                outcomes = await self._over_token_limit(outcomes, file_id, custom_ids, window, size, refused_at)
        finally:
            self._made.pop(file_id, None)
        if outcomes is not None:
            self._hand_out(custom_ids, outcomes, "line missing from its batch")

    async def _send(self, file_id: str, window: str, custom_ids: list[str]) -> Outcomes | Exception:
        """Create a batch over the uploaded ``file_id`` (of the lines ``custom_ids``) and wait for it:
        its outcomes, or the error all its lines get. It counts as out (its tokens enqueued) from its
        creation request on."""
        with self._counted_out():
            try:
                batch_id = await self._create(file_id, window)
            except (Unconfirmed, Unanswered) as error:
                return error
            except (FatalError, RetryableError) as error:
                return _not_submitted(error)
            return await self._wait(batch_id, window, custom_ids)

    @contextlib.contextmanager
    def _counted_out(self) -> Iterator[None]:
        """Count a batch as out (see :meth:`_over_token_limit`) for the block; wake the batches
        waiting for one to finish at its end."""
        self._out += 1
        try:
            yield
        finally:
            self._out -= 1
            self._batch_finished.set()
            self._batch_finished = asyncio.Event()

    async def _create(self, file_id: str, window: str) -> str:
        """Create a batch over the uploaded ``file_id`` and journal it; its id.

        A creation refused or failed (a 429, a 5xx, a timeout) may have made the batch all the same:
        after its Retry-After (else 1, 2, 4 s, at most ``poll_s``), with one warning line (also journaled), the file's
        batches are looked up (:meth:`_look_up`), and a batch found is the one waited for; only a
        list that proves none was made allows creating again, up to ``SUBMIT_ATTEMPTS`` creations.
        The last refusal is raised with its wait, which the client then waits before each line's
        retry; a lookup that cannot tell raises :class:`Unconfirmed`."""
        made = self._made.setdefault(file_id, set())  # this process's batches over the file
        for attempt in range(1, SUBMIT_ATTEMPTS + 1):
            try:
                batch_id = await self._service.create(file_id)
                break
            except RetryableError as error:
                wait = error.retry_after if error.retry_after is not None else self._submit_pause(attempt)
                warn(f"batch creation failed ({short(error.reason, 80)}); its file's batches are looked up in "
                     f"{wait:g} s before it is created again ({attempt} of {SUBMIT_ATTEMPTS})")
                if self.journal is not None:
                    self.journal.refused("creation", error.reason, wait)
                await asyncio.sleep(wait)
                found = await self._look_up(file_id, window, made)
                if found is not None:
                    warn(f"batch {found} was made over file {file_id} all the same: it is waited for, not made again")
                    batch_id = found
                    break
                if attempt == SUBMIT_ATTEMPTS:
                    raise RetryableError(error.reason, wait, None, error.detail) from None
        made.add(batch_id)
        self.batches_created += 1
        if self.journal is not None:
            self.journal.submitted(batch_id, file_id, window)
        return batch_id

    async def _look_up(self, file_id: str, window: str, known: Collection[str]) -> str | None:
        """The batch made over ``file_id`` other than the ``known`` ones, or None when the endpoint's
        list proves none was made. A list that cannot be read is asked again after 1, 2, 4... s (at
        most ``poll_s``), one warning line per streak, for up to ``window``: its lines must not be
        sent (and paid) again while a batch may hold them. Then, or for a list that cannot tell, an
        :class:`Unconfirmed` for its lines (a resume looks again)."""
        deadline = time.monotonic() + window_seconds(window)
        pause, failing = min(self.settings.poll_s, 1.0), None
        while True:
            if self._given_up is not None:
                raise Unanswered(self._given_up)
            try:
                found = await self._service.find(file_id, known)
                if failing is not None:
                    warn(f"the batches of file {file_id} can be listed again")
                return found
            except FatalError as error:
                raise _said(Unconfirmed(f"whether a batch was made over file {file_id} cannot be told "
                                        f"({short(str(error), 120)}); {UNCONFIRMED}")) from None
            except RetryableError as error:
                if failing is None:
                    warn(f"the batches of file {file_id} cannot be listed ({short(error.reason, 80)}); asking again "
                         f"for up to its window of {window}: a batch made over it must not be paid twice")
                failing = error.reason
            if time.monotonic() >= deadline:
                raise _said(Unconfirmed(f"whether a batch was made over file {file_id} cannot be told: its batches "
                                        f"could not be listed for its window of {window} ({short(failing, 80)}); "
                                        f"{UNCONFIRMED}"))
            await asyncio.sleep(pause)
            pause = min(pause * 2, self.settings.poll_s)

    async def _over_token_limit(self, refusal: OverTokenLimit, file_id: str, custom_ids: list[str],
                                window: str, size: int, refused_at: float) -> Outcomes | Exception | None:
        """What to do with a batch the provider failed for its enqueued token limit (said once).

        While other batches of this run are out, the same request file is sent again as a new batch
        once one of them finished (nothing uploaded twice): their tokens made the difference. With
        none out, a batch whose ``size`` bytes surely hold fewer tokens than the limit the provider
        states (:data:`BYTES_PER_TOKEN_AT_LEAST`) meets the organisation's other batches: it is sent
        again every ``poll_s`` until they make room, for its window at most. Else it is over the
        limit alone: its lines go out in two halves, each a batch of its own (None: the halves
        deliver; a half over the limit waits for the other, or is split again, so at most
        ``log2(max_lines)`` levels). A single line over the limit alone fails with one
        :class:`FatalError`, not sent again."""
        if not self._token_limit_said:
            self._token_limit_said = True
            warn(f"the provider's enqueued token limit was reached ({short(refusal.reason, 300)}); a batch over "
                 "it is sent again once this run's earlier batches finished (or, none out, other batches made room), "
                 "and one over it alone in halves")
        if self._out:
            finished = asyncio.ensure_future(self._batch_finished.wait())
            stopped = asyncio.ensure_future(self._stop.wait())
            try:
                await asyncio.wait({finished, stopped}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                finished.cancel()
                stopped.cancel()
            if self._given_up is not None:
                return Unanswered(self._given_up)
            return await self._send(file_id, window, custom_ids)
        limit = _stated_limit(refusal.reason)
        if limit is not None and size // BYTES_PER_TOKEN_AT_LEAST <= limit:
            if time.monotonic() - refused_at > window_seconds(window):
                return FatalError(f"the provider's enqueued token limit stayed full for the batch's window of {window} "
                                  f"({short(refusal.reason, 300)}): other batches of the organisation hold it")
            try:
                await asyncio.wait_for(self._stop.wait(), self.settings.poll_s)
                return Unanswered(self._given_up or "stopped")
            except TimeoutError:
                return await self._send(file_id, window, custom_ids)
        if len(custom_ids) == 1:
            return FatalError(f"the request alone is over the provider's enqueued token limit "
                              f"({short(refusal.reason, 300)}); it is not sent again")
        try:
            lines = await self._service.request_lines(file_id, custom_ids)
        except (FatalError, RetryableError, FileTooLarge) as error:
            return RetryableError(f"batch over the enqueued token limit not split: its request file cannot be "
                                  f"read ({short(str(error), 80)})")
        found = {custom_id for custom_id, _ in lines}
        self._deliver([c for c in custom_ids if c not in found], {},
                      RetryableError("line missing from its request file"))
        half = (len(lines) + 1) // 2
        for part in (lines[:half], lines[half:]):
            if part:
                self._spawn(self._submit(part), [custom_id for custom_id, _ in part])
        return None

    def _submit_pause(self, attempt: int) -> float:
        """Seconds before trying a refused upload or creation again when the provider said no
        Retry-After: 1, 2, 4... (the ``attempt``-th refusal), at most ``poll_s``, as between looks at
        a batch, so that a loop polling every fraction of a second is not held for seconds."""
        return min(2.0 ** (attempt - 1), self.settings.poll_s)

    async def _submitting(self, step: str, send):
        """``send()``'s answer, a refusal retried here (the round's lines stay together) up to
        ``SUBMIT_ATTEMPTS`` times, after its Retry-After or 1, 2, 4... seconds (at most ``poll_s``), one
        warning line each.
        The last refusal is raised with that wait, which the client then waits before each line's retry."""
        for attempt in range(1, SUBMIT_ATTEMPTS + 1):
            try:
                return await send()
            except RetryableError as error:
                wait = error.retry_after if error.retry_after is not None else self._submit_pause(attempt)
                if attempt == SUBMIT_ATTEMPTS:
                    raise RetryableError(error.reason, wait, None, error.detail) from None
                warn(
                    f"batch {step} refused ({short(error.reason, 80)}); trying again in {wait:g} s "
                    f"({attempt} of {SUBMIT_ATTEMPTS})"
                )
                if self.journal is not None:
                    self.journal.refused(step, error.reason, wait)
                await asyncio.sleep(wait)

    async def _from_earlier(self, earlier: Earlier, custom_id: str) -> None:
        """Answer ``custom_id`` from an upload an earlier process journaled (each collected once).

        Each outcome is taken out of the collected batch as it is handed to its call, so an earlier
        batch's replies are not all kept for the rest of the run (``bench.batch --memory``)."""
        task = self._earlier.get(earlier.input_file)
        if task is None:
            task = self._earlier[earlier.input_file] = asyncio.get_running_loop().create_task(
                self._collect_earlier(earlier)
            )
        outcomes = await task
        if not isinstance(outcomes, Exception):
            outcomes = {custom_id: outcomes.pop(custom_id)} if custom_id in outcomes else {}
        self._hand_out([custom_id], outcomes, "line missing from its earlier batch")

    def _hand_out(self, custom_ids: list[str], outcomes: Outcomes | Exception, missing: str) -> None:
        """Deliver a batch's outcomes (a line it lacks: a retryable ``missing``), or its one error
        (given up, failed as a whole) to all."""
        if isinstance(outcomes, Exception):
            self._deliver(custom_ids, {}, outcomes)
        else:
            self._deliver(custom_ids, outcomes, RetryableError(missing))

    async def _wait(self, batch_id: str, window: str, custom_ids: Collection[str]) -> Outcomes | Exception:
        """``batch_id``'s outcomes (its lines sent as ``custom_ids``), or :class:`Unanswered` once it
        is past ``window`` (plus the service's grace) from now unfinished, or once another batch was
        given up (see the module's note). Reading a finished batch's files is bounded by the service
        (:meth:`ProviderBatches.read`), not by this wait: its lines are paid for."""
        if self._given_up is not None:
            return Unanswered(self._given_up)
        finished = await self._unless_stopped(self._service.collect(batch_id),
                                              window_seconds(window) + self._service.grace_s)
        if finished is _NOTHING and self._given_up is None:
            self._give_up(f"{self._service.unanswered(batch_id)} within its window of {window} (--batch-options "
                          "window); nothing more is sent: run the same command again to wait for it again")
        if finished is _NOTHING:
            return Unanswered(self._given_up or "stopped")
        if isinstance(finished, Exception):
            return finished
        outcomes = await self._unless_stopped(self._service.read(finished, custom_ids, window), None)
        return Unanswered(self._given_up or "stopped") if outcomes is _NOTHING else outcomes

    async def _unless_stopped(self, work, timeout: float | None) -> Any:
        """``work``'s result, or :data:`_NOTHING` once ``timeout`` seconds passed or the run stopped
        waiting (``work`` is then cancelled)."""
        task = asyncio.ensure_future(work)
        stopped = asyncio.ensure_future(self._stop.wait())
        try:
            await asyncio.wait({task, stopped}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiting in (task, stopped):
                waiting.cancel()
        return task.result() if task.done() and not task.cancelled() else _NOTHING

    def _give_up(self, reason: str) -> None:
        """Stop waiting for every batch, with one warning line: the pending calls fail, nothing more is sent."""
        self._given_up = reason
        warn(reason)
        self._stop.set()
        pending, self._pending, self._pending_bytes = self._pending, [], 0
        self._deliver([custom_id for custom_id, _ in pending], {}, Unanswered(reason))

    async def _collect_earlier(self, earlier: Earlier) -> Outcomes | Exception:
        """The outcomes of an earlier upload's batch, awaited for the window it was created with;
        nothing when no batch was created over it."""
        batch_id, window = earlier.batch, earlier.window or self.settings.window
        if batch_id is None:  # killed between the upload and the batch's journal line: look it up
            try:
                batch_id = await self._look_up(earlier.input_file, window, ())
            except (Unconfirmed, Unanswered) as error:
                return error
            if batch_id is None:
                return {}  # proven never submitted: its lines are sent now, for the first time
            if self.journal is not None:
                self.journal.submitted(batch_id, earlier.input_file, window)
        with self._counted_out():
            return await self._wait(batch_id, window,
                                    self.journal.sent_in(earlier.input_file) if self.journal else ())

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

    def _spawn(self, coroutine, custom_ids: list[str]) -> None:
        """Run ``coroutine``, the work of the calls ``custom_ids``, in the background; a bug in it
        fails those calls instead of leaving them waiting forever, and no other: the other batches'
        calls go on."""
        task = asyncio.get_running_loop().create_task(self._guarded(coroutine, custom_ids))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _guarded(self, coroutine, custom_ids: list[str]) -> None:
        try:
            await coroutine
        except asyncio.CancelledError:
            raise
        except Exception as error:  # noqa: BLE001 - reported on the calls of this work
            self._deliver(custom_ids, {}, _failure(error))

    async def models(self) -> list[str]:
        """The model ids the endpoint lists, once it proved it can take batches (the run's preflight
        asks this before anything is written; see the services' ``models``)."""
        return await self._service.models()

    async def model_list_body(self) -> bytes:
        """The raw ``/models`` body, as the other transports give it (the client reads what the
        endpoint says of each model from it), once it proved it can take batches."""
        return await self._service.model_list_body()

    async def close(self) -> None:
        """Stop the background work and close the connections (submitted batches stay journaled)."""
        for task in [*self._tasks, *self._earlier.values(), *([self._flusher] if self._flusher else [])]:
            task.cancel()
        await self._service.close()


def _said(error: Exception) -> Exception:
    """``error``, once said in a warning line."""
    warn(str(error))
    return error


def _stated_limit(reason: str) -> int | None:
    """The limit an enqueued-token-limit message states ("... Limit: 2,000,000 enqueued tokens ..."),
    None when it states none."""
    found = _STATED_LIMIT.search(reason)
    return int(found.group(1).replace(",", "")) if found and found.group(1).strip(",") else None


def _not_submitted(error: FatalError | RetryableError) -> Exception:
    """The error the lines of a batch that could not be uploaded or created get. A retryable one
    carries no status: a refused upload must not shrink the client's slots (AIMD)."""
    if isinstance(error, FatalError):
        return FatalError(f"batch not submitted: {error}", error.status)
    return RetryableError(f"batch not submitted: {error.reason}", error.retry_after)


def _failure(error: Exception) -> FatalError:
    """The one error the calls get when a bug in the transport's own work stops them."""
    return FatalError(f"batch transport failed: {type(error).__name__}: {short(str(error))}")


def _retrieved(future: asyncio.Future) -> None:
    """Mark a future's exception as seen (a call cancelled meanwhile must not log it as lost)."""
    if not future.cancelled():
        future.exception()
