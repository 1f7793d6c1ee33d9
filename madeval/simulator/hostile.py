"""A hostile OpenAI-compatible endpoint: the simulator's agents behind a server that misbehaves.

:class:`HostileServer` answers ``POST /v1/chat/completions``, ``GET /v1/models`` and
``GET /health`` like :class:`~madeval.simulator.http.SimulatorServer`, but sabotages a chosen share of chat requests
with one of :data:`MODES`: replies that never end, lie about their length, smuggle a second
response onto the connection, are not JSON or not the right JSON, or break off mid-body. It is a
test device for HTTP clients and for madeval's retry and record keeping
(``tests/llm/test_hostile_endpoint.py``), and ``madeval simulator --hostile MODE`` serves it.

The bytes on the socket are written by hand (an asyncio stream server, not an HTTP library)
because the faults are framing errors that an HTTP library would refuse to produce.

Which requests are sabotaged is deterministic: a request's *fingerprint* is the SHA-256 of its
JSON in a canonical form (so it does not depend on how a client lays the JSON out), and it is
sabotaged when a hash of (seed, fingerprint) falls under ``rate``; the mode, when several are
given, is chosen by the same hash. A retry of a sabotaged request is therefore sabotaged again,
and a re-run of the same evaluation meets the same faults.

Every reply text the server sends ends with a tag line ``[hostile reply <fingerprint>]`` (a
smuggled reply: ``[hostile reply smuggled-N]``), and :attr:`HostileServer.sent` keeps, per tag,
the request's seed, the digest of the text, and whether it went out in a well-formed response
(``proper``). A client that records a reply can thus be checked: the text must be one the server
sent properly, for a request of the same agent.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import socket
import struct
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from madeval.simulator.http import CHAT_PATH, HEALTH_PATH, HEALTHY, MODELS_PATH, Behaviour, LoopbackServer

#: Sabotage modes and what each does to a chat request.
MODES = {
    "trickle": "a well-formed reply sent one byte per interval",
    "endless-chunked": "a chunked body that never ends",
    "huge-length": "Content-Length of 1 TiB, then body bytes until the client gives up",
    "smuggled": "the right reply followed on the same connection by a second, unasked-for response",
    "conflicting-length": "two Content-Length headers that disagree (the first one is right)",
    "invalid-json": "HTTP 200 with a body that breaks off inside the JSON",
    "wrong-shape": "HTTP 200 with valid JSON that is not a chat completion",
    "empty-choices": "HTTP 200 with a chat completion whose choices list is empty",
    "error-200": "HTTP 200 whose body is an OpenAI error object",
    "endless-continue": "'100 Continue' interim responses, one per interval, forever",
    "reset-mid-body": "half the body, then a TCP reset",
    "10mb-reply": "a well-formed reply whose text is 10 MB long",
    "nested-json": "HTTP 200 with JSON lists nested 200,000 deep (400 KB of [[[...]]])",
    "nested-400": "HTTP 400 whose body is JSON lists nested 200,000 deep",
    "lying-usage": "a well-formed reply whose usage.prompt_tokens_details.cached_tokens is no count within "
                   "the prompt (more than it, negative, a float, a string, a boolean, huge, nested)",
}

HUGE_REPLY_BYTES = 10_000_000
#: 400 KB of nested JSON lists: far under any size cap, far past a recursive parser's depth.
NESTED_JSON = b"[" * 200_000 + b"]" * 200_000
HUGE_LENGTH = 1 << 40
STREAM_CHUNK = 64 * 1024
MAX_STREAM_BYTES = 1 << 30  # an endless body stops (and the connection closes) after 1 GiB
MAX_REQUEST_BYTES = 64 * 1024 * 1024
FILLER = "This sentence repeats to make a very long reply. "
#: Variants of ``lying-usage``: what a reply's usage says of its cached prompt tokens.
LYING_DETAILS = (
    lambda prompt: {"cached_tokens": prompt + 1},
    lambda prompt: {"cached_tokens": -1},
    lambda prompt: {"cached_tokens": 0.5},
    lambda prompt: {"cached_tokens": str(prompt)},
    lambda prompt: {"cached_tokens": True},
    lambda prompt: {"cached_tokens": 10 ** 40},
    lambda prompt: {"cached_tokens": {"cached_tokens": {"cached_tokens": 1}}},
    lambda prompt: "cached_tokens",
)
#: Variants of ``wrong-shape``: a completions-API choice, a bare list, a string message, a number.
WRONG_SHAPES = (
    lambda text: {"object": "text_completion", "choices": [{"index": 0, "text": text}]},
    lambda text: [{"role": "assistant", "content": text}],
    lambda text: {"object": "chat.completion", "choices": [{"index": 0, "message": text}]},
    lambda text: {"object": "chat.completion",
                  "choices": [{"index": 0, "message": {"role": "assistant", "content": 42}}]},
)


def check_options(modes: Sequence[str], rate: float, interval_s: float) -> None:
    """Refuse unknown modes, a rate outside [0, 1] and a non-positive interval (ValueError)."""
    unknown = [mode for mode in modes if mode not in MODES]
    if not modes or unknown:
        raise ValueError(f"unknown mode {', '.join(unknown) or '(none)'}; choose from {', '.join(MODES)}")
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"the rate must be between 0 and 1, got {rate}")
    if interval_s <= 0:
        raise ValueError(f"the interval must be positive, got {interval_s}")


@dataclass(frozen=True)
class Sent:
    """A reply text the server sent: for which request, and in what kind of response.

    ``proper`` is True when the response was well-formed HTTP carrying a chat completion for the
    request (slowly, for ``trickle``); ``digest`` is the SHA-256 of the stripped text.
    """

    seed: object
    mode: str | None
    digest: str
    length: int
    proper: bool


@dataclass
class HostileStats:
    """What the hostile server has seen: chat requests, sabotage per mode, requests per seed."""

    requests: int = 0
    sabotaged: dict[str, int] = field(default_factory=dict)
    seeds: list[object] = field(default_factory=list)  # the ``seed`` of each chat request, in order
    crashes: list[str] = field(default_factory=list)  # the server's own unexpected errors (a bug)


class HostileServer(LoopbackServer):
    """The simulator's agents on loopback, with ``rate`` of chat requests sabotaged by ``modes``.

    ``behaviour`` answers a request as in :class:`~madeval.simulator.http.SimulatorServer`.
    ``interval_s`` paces ``trickle`` and ``endless-continue``. ``keep_log`` keeps :attr:`sent` and
    the request seeds in :attr:`stats` (for tests; a long-running server turns it off so memory
    does not grow with the requests served). ``served`` are the model names ``/v1/models`` lists
    (see :class:`~madeval.simulator.http.LoopbackServer`); with ``nested_models`` it answers 400 KB
    of nested JSON lists instead. ``start``/``stop`` and ``base_url``
    match the simulator's server, so :func:`~madeval.simulator.http.run_in_thread` and
    :func:`~madeval.simulator.http.serve_forever` run either.
    """

    def __init__(
        self,
        behaviour: Behaviour,
        modes: Iterable[str],
        *,
        rate: float = 0.2,
        seed: int = 0,
        interval_s: float = 0.5,
        host: str = "127.0.0.1",
        port: int = 0,
        models: Iterable[str] = (),
        keep_log: bool = True,
        served: Iterable[str] = (),
        nested_models: bool = False,
    ):
        check_options(modes, rate, interval_s)
        super().__init__(behaviour, host, port, models, served)
        #: ``GET /v1/models`` answers 200 with :data:`NESTED_JSON` (a start-up check's hostile reply)
        self.nested_models = nested_models
        self.modes = tuple(modes)
        self.rate = rate
        self.seed = seed
        self.keep_log = keep_log
        self.interval_s = interval_s
        self.stats = HostileStats()
        self.sent: dict[str, Sent] = {}
        self._smuggled_ids = itertools.count(1)
        self._tasks: set[asyncio.Task] = set()

    async def start(self) -> None:
        """Bind and start accepting connections; ``self.port`` is the real port afterwards."""
        self._listening(await asyncio.start_server(self._serve, self.host, self.port, limit=MAX_REQUEST_BYTES))

    async def _end_connections(self) -> None:
        """End every connection, endless replies included."""
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def mode_for(self, fingerprint: str) -> str | None:
        """The sabotage of the request with this fingerprint, or None (answered normally)."""
        digest = hashlib.sha256(f"{self.seed}\x1f{fingerprint}".encode()).digest()
        if int.from_bytes(digest[:8], "big") / 2**64 >= self.rate:
            return None
        return self.modes[int.from_bytes(digest[8:12], "big") % len(self.modes)]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """One connection: answer requests in order until the client or a sabotage closes it."""
        task = asyncio.current_task()
        self._tasks.add(task)
        sock = writer.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            while True:
                request = await _read_request(reader, writer)
                if request is None or not await self._answer(writer, *request):
                    break
        except (ConnectionError, ValueError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass  # a client that went away or sent garbage: close the connection
        except asyncio.CancelledError:
            pass  # stop(): end quietly (asyncio logs a connection task that ends cancelled)
        except Exception as exc:  # a bug here: kept for the tests to see, and the connection closed
            self.stats.crashes.append(f"{type(exc).__name__}: {exc}")
        finally:
            self._tasks.discard(task)
            if not writer.transport.is_closing():
                writer.close()

    async def _answer(self, writer: asyncio.StreamWriter, method: str, path: str, body: bytes) -> bool:
        """Answer one request; return whether the connection stays open."""
        if method == "GET" and path == HEALTH_PATH:
            await _respond(writer, HEALTHY[0], HEALTHY[1])
            return True
        if method == "GET" and path == MODELS_PATH:
            body = json.dumps({"object": "list", "data": self.model_entries()}).encode()
            if self.nested_models:
                body = NESTED_JSON
            await _respond(writer, 200, body)
            return True
        if method != "POST" or path != CHAT_PATH:
            await _respond(writer, 404, _error_body(f"Unknown route: {method} {path}"))
            return True
        try:
            request = json.loads(body)
            if not isinstance(request, dict):
                raise ValueError("the request body must be a JSON object")
            text, prompt_tokens, completion_tokens = self.behaviour(request)
        except ValueError as exc:
            await _respond(writer, 400, _error_body(f"Invalid request: {exc}"))
            return True
        fingerprint = _fingerprint(request)
        mode = self.mode_for(fingerprint)
        self.stats.requests += 1
        if self.keep_log:
            self.stats.seeds.append(request.get("seed"))
        if mode is not None:
            self.stats.sabotaged[mode] = self.stats.sabotaged.get(mode, 0) + 1
        model = str(request.get("model") or "simulator")
        self._models.add(model)
        if mode == "10mb-reply":
            text = FILLER * (HUGE_REPLY_BYTES // len(FILLER)) + "\n" + text
        text = f"{text}\n[hostile reply {fingerprint}]"
        details = None
        if mode == "lying-usage":  # the same request always gets the same lie
            details = LYING_DETAILS[int(fingerprint, 16) % len(LYING_DETAILS)](prompt_tokens)
        body = _completion(model, text, prompt_tokens, completion_tokens, details)
        proper = mode in (None, "trickle", "smuggled", "10mb-reply", "lying-usage")
        self._note(fingerprint, request.get("seed"), mode, text, proper)
        send = {None: self._normal, "trickle": self._trickle, "endless-chunked": self._endless_chunked,
                "huge-length": self._huge_length, "smuggled": self._smuggled,
                "conflicting-length": self._conflicting_length, "invalid-json": self._invalid_json,
                "wrong-shape": self._wrong_shape, "empty-choices": self._empty_choices,
                "error-200": self._error_200, "endless-continue": self._endless_continue,
                "reset-mid-body": self._reset_mid_body, "10mb-reply": self._normal,
                "nested-json": self._nested_json, "nested-400": self._nested_400,
                "lying-usage": self._normal}[mode]
        return await send(writer, body, model, text)

    def _note(self, tag: str, seed: object, mode: str | None, text: str, proper: bool) -> None:
        """Keep what was sent under ``tag`` (a proper send is never downgraded by a later one)."""
        if not self.keep_log:
            return
        known = self.sent.get(tag)
        digest = hashlib.sha256(text.strip().encode()).hexdigest()
        self.sent[tag] = Sent(seed, mode, digest, len(text), proper or bool(known and known.proper))

    # Senders: each writes the response to one chat request (``body`` is the proper completion
    # carrying ``text``) and returns whether the connection stays open.

    async def _normal(self, writer, body, model, text) -> bool:
        await _respond(writer, 200, body)
        return True

    async def _trickle(self, writer, body, model, text) -> bool:
        writer.write(_head(200, len(body)))
        for index in range(len(body)):
            writer.write(body[index:index + 1])
            await writer.drain()
            await asyncio.sleep(self.interval_s)
        return True

    async def _endless_chunked(self, writer, body, model, text) -> bool:
        writer.write(_head(200, None, "transfer-encoding: chunked\r\n"))
        prefix = _up_to_content(body)
        chunk = b"%x\r\n%s\r\n" % (STREAM_CHUNK, b"x" * STREAM_CHUNK)
        writer.write(b"%x\r\n%s\r\n" % (len(prefix), prefix))
        await _stream(writer, chunk)
        return False

    async def _huge_length(self, writer, body, model, text) -> bool:
        writer.write(_head(200, HUGE_LENGTH) + _up_to_content(body))
        await _stream(writer, b"x" * STREAM_CHUNK)
        return False

    async def _smuggled(self, writer, body, model, text) -> bool:
        tag = f"smuggled-{next(self._smuggled_ids)}"
        smuggled_text = f"[AGREE] Final Solution: A\n[hostile reply {tag}]"
        self._note(tag, None, "smuggled", smuggled_text, False)
        second = _completion(model, smuggled_text, 1, 1)
        writer.write(_head(200, len(body)) + body + _head(200, len(second)) + second)
        await writer.drain()
        return True

    async def _conflicting_length(self, writer, body, model, text) -> bool:
        extra = f"content-length: {len(body) + 20}\r\n"
        writer.write(_head(200, len(body), extra) + body)
        await writer.drain()
        return True

    async def _invalid_json(self, writer, body, model, text) -> bool:
        await _respond(writer, 200, body[: len(body) // 2])
        return True

    async def _wrong_shape(self, writer, body, model, text) -> bool:
        # ``text`` ends with the request's fingerprint: the same request always gets the same shape.
        shape = WRONG_SHAPES[int(hashlib.sha256(text.encode()).hexdigest(), 16) % len(WRONG_SHAPES)]
        await _respond(writer, 200, json.dumps(shape(text)).encode())
        return True

    async def _empty_choices(self, writer, body, model, text) -> bool:
        data = {"id": "chatcmpl-hostile", "object": "chat.completion", "created": int(time.time()),
                "model": model, "choices": [],
                "usage": {"prompt_tokens": 1, "completion_tokens": 0, "total_tokens": 1}}
        await _respond(writer, 200, json.dumps(data).encode())
        return True

    async def _error_200(self, writer, body, model, text) -> bool:
        await _respond(writer, 200, _error_body("The server had an error while processing your request."))
        return True

    async def _nested_json(self, writer, body, model, text) -> bool:
        await _respond(writer, 200, NESTED_JSON)
        return True

    async def _nested_400(self, writer, body, model, text) -> bool:
        await _respond(writer, 400, NESTED_JSON)
        return True

    async def _endless_continue(self, writer, body, model, text) -> bool:
        while True:
            writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
            await writer.drain()
            await asyncio.sleep(self.interval_s)

    async def _reset_mid_body(self, writer, body, model, text) -> bool:
        writer.write(_head(200, len(body)) + body[: len(body) // 2])
        await writer.drain()
        sock = writer.get_extra_info("socket")
        if sock is not None:  # SO_LINGER 0: close() sends RST instead of FIN
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        writer.transport.abort()
        return False


async def _read_request(reader: asyncio.StreamReader, writer: asyncio.StreamWriter
                        ) -> tuple[str, str, bytes] | None:
    """(method, path, body) of the next request, or None at the end of the connection."""
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError:
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, target, _ = (lines[0].split(" ") + ["", ""])[:3]
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    if length > MAX_REQUEST_BYTES:
        raise ConnectionResetError("request body too large")
    if headers.get("expect", "").lower() == "100-continue":
        writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    body = await reader.readexactly(length)
    return method, target.partition("?")[0], body


async def _stream(writer: asyncio.StreamWriter, chunk: bytes) -> None:
    """Write ``chunk`` again and again, as fast as the client reads, up to MAX_STREAM_BYTES."""
    for _ in range(MAX_STREAM_BYTES // len(chunk)):
        writer.write(chunk)
        await writer.drain()


def _fingerprint(request: dict) -> str:
    """16 hex digits of the SHA-256 of ``request`` as canonical JSON (sorted keys, no spaces)."""
    canonical = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _up_to_content(body: bytes) -> bytes:
    """The start of a completion body, up to and including the quote that opens its text."""
    marker = b'"content": "'
    return body[: body.index(marker) + len(marker)]


def _head(status: int, length: int | None, extra: str = "") -> bytes:
    """A response head; ``length`` None leaves Content-Length out."""
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    size = "" if length is None else f"content-length: {length}\r\n"
    return f"HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\n{size}{extra}\r\n".encode()


async def _respond(writer: asyncio.StreamWriter, status: int, body: bytes) -> None:
    writer.write(_head(status, len(body)) + body)
    await writer.drain()


def _completion(model: str, text: str, prompt_tokens: int, completion_tokens: int, details=None) -> bytes:
    """A ``chat.completion`` JSON body (``details``: its usage's ``prompt_tokens_details``, when given)."""
    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
             "total_tokens": prompt_tokens + completion_tokens}
    if details is not None:
        usage["prompt_tokens_details"] = details
    return json.dumps({
        "id": "chatcmpl-hostile", "object": "chat.completion", "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "logprobs": None, "finish_reason": "stop"}],
        "usage": usage,
    }).encode()


def _error_body(message: str) -> bytes:
    return json.dumps({"error": {"message": message, "type": "server_error", "param": None,
                                 "code": None}}).encode()
