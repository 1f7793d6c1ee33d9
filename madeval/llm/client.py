"""Every LLM call goes through :class:`LLMClient`.

It speaks to any OpenAI-compatible endpoint through a transport (aiohttp by default, see
:mod:`madeval.llm.transports`) and adds what an evaluation harness needs: bounded concurrency
(global and per endpoint), retries with exponential backoff and full jitter on 429, 5xx, timeouts,
connection errors and malformed or empty replies (never on what a retry cannot change: a 400-class
error other than 408/409/429, a request the HTTP client refuses to send, a body over the size
limit), the response cache, and token and latency accounting. API keys and the credentials a base
URL may carry live only inside the transports and are redacted from every error message; what is
shown of an endpoint is its public URL (no user info, no query).
"""

from __future__ import annotations

import asyncio
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from ..errors import LLMError, UsageError
from .cache import ResponseCache, request_key
from .endpoint_url import EndpointURL, public_url
from .structured import JSON_SCHEMA, ReplySchema, refuses_response_format
from .transports import (
    DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TRANSPORT, TRANSPORTS, ClientSideError, FatalError, RetryableError,  # noqa: F401
    transport_class,
)

#: Sampling defaults of the MALLM paper, Appendix E (seed 000).
DEFAULT_GENERATION = {
    "temperature": 1.0,
    "top_p": 1.0,
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
    "max_tokens": 1024,
}

@dataclass(frozen=True)
class Endpoint:
    """An OpenAI-compatible server: where it is, its key, and how hard to use it."""

    name: str
    base_url: str = field(repr=False)  # may carry credentials: see public_url
    api_key: str = field(repr=False, default="-")
    concurrency: int = 64
    timeout_s: float = 120.0
    transport: str = DEFAULT_TRANSPORT
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    #: The ``response_format`` form it accepts (:mod:`madeval.llm.structured`).
    response_format: str = JSON_SCHEMA

    @property
    def public_url(self) -> str:
        """The base URL as shown and stored: without user info and query string."""
        return public_url(self.base_url)

    def redact(self, text: str) -> str:
        """``text`` without this endpoint's API key or URL credentials."""
        if len(self.api_key) >= 4:
            text = text.replace(self.api_key, "***")
        return EndpointURL.parse(self.base_url).redact(text)


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently a failed call is retried."""

    max_attempts: int = 8
    base_delay_s: float = 0.5
    max_delay_s: float = 20.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Full-jitter exponential backoff for the given (1-based) failed attempt."""
        ceiling = min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1)))
        wait = random.uniform(0, ceiling)
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.max_delay_s))
        return wait


@dataclass
class Completion:
    """One finished call: the reply text and what it cost.

    ``latency_s`` is the time the call held a concurrency slot, summed over its attempts: waiting
    for a slot and the backoff between attempts are not part of it.
    """

    text: str
    prompt_tokens: int
    completion_tokens: int
    latency_s: float
    attempts: int
    cached: bool
    errors: list[str]


@dataclass
class ClientStats:
    """Running totals, read by the progress bar and the benchmark."""

    calls: int = 0
    cached: int = 0
    retries: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    in_flight_seconds: float = 0.0
    _since: float = field(default_factory=time.perf_counter)
    #: Called after every attempt and cache hit (the progress bar redraws from it, throttled).
    listener: Callable[[], None] | None = field(default=None, repr=False)

    def started(self) -> None:
        self._account()
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def finished(self) -> None:
        self._account()
        self.in_flight -= 1
        self.changed()

    def changed(self) -> None:
        """Tell the listener, if any, that the counts moved."""
        if self.listener is not None:
            self.listener()

    def finished_accounting(self) -> None:
        """Bring ``in_flight_seconds`` up to now (call before reading it)."""
        self._account()

    def _account(self) -> None:
        now = time.perf_counter()
        self.in_flight_seconds += self.in_flight * (now - self._since)
        self._since = now


class ResponseFormatRefused(Exception):
    """The endpoint refused the ``response_format`` of a request (not retried)."""


class LLMClient:
    """Async access to one or more endpoints with retries, limits and a cache."""

    def __init__(
        self,
        endpoints: dict[str, Endpoint],
        *,
        concurrency: int = 64,
        cache: ResponseCache | None = None,
        retry: RetryPolicy | None = None,
    ):
        self.endpoints = endpoints
        self.cache = cache
        self.retry = retry or RetryPolicy()
        self.stats = ClientStats()
        self._global = asyncio.Semaphore(concurrency)
        self._per_endpoint = {name: asyncio.Semaphore(e.concurrency) for name, e in endpoints.items()}
        #: Endpoints that refused a ``response_format``: asked with the text prompts alone from then on.
        self.refuse_response_format: set[str] = set()
        self._transports = {
            name: transport_class(e.transport)(e.base_url, e.api_key, e.timeout_s,
                                               max_response_bytes=e.max_response_bytes)
            for name, e in endpoints.items()
        }

    async def complete(
        self,
        endpoint: str,
        model: str,
        messages: list[dict[str, str]],
        params: dict[str, Any],
        scope: tuple[Any, ...],
        headers: dict[str, str] | None = None,
        reply: ReplySchema | None = None,
    ) -> Completion:
        """Return the reply to ``messages``, from the cache when the same request was made before.

        ``headers`` are sent with this call only (the routing key); they are not part of the cache
        key, so a reply cached without them, or with other ones, is still a hit. With ``reply``,
        the reply is asked in that schema (``response_format`` in the endpoint's form), unless the
        endpoint refused one before: a refusal is not retried, it sends this call and every later
        one to that endpoint without it, and prints one warning."""
        if reply is not None and endpoint not in self.refuse_response_format:
            form = reply.response_format(self.endpoints[endpoint].response_format)
            try:
                return await self._complete(endpoint, model, messages, {**params, "response_format": form},
                                            scope, headers)
            except ResponseFormatRefused as refusal:
                self._refused(endpoint, str(refusal))
        return await self._complete(endpoint, model, messages, params, scope, headers)

    def _refused(self, endpoint: str, why: str) -> None:
        """Note that ``endpoint`` refuses ``response_format``; warn the first time."""
        if endpoint in self.refuse_response_format:
            return
        self.refuse_response_format.add(endpoint)
        print(f"madeval: warning: endpoint '{endpoint}' refused structured answers ({why}); "
              "asking it with the text prompts only", file=sys.stderr)

    async def _complete(
        self, endpoint: str, model: str, messages: list[dict[str, str]], params: dict[str, Any],
        scope: tuple[Any, ...], headers: dict[str, str] | None,
    ) -> Completion:
        """The reply from the cache, else from the endpoint (cached when it has text)."""
        key = None
        if self.cache is not None:
            request = {"base_url": self.endpoints[endpoint].public_url, "model": model, "messages": messages, **params}
            key = request_key(request, scope)
            hit = self.cache.get(key)
            if hit is not None:
                self.stats.cached += 1
                self.stats.changed()
                return Completion(hit[0], hit[1], hit[2], 0.0, 0, True, [])
        completion = await self._call_with_retries(endpoint, model, messages, params, headers)
        if key is not None and completion.text:  # an empty last reply is never reused
            self.cache.put(key, completion.text, completion.prompt_tokens, completion.completion_tokens)
        return completion

    async def _call_with_retries(
        self, endpoint: str, model: str, messages: list[dict[str, str]], params: dict[str, Any],
        headers: dict[str, str] | None = None,
    ) -> Completion:
        transport = self._transports[endpoint]
        errors: list[str] = []
        in_slot = 0.0  # the latency: seconds holding a slot (queueing for it and backoff excluded)
        for attempt in range(1, self.retry.max_attempts + 1):
            retry_after = None
            # The endpoint's slot first: a call queued behind a slow endpoint must not hold one
            # of the global slots that calls to other endpoints could use meanwhile.
            async with self._per_endpoint[endpoint], self._global:
                if "response_format" in params and endpoint in self.refuse_response_format:
                    raise ResponseFormatRefused("refused while this call waited")  # not sent again
                acquired = time.perf_counter()
                self.stats.started()
                try:
                    text, prompt_tokens, completion_tokens = await transport.chat(
                        model, messages, params, headers=headers)
                except FatalError as error:
                    if "response_format" in params and refuses_response_format(error.status, str(error)):
                        raise ResponseFormatRefused(self.redact(str(error))) from None
                    self.stats.failures += 1
                    raise LLMError(self.redact(f"{endpoint}: {error} (not retried)")) from None
                except RetryableError as error:
                    if "response_format" in params and refuses_response_format(error.status, error.detail):
                        raise ResponseFormatRefused(self.redact(f"{error.reason}: {error.detail}")) from None
                    errors.append(self.redact(error.reason))
                    retry_after = error.retry_after
                else:
                    # An empty text is what the model said: kept when every attempt gave it. A
                    # reply with no text at all (content missing or null) is never recorded.
                    if text or (text is not None and attempt == self.retry.max_attempts):
                        if not text:
                            errors.append("empty reply")
                        self.stats.calls += 1
                        self.stats.prompt_tokens += prompt_tokens
                        self.stats.completion_tokens += completion_tokens
                        elapsed = in_slot + time.perf_counter() - acquired
                        return Completion(
                            text, prompt_tokens, completion_tokens, elapsed, attempt, False, errors
                        )
                    errors.append("empty reply" if text is not None else "malformed reply: no text")
                finally:
                    in_slot += time.perf_counter() - acquired
                    self.stats.finished()
            if attempt < self.retry.max_attempts:
                self.stats.retries += 1
                await asyncio.sleep(self.retry.delay(attempt, retry_after))
        self.stats.failures += 1
        raise LLMError(f"{endpoint}: gave up after {len(errors)} attempts ({', '.join(errors[-3:])})")

    @property
    def transports(self) -> list[Any]:
        """The transports of the endpoints (the batch transport is configured through them)."""
        return list(self._transports.values())

    async def preflight(self) -> None:
        """Check every endpoint answers before anything is written; else a one-line UsageError.

        Unreachable (refused, timed out, not HTTP) or answering ``/models`` with a 5xx (a proxy
        or gateway with nothing behind it), a refused key (401, 403) and a URL or key the HTTP
        client cannot send are all refused. Any other answer means the server is there: some
        servers do not implement ``/models``.
        """
        for name, endpoint in self.endpoints.items():
            shown = endpoint.public_url
            try:
                await self._transports[name].models()
            except ClientSideError as error:
                raise UsageError(f"endpoint {shown}: {endpoint.redact(str(error))}") from None
            except RetryableError as error:
                if error.status is not None and error.status < 500:  # 408, 409, 429: it is there
                    continue
                raise UsageError(f"cannot reach endpoint {shown} ({endpoint.redact(error.reason)})") from None
            except FatalError as error:
                if error.status in (401, 403):
                    raise UsageError(f"endpoint {shown} refused the API key (HTTP {error.status})") from None

    async def list_models(self, endpoint: str) -> list[str]:
        """The model ids an endpoint lists (empty when it lists none or cannot list)."""
        try:
            return await self._transports[endpoint].models()
        except (RetryableError, FatalError):
            return []

    def redact(self, text: str) -> str:
        """``text`` with every configured API key and URL credential replaced by ``***``."""
        for endpoint in self.endpoints.values():
            text = endpoint.redact(text)
        return text

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        for transport in self._transports.values():
            await transport.close()
