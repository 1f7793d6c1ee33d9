"""OpenAI-compatible HTTP transport for synthetic agents.

:class:`SimulatorServer` answers ``POST /v1/chat/completions`` (non-streaming),
``GET /v1/models``, ``GET /health``, ``GET /stats`` and sglang-router's info probes over
HTTP/1.1 with keep-alive and pipelining, on a plain :class:`asyncio.Protocol` and the standard
library only. What an agent says is decided by a *behaviour* callback; this module adds latency,
fault injection (429, 500, hangs, empty and malformed replies), optional bearer-key checks and
request statistics around it, and, when asked, what makes it behave like one serving replica
(:mod:`.replica`: a concurrency limit with a queue, a prefix cache and a prefill cost).
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import hashlib
import hmac
import itertools
import json
import math
import os
import random
import signal
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Coroutine, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from madeval.errors import UsageError
from madeval.llm.routing import SGLANG_ROUTER_HEADER, VLLM_ROUTER_HEADER
from madeval.simulator.batches import BatchOptions, BatchService
from madeval.simulator.replica import PrefixCache, Replica
from madeval.util import aio

Behaviour = Callable[[dict], tuple[str, int, int]]
"""Request JSON -> (reply text, prompt_tokens, completion_tokens); raises ValueError -> HTTP 400."""

MAX_HEADER_BYTES = 64 * 1024
MAX_BODY_BYTES = 64 * 1024 * 1024
MALFORMED_BODY = b'{"id": "x", "choices": ['
FAULT_KINDS = ("rate_limit", "server_error", "timeout", "empty", "malformed")
CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"
#: What a router polls before it admits a worker (vllm-router 0.1.17: ``--health-check-endpoint``,
#: default ``/health``, 200 expected); like vLLM's, it answers without the API key.
HEALTH_PATH = "/health"
HEALTHY = (200, b'{"status": "ok"}', "")
#: The server's counters as JSON; like /health it answers without the API key.
STATS_PATH = "/stats"
#: What sglang-router 0.3.2 asks a worker it admits (it tolerates 404, then tries the deprecated
#: ``/get_*`` names): SGLang's model and server info. Answered without ``model_path``, which would
#: make the router download that model's tokenizer from the Hugging Face hub. No API key, like /health.
SGLANG_INFO_PATHS = frozenset({"/model_info", "/server_info", "/get_model_info", "/get_server_info"})
SGLANG_INFO = json.dumps({"is_generation": True, "version": "madeval-simulator"}).encode()

_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    413: "Payload Too Large",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    501: "Not Implemented",
    503: "Service Unavailable",
}


@dataclass
class Faults:
    """Fault injection rates, each a probability per request (0..1).

    One uniform draw per chat request picks at most one fault, in the order of
    :data:`FAULT_KINDS`; the rates must therefore add up to at most 1.
    """

    rate_limit: float = 0.0  # HTTP 429 with a JSON error body and ``retry-after: 0``
    server_error: float = 0.0  # HTTP 500 with a JSON error body
    timeout: float = 0.0  # held ``hang_s`` seconds, then answered normally
    empty: float = 0.0  # HTTP 200, a chat.completion whose content is ""
    malformed: float = 0.0  # HTTP 200 with a body that is not valid JSON
    hang_s: float = 30.0
    seed: int | None = None  # seeds the fault RNG; None = unseeded
    #: A quota, as a real API has one: at most this many chat requests per second (a token bucket
    #: holding one second's worth); a request over it is a 429 whose ``Retry-After`` says when the
    #: next one will be served (whole seconds, or an HTTP date with ``retry_after_date``). None: no quota.
    requests_per_s: float | None = None
    retry_after_date: bool = False
    #: Refuse every request with a ``response_format``: 400 (a server that does not take it), or
    #: 500 with a validation error as llama-cpp-python answers OpenAI's json_schema form; None: honour it.
    refuse_response_format: int | None = None

    def __post_init__(self) -> None:
        rates = [getattr(self, kind) for kind in FAULT_KINDS]
        if any(not 0.0 <= rate <= 1.0 for rate in rates) or sum(rates) > 1.0 + 1e-9:
            raise ValueError(f"fault rates must be in [0, 1] and add up to at most 1: {rates}")
        if self.refuse_response_format not in (None, 400, 500):
            raise ValueError(f"refuse_response_format must be 400 or 500: {self.refuse_response_format}")
        if self.hang_s < 0:
            raise ValueError(f"hang_s must be >= 0: {self.hang_s}")
        if self.requests_per_s is not None and not self.requests_per_s > 0:
            raise ValueError(f"requests_per_s must be positive: {self.requests_per_s}")


@dataclass
class ServerStats:
    """What the server has seen and sent so far."""

    requests: int = 0  # chat completion requests received
    by_status: dict[int, int] = field(default_factory=dict)  # responses sent per HTTP status
    faults: dict[str, int] = field(default_factory=dict)  # faults injected per kind
    in_flight: int = 0  # chat requests received but not yet answered
    peak_in_flight: int = 0
    #: Chat requests per (routing header, its value), for the headers the server counts.
    routing_keys: Counter[tuple[str, str]] = field(default_factory=Counter)
    # Kept only when the server acts as a replica (``max_concurrency``, prefix cache, prefill cost):
    running: int = 0  # chat requests holding a concurrency slot
    peak_running: int = 0
    queued: int = 0  # chat requests waiting for a slot
    prompt_tokens_computed: int = 0  # prompt tokens not found in the prefix cache (prefilled)
    prompt_tokens_cached: int = 0  # prompt tokens found in the prefix cache
    cache_blocks: int = 0  # blocks the prefix cache holds
    #: The Files and Batches API's counters (:mod:`.batches`): files, batches created, lines answered.
    batches: dict[str, int] = field(default_factory=dict)

    def as_json(self, **more: int) -> bytes:
        """What ``GET /stats`` answers (``more``: the behaviour's counts, e.g. ``unknown_questions``)."""
        return json.dumps({
            "requests": self.requests, "in_flight": self.in_flight, "running": self.running,
            "peak_running": self.peak_running, "queued": self.queued,
            "prompt_tokens_computed": self.prompt_tokens_computed,
            "prompt_tokens_cached": self.prompt_tokens_cached, "cache_blocks": self.cache_blocks,
            "by_status": {str(status): count for status, count in sorted(self.by_status.items())},
            "faults": self.faults,
            "routing_keys": self.routing_keys_by_header(),
            **more,
            "batches": self.batches,
        }).encode()

    def routing_keys_by_header(self) -> dict[str, dict[str, int]]:
        """Chat requests per routing header (lower case) and value, e.g. ``{"x-session-id": {"3f..": 4}}``."""
        by_header: dict[str, dict[str, int]] = {}
        for (header, value), count in sorted(self.routing_keys.items()):
            by_header.setdefault(header, {})[value] = count
        return by_header


class LoopbackServer:
    """What the simulator's servers share: the behaviour, the address, the served model names,
    ``base_url`` and ``stop`` (:class:`SimulatorServer`, :class:`~madeval.simulator.hostile.HostileServer`).

    A subclass's ``start`` binds a listening server and hands it to :meth:`_listening`; its
    :meth:`_end_connections` ends the open connections when the server stops.
    """

    def __init__(self, behaviour: Behaviour, host: str, port: int, models: Iterable[str],
                 served: Iterable[str] = ()):
        self.behaviour = behaviour
        self.host = host
        self.port = port
        self._models = {"simulator", *models}  # ``models``: names with their own agent profiles
        #: The names ``GET /v1/models`` lists when given (vLLM's ``--served-model-name``): only these,
        #: not "simulator" nor the names asked for; otherwise every name known so far.
        self.served = tuple(served)
        self._server: asyncio.Server | None = None

    def model_entries(self) -> list[dict[str, object]]:
        """The ``data`` of a ``GET /v1/models`` answer (see :attr:`served`)."""
        return [{"id": model, "object": "model", "created": 0, "owned_by": "madeval",
                 **self._fingerprint(model, "fingerprint")} for model in (self.served or sorted(self._models))]

    def _fingerprint(self, model: str, key: str) -> dict[str, str]:
        """``{key: what the behaviour reports about model}`` (its ``fingerprint(model)``), or ``{}``."""
        describe = getattr(self.behaviour, "fingerprint", None)
        return {key: describe(model)} if describe is not None else {}

    def _listening(self, server: asyncio.Server) -> None:
        """Keep the bound ``server``; ``self.port`` is the real port afterwards."""
        self._server = server
        self.port = server.sockets[0].getsockname()[1]

    async def _end_connections(self) -> None:
        """End every open connection (unanswered requests included)."""
        raise NotImplementedError

    async def stop(self) -> None:
        """Stop accepting, end the open connections, and wait."""
        if self._server is None:
            return
        self._server.close()
        await self._end_connections()
        await self._server.wait_closed()
        await asyncio.sleep(0)  # let the transports deliver connection_lost
        self._server = None

    @property
    def base_url(self) -> str:
        """The OpenAI ``base_url`` of this server, e.g. ``http://127.0.0.1:PORT/v1``."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/v1"


class SimulatorServer(LoopbackServer):
    """An OpenAI-compatible chat completions server on loopback around a behaviour callback.

    The behaviour runs on the server's event loop, once per answered chat request (not for
    requests that a rate_limit, server_error, empty or malformed fault answers), so it must be
    quick. Chat responses, errors included, are sent ``latency_s`` after the request arrived,
    and ``faults.hang_s`` later still when a timeout fault was drawn; an answered request also
    takes ``decode_s_per_token`` for each token of its reply, as a server decoding it would.

    As a replica (all off by default): at most ``max_concurrency`` answered requests are served at
    once, the others wait in a queue; with ``prefix_cache_tokens`` a prefix cache of that many
    tokens in blocks of ``block_tokens`` counts each prompt's cached and computed tokens; a served
    request holds its slot ``latency_s`` plus ``prefill_s_per_token`` per computed token.
    Error and fault responses skip the replica and keep the plain timing.
    """

    def __init__(
        self,
        behaviour: Behaviour,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency_s: float = 0.0,
        faults: Faults | None = None,
        api_key: str | None = None,
        models: Iterable[str] = (),
        served: Iterable[str] = (),
        routing_headers: Iterable[str] = (VLLM_ROUTER_HEADER, SGLANG_ROUTER_HEADER),
        max_concurrency: int | None = None,
        prefix_cache_tokens: int | None = None,
        block_tokens: int = 16,
        prefill_s_per_token: float = 0.0,
        batch_options: BatchOptions | None = None,
        decode_s_per_token: float = 0.0,
    ):
        super().__init__(behaviour, host, port, models, served)
        self.latency_s = latency_s
        self.decode_s_per_token = decode_s_per_token
        self._routing_headers = tuple(name.lower() for name in routing_headers)  # counted in stats
        self.faults = faults or Faults()
        self.stats = ServerStats()
        # Only a digest of the expected header is kept, never the key itself.
        self._auth_digest = None if api_key is None else _digest(f"Bearer {api_key}")
        self._rng = random.Random(self.faults.seed)
        rates = [getattr(self.faults, kind) for kind in FAULT_KINDS]
        self._thresholds = list(zip(FAULT_KINDS, itertools.accumulate(rates), strict=True))
        self._ids = itertools.count(1)
        self._quota = Quota(self.faults.requests_per_s) if self.faults.requests_per_s else None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._connections: set[_Connection] = set()
        cache = None if prefix_cache_tokens is None else PrefixCache(prefix_cache_tokens, block_tokens)
        wanted = max_concurrency is not None or cache is not None or prefill_s_per_token > 0
        self._replica = Replica(self.stats, max_concurrency=max_concurrency, cache=cache,
                                prefill_s_per_token=prefill_s_per_token) if wanted else None
        #: ``/v1/files`` and ``/v1/batches``: each line answered by :meth:`_chat`, as a chat request is
        #: (None: a server without the Batch API).
        self.batches = BatchService(self._batch_line, batch_options)
        self.stats.batches = self.batches.counts

    async def start(self) -> None:
        """Bind and start accepting connections; ``self.port`` is the real port afterwards."""
        self._loop = asyncio.get_running_loop()
        self._listening(await self._loop.create_server(lambda: _Connection(self), self.host, self.port, backlog=1024))

    async def _end_connections(self) -> None:
        """Drop the open connections, unanswered requests included."""
        for connection in list(self._connections):
            connection.close()

    def _handle(
        self, connection: _Connection, method: str, target: str, headers: dict, body: bytes
    ) -> None:
        """Answer one parsed request on ``connection`` (in request order)."""
        path = target.partition("?")[0]
        is_chat = method == "POST" and path == CHAT_PATH
        delay = 0.0
        if is_chat:
            stats = self.stats
            stats.requests += 1
            stats.in_flight += 1
            stats.peak_in_flight = max(stats.peak_in_flight, stats.in_flight)
            for name in self._routing_headers:
                if name in headers:
                    stats.routing_keys[name, headers[name]] += 1
            delay = self.latency_s
        if method == "GET" and path == HEALTH_PATH:
            response = HEALTHY
        elif method == "GET" and path == STATS_PATH:
            unknown = getattr(getattr(self.behaviour, "stats", None), "unknown_questions", None)
            more = {} if unknown is None else {"unknown_questions": unknown}
            response = (200, self.stats.as_json(**more), "")
        elif method == "GET" and path in SGLANG_INFO_PATHS:
            response = (200, SGLANG_INFO, "")
        elif self._auth_digest is not None and not hmac.compare_digest(
            _digest(headers.get("authorization", "")), self._auth_digest
        ):
            response = _error(401, "Incorrect or missing API key.", "invalid_request_error",
                              "invalid_api_key")
        elif is_chat:
            response, hang, served = self._chat(body)
            delay += self.faults.hang_s if hang else 0.0
            if served is not None:  # the reply's tokens, decoded one after another
                delay += served.completion_tokens * self.decode_s_per_token
            if self._replica is not None and served is not None:
                connection.respond(response, 0.0, is_chat, wait=self._replica.serve(served.messages, delay),
                                   then=served.with_cached)
                return
        elif method == "GET" and path == MODELS_PATH:
            response = self._model_list()
        elif self.batches is not None and (
            answer := self.batches.handle(method, path, headers, body, target.partition("?")[2])
        ) is not None:
            response = answer
        else:
            response = _error(404, f"Unknown route: {method} {path}", "invalid_request_error",
                              "unknown_url")
        connection.respond(response, delay, is_chat)

    def _batch_line(self, body: bytes) -> tuple[int, bytes]:
        """The status and body answering one line of a batch: as a chat request is answered, its
        prompt counted by the prefix cache (no slot or delay: the batch is worked through at once)."""
        response, _, served = self._chat(body)
        if self._replica is not None and served is not None:
            return response[0], served.with_cached(self._replica.admit(served.messages))
        return response[:2]

    def _chat(self, body: bytes) -> tuple[tuple[int, bytes, str], bool, _Served | None]:
        """The response to a chat completion request, whether to hang before sending it, and what
        the behaviour answered (None for errors and faults), to report the prefix cache's share."""
        try:
            request = json.loads(body)
        except ValueError:
            return _invalid("The request body is not valid JSON.", "invalid_json"), False, None
        if not isinstance(request, dict):
            return _invalid("The request body must be a JSON object.", "invalid_request"), False, None
        if request.get("stream"):
            message = "Streaming is not supported by the madeval simulator; send stream=false."
            return _invalid(message, "stream_not_supported"), False, None
        model = request.get("model")
        model = model if isinstance(model, str) else "simulator"
        self._models.add(model)
        refusal = self.faults.refuse_response_format
        if refusal is not None and "response_format" in request:
            self.stats.faults["response_format"] = self.stats.faults.get("response_format", 0) + 1
            if refusal == 400:
                return _invalid("response_format is not supported.", "unsupported_parameter"), False, None
            return _error(500, "1 validation error for CreateChatCompletionRequest response_format",
                          "internal_server_error", "validation_error"), False, None
        if self._quota is not None and (wait := self._quota.take()) > 0:
            self.stats.faults["quota"] = self.stats.faults.get("quota", 0) + 1
            header = f"retry-after: {retry_after_value(wait, self.faults.retry_after_date)}\r\n"
            return _error(429, "Rate limit reached: requests per second over the quota (simulated).",
                          "rate_limit_error", "rate_limit_exceeded", header), False, None
        fault = self._draw_fault()
        if fault is not None:
            self.stats.faults[fault] = self.stats.faults.get(fault, 0) + 1
        if fault == "rate_limit":
            return _error(429, "Rate limit reached (simulated).", "rate_limit_error",
                          "rate_limit_exceeded", "retry-after: 0\r\n"), False, None
        if fault == "server_error":
            return _error(500, "The server had an error (simulated).", "server_error",
                          "internal_error"), False, None
        if fault == "malformed":
            return (200, MALFORMED_BODY, ""), False, None
        if fault == "empty":
            return (200, self._completion(model, "", 0, 0), ""), False, None
        hang = fault == "timeout"
        try:
            text, prompt_tokens, completion_tokens = self.behaviour(request)
            completion = self._completion(model, text, prompt_tokens, completion_tokens)
        except ValueError as exc:
            return _invalid(str(exc) or "Invalid request.", "invalid_request"), hang, None
        except Exception as exc:  # a broken behaviour must not take the connection down
            message = f"The behaviour failed: {type(exc).__name__}: {exc}"
            return _error(500, message, "server_error", "behaviour_error"), hang, None
        # A hung answer is a fault: it skips the replica (no slot held for hang_s, no cache counted).
        served = _Served(self, request.get("messages"), model, text, prompt_tokens, completion_tokens)
        return (200, completion, ""), hang, None if hang else served

    def _draw_fault(self) -> str | None:
        """One uniform draw against the cumulative fault rates."""
        u = self._rng.random()
        for kind, threshold in self._thresholds:
            if u < threshold:
                return kind
        return None

    def _completion(self, model: str, text: str, prompt_tokens: int, completion_tokens: int,
                    cached_tokens: int | None = None) -> bytes:
        """A ``chat.completion`` JSON body; with ``cached_tokens``, its usage says how many prompt
        tokens the prefix cache served (``prompt_tokens_details.cached_tokens``, as vLLM with
        ``--enable-prompt-tokens-details`` and OpenAI do; without a prefix cache it says nothing)."""
        details = {} if cached_tokens is None else {"prompt_tokens_details": {"cached_tokens": cached_tokens}}
        return json.dumps({
            "id": f"chatcmpl-sim-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            **self._fingerprint(model, "system_fingerprint"),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": None,
                "finish_reason": "stop",
            }],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
                **details,
            },
        }).encode()

    def _model_list(self) -> tuple[int, bytes, str]:
        """The ``GET /v1/models`` response: "simulator", the names given as ``models`` and every
        model name seen so far."""
        return 200, json.dumps({"object": "list", "data": self.model_entries()}).encode(), ""


class _Served:
    """A chat request the behaviour answered, to answer again with the prefix cache's share."""

    __slots__ = ("server", "messages", "model", "text", "prompt_tokens", "completion_tokens")

    def __init__(self, server: SimulatorServer, messages: Any, model: str, text: str, prompt_tokens: int,
                 completion_tokens: int):
        self.server, self.messages, self.model, self.text = server, messages, model, text
        self.prompt_tokens, self.completion_tokens = prompt_tokens, completion_tokens

    def with_cached(self, cached: tuple[int, int]) -> bytes:
        """The body reporting the cached share of the prompt: ``cached`` is (cached, all) tokens as the
        prefix cache counts them (:func:`madeval.llm.prefix_reuse.prompt_tokens`), scaled to the
        behaviour's own prompt token count so that cached never exceeds prompt tokens."""
        hits, total = cached
        share = round(self.prompt_tokens * hits / total) if total else 0
        return self.server._completion(self.model, self.text, self.prompt_tokens, self.completion_tokens,
                                       min(share, self.prompt_tokens))


class _Pending:
    """A response waiting for its delay or for the responses queued before it."""

    __slots__ = ("status", "body", "extra", "is_chat", "ready", "timer")

    def __init__(self, status: int, body: bytes, extra: str, is_chat: bool):
        self.status, self.body, self.extra, self.is_chat = status, body, extra, is_chat
        self.ready = False
        self.timer: asyncio.TimerHandle | asyncio.Task | None = None  # what makes it ready


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: incremental request parsing and in-order responses."""

    def __init__(self, server: SimulatorServer):
        self._server = server
        self._transport: asyncio.Transport | None = None
        self._buffer = bytearray()
        self._head: tuple[str, str, dict, int, bool] | None = None  # parsed head awaiting its body
        self._queue: deque[_Pending] = deque()
        self._keep_alive = True  # False once a request asked to close: later input is ignored

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._transport = transport
        self._server._connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._server._connections.discard(self)
        stats = self._server.stats
        for pending in self._queue:
            if pending.timer is not None:
                pending.timer.cancel()
            if pending.is_chat:
                stats.in_flight -= 1
        self._queue.clear()

    def close(self) -> None:
        """Close the connection, abandoning unanswered requests."""
        if self._transport is not None:
            self._transport.close()

    def data_received(self, data: bytes) -> None:
        if not self._keep_alive:
            return
        self._buffer += data
        while self._keep_alive:
            if self._head is None and not (self._buffer and self._parse_head()):
                return
            method, target, headers, length, keep_alive = self._head
            if len(self._buffer) < length:
                return
            body = bytes(self._buffer[:length])
            del self._buffer[:length]
            self._head = None
            self._keep_alive = keep_alive
            self._server._handle(self, method, target, headers, body)

    def _parse_head(self) -> bool:
        """Parse the request line and headers at the front of the buffer into ``self._head``."""
        end = self._buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self._buffer) > MAX_HEADER_BYTES:
                self._fail(431, "The request headers are too large.")
            return False
        lines = self._buffer[:end].decode("latin-1").split("\r\n")
        del self._buffer[: end + 4]
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            self._fail(400, "Malformed HTTP request line.")
            return False
        method, target, version = parts
        headers = {}
        for line in lines[1:]:
            name, colon, value = line.partition(":")
            if not colon:
                self._fail(400, "Malformed HTTP header line.")
                return False
            headers[name.strip().lower()] = value.strip()
        if "transfer-encoding" in headers:
            self._fail(501, "Chunked request bodies are not supported; send Content-Length.")
            return False
        length = headers.get("content-length", "0")
        if not (length.isascii() and length.isdigit()):
            self._fail(400, "Invalid Content-Length.")
            return False
        length = int(length)
        if length > MAX_BODY_BYTES:
            self._fail(413, "The request body is too large.")
            return False
        expects = headers.get("expect", "").lower() == "100-continue"
        if expects and not self._queue and len(self._buffer) < length:
            self._transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")  # what curl waits for
        connection = headers.get("connection", "").lower()
        if version == "HTTP/1.0":
            keep_alive = "keep-alive" in connection
        else:
            keep_alive = "close" not in connection
        self._head = (method, target, headers, length, keep_alive)
        return True

    def _fail(self, status: int, message: str) -> None:
        """Answer an unparseable request and close the connection after it."""
        self._keep_alive = False
        self.respond(_error(status, message, "invalid_request_error", "bad_request"), 0.0, False)

    def respond(self, response: tuple[int, bytes, str], delay: float, is_chat: bool,
                wait: Coroutine | None = None, then: Callable[[Any], bytes] | None = None) -> None:
        """Send ``response`` after ``delay`` seconds, or once ``wait`` is done when given (its
        body replaced by ``then(what wait returned)`` when given), and after every earlier response."""
        status, body, extra = response
        if wait is not None:
            pending = _Pending(status, body, extra, is_chat)
            self._queue.append(pending)
            pending.timer = self._server._loop.create_task(self._after(wait, pending, then))
            return
        if delay <= 0 and not self._queue:
            self._write(status, body, extra, is_chat, close=not self._keep_alive)
            return
        pending = _Pending(status, body, extra, is_chat)
        self._queue.append(pending)
        if delay > 0:
            pending.timer = self._server._loop.call_later(delay, self._ready, pending)
        else:
            pending.ready = True

    async def _after(self, wait: Coroutine, pending: _Pending, then: Callable[[Any], bytes] | None) -> None:
        """Await ``wait``, then send ``pending`` (its body from ``then``, when given); sent even if
        ``wait`` failed, so that no client waits forever (a dropped connection cancels this, and then
        nothing is sent)."""
        try:
            result = await wait
            if then is not None:
                pending.body = then(result)
        finally:
            self._ready(pending)

    def _ready(self, pending: _Pending) -> None:
        """A delayed response is due: send it and whatever it was holding back."""
        pending.ready, pending.timer = True, None
        if self._transport.is_closing():
            return  # the client went away; connection_lost accounts for the queue
        queue = self._queue
        while queue and queue[0].ready:
            head = queue.popleft()
            last = not queue and not self._keep_alive
            self._write(head.status, head.body, head.extra, head.is_chat, close=last)

    def _write(self, status: int, body: bytes, extra: str, is_chat: bool, close: bool) -> None:
        """Write one response and account for it; close the connection if asked to."""
        head = (f"HTTP/1.1 {status} {_REASONS[status]}\r\ncontent-type: application/json\r\n"
                f"content-length: {len(body)}\r\n")
        if close:
            head += "connection: close\r\n"
        stats = self._server.stats  # accounted first, so a client never sees stale stats
        stats.by_status[status] = stats.by_status.get(status, 0) + 1
        if is_chat:
            stats.in_flight -= 1
        self._transport.write(b"".join((head.encode(), extra.encode(), b"\r\n", body)))
        if close:
            self._transport.close()


class Quota:
    """A token bucket: ``rate`` requests a second, a burst of one second's worth."""

    def __init__(self, rate: float):
        self.rate = rate
        self._tokens = rate
        self._refilled = time.monotonic()

    def take(self) -> float:
        """Take a token: 0 when there was one, else the seconds until there will be one."""
        now = time.monotonic()
        self._tokens = min(self.rate, self._tokens + (now - self._refilled) * self.rate)
        self._refilled = now
        if self._tokens >= 1:
            self._tokens -= 1
            return 0.0
        return (1 - self._tokens) / self.rate


def retry_after_value(wait: float, as_date: bool) -> str:
    """A ``Retry-After`` value at least ``wait`` seconds away: whole seconds, or an HTTP date."""
    if as_date:
        return email.utils.formatdate(math.ceil(time.time() + wait), usegmt=True)
    return str(max(1, math.ceil(wait)))


def _error(
    status: int, message: str, kind: str, code: str, extra: str = ""
) -> tuple[int, bytes, str]:
    """An OpenAI-shaped error response: (status, JSON body, extra header lines)."""
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return status, json.dumps(body).encode(), extra


def _invalid(message: str, code: str) -> tuple[int, bytes, str]:
    """An HTTP 400 ``invalid_request_error`` response."""
    return _error(400, message, "invalid_request_error", code)


def _digest(text: str) -> bytes:
    """SHA-256 of ``text``, so that secrets are compared without being kept."""
    return hashlib.sha256(text.encode()).digest()


@contextlib.contextmanager
def run_in_thread(server: SimulatorServer) -> Iterator[SimulatorServer]:
    """Run ``server`` on its own event loop in a daemon thread; yield it started, stop it on exit.

    For synchronous tests, and for async code that must not share the server's loop.
    """
    loop = aio.new_event_loop()
    started = threading.Event()
    failure: list[BaseException] = []

    def main() -> None:
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(server.start())
        except BaseException as exc:  # reported to the caller below
            failure.append(exc)
            started.set()
            loop.close()
            return
        started.set()
        loop.run_forever()
        loop.close()

    thread = threading.Thread(target=main, name="madeval-simulator", daemon=True)
    thread.start()
    started.wait()
    if failure:
        raise failure[0]
    try:
        yield server
    finally:
        asyncio.run_coroutine_threadsafe(server.stop(), loop).result()
        loop.call_soon_threadsafe(loop.stop)
        thread.join()


def serve_forever(server: LoopbackServer, ready: Callable[[LoopbackServer], None] | None = None) -> None:
    """Run ``server`` until SIGINT or SIGTERM, then stop it cleanly. Blocking; for the CLI.

    ``ready`` is called once the server listens (``server.port`` is then the real port). An address
    it cannot listen on (a port in use, a privileged port, a host not of this machine) is a
    one-line :class:`UsageError`."""

    async def main() -> None:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        try:
            await server.start()
        except OSError as error:  # uvloop words it "error while attempting to bind on address ..."
            why = os.strerror(error.errno) if error.errno else str(error)
            raise UsageError(f"cannot listen on {server.host}:{server.port}: {why} (choose another --port, "
                             "or --port 0 for a free one)") from None
        if ready is not None:
            ready(server)
        try:
            await stop.wait()
        finally:
            await server.stop()

    aio.run(main())
