"""Every LLM call goes through :class:`LLMClient`.

It speaks to any OpenAI-compatible endpoint through a transport (aiohttp by default, see
:mod:`madeval.llm.transports`) and adds what an evaluation harness needs: bounded concurrency
(global, and per endpoint through an :class:`~madeval.llm.backoff.EndpointGate` that shrinks on
429 and grows back), retries with exponential backoff and full jitter on 429, 5xx, timeouts,
connection errors and malformed or empty replies (never on what a retry cannot change: a 400-class
error other than 408/409/429, a request the HTTP client refuses to send, a body over the size
limit), ``Retry-After`` honoured in both forms up to the endpoint's timeout, the response cache,
single flight of identical requests within a run (:mod:`madeval.llm.shared`), and token and
latency accounting. API keys and the credentials a base
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

from madeval.errors import LLMError, UsageError
from madeval.llm.backoff import EndpointGate
from madeval.llm.cache import ResponseCache, request_key
from madeval.llm.endpoint_url import EndpointURL, public_url
from madeval.llm.model_identity import served_identity
from madeval.llm.probe import PROBE_MESSAGES, PROBE_PARAMS, SPEED_MESSAGES, SPEED_PARAMS, Probe, Speed
from madeval.llm.shared import Asker, SharedCalls
from madeval.llm.structured import JSON_SCHEMA, ReplySchema, refuses_response_format
from madeval.llm.transports import (
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_TRANSPORT,
    ClientSideError,
    FatalError,
    RetryableError,
    canonical_transport,
    transport_class,
)
from madeval.llm.wire import Unanswered, read_model_entries
from madeval.util.shown_text import terminal_text

#: Sampling defaults of the MALLM paper, Appendix E.
DEFAULT_GENERATION = {
    "temperature": 1.0,
    "top_p": 1.0,
    "presence_penalty": 0.0,
    "frequency_penalty": 0.0,
    "max_tokens": 1024,
}

#: The most characters a reply may have per token of its ``max_tokens``. Tokens average about
#: four characters of English; 32 leaves room for any tokenizer's longest ones (runs of spaces,
#: digits, markup). A longer reply is more than the model can have generated: an endpoint that
#: ignores ``max_tokens`` (or a hostile one), whose megabytes would otherwise fill the records and,
#: quoted to the other agents, every later prompt.
CHARS_PER_TOKEN = 32
#: The bound for a small ``max_tokens`` never goes below this; without ``max_tokens``, the bound
#: of the default's 1024 tokens.
MIN_REPLY_CHARS = 4096


def reply_bound(max_tokens: Any) -> int:
    """The longest reply (in characters) a request with ``max_tokens`` can get from a model."""
    tokens = max_tokens if isinstance(max_tokens, int) and max_tokens > 0 else DEFAULT_GENERATION["max_tokens"]
    return max(MIN_REPLY_CHARS, CHARS_PER_TOKEN * tokens)


def reply_tokens(reply: Any) -> int:
    """The tokens of a reply ``(text, prompt_tokens, completion_tokens)``: those its usage reports, or
    about one per four characters of its text when it reports none."""
    text, _, completion_tokens = reply
    return int(completion_tokens) if completion_tokens else max(1, len(text or "") // 4)


def cut_reply(text: str, max_tokens: Any) -> tuple[str, str | None]:
    """``text``, or its first :func:`reply_bound` characters with a note saying so, and the note
    (None when the reply was within bounds)."""
    bound = reply_bound(max_tokens)
    if len(text) <= bound:
        return text, None
    note = (f"reply of {len(text)} characters cut to its first {bound}: longer than max_tokens="
            f"{max_tokens} allows (endpoint fault)")
    return text[:bound] + f"\n[madeval: {note}]", note


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
    #: Its speed is measured and said before every run, however short (:mod:`madeval.run.estimate`): the
    #: embedded model, a CPU answering one call at a time, where one debate can take many minutes.
    always_estimated: bool = False

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

    def delay(self, attempt: int, retry_after: float | None = None, deadline_s: float | None = None) -> float:
        """Full-jitter exponential backoff for the given (1-based) failed attempt; at least the
        server's ``Retry-After`` when it sent one, honoured up to ``deadline_s`` (the endpoint's
        timeout: the longest one request may take), else up to ``max_delay_s``."""
        ceiling = min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1)))
        wait = random.uniform(0, ceiling)
        if retry_after is not None:
            wait = max(wait, min(retry_after, max(deadline_s or 0.0, self.max_delay_s)))
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
    #: What the server said about the model that answered (the reply's ``system_fingerprint``).
    system_fingerprint: str | None = None
    #: Prompt tokens the provider served from its prompt cache (None: it did not say).
    cached_prompt_tokens: int | None = None
    #: The transport the call went through (``aiohttp``, ``openai``, ``batch``): batch calls are
    #: priced at batch prices, call by call, even in a run resumed under another transport.
    transport: str | None = None
    #: The asker that made the call, when this one reused its reply (:mod:`madeval.llm.shared`);
    #: None for a call made by its own asker.
    shared_from: str | None = None


@dataclass
class ClientStats:
    """Running totals, read by the progress bar and the benchmark."""

    calls: int = 0
    cached: int = 0
    #: Calls answered with the reply of an identical request another asker made (:mod:`.shared`).
    shared: int = 0
    retries: int = 0
    failures: int = 0
    #: Replies longer than their ``max_tokens`` allows, cut (:func:`cut_reply`).
    cut_replies: int = 0
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


def lacks_v1(base_url: str) -> bool:
    """True when ``base_url``'s path does not end in ``/v1`` (OpenAI-compatible servers serve
    ``/v1/chat/completions``; a base URL without it gets 404 for every call)."""
    return not EndpointURL.parse(base_url).base.rstrip("/").endswith("/v1")


def v1_hint(endpoint: Endpoint, status: int | None) -> str:
    """``"; the URL probably lacks /v1 ..."`` for a 404 from an endpoint whose URL does not end in /v1."""
    if status == 404 and lacks_v1(endpoint.base_url):
        return f"; the URL probably lacks /v1 (try --base-url {endpoint.public_url.rstrip('/')}/v1)"
    return ""


class ResponseFormatRefused(Exception):
    """The endpoint refused the ``response_format`` of a request (not retried)."""


@dataclass
class Attempt:
    """How one attempt of a call went: ``ok`` with the transport's reply, or not ok with the
    reason to retry (a fatal answer raises instead); its seconds in a slot; what the endpoint's
    gate learns of it."""

    ok: bool
    reply: Any = None
    error: str = ""
    retry_after: float | None = None
    in_slot: float = 0.0
    gate: dict[str, Any] = field(default_factory=dict)


class LLMClient:
    """Async access to one or more endpoints with retries, limits and a cache."""

    def __init__(
        self,
        endpoints: dict[str, Endpoint],
        *,
        concurrency: int = 64,
        cache: ResponseCache | None = None,
        retry: RetryPolicy | None = None,
        sharing: SharedCalls | None = None,
    ):
        self.endpoints = endpoints
        self.cache = cache
        #: Identical requests made once (None: every call is made; see :meth:`complete`).
        self.sharing = sharing
        self.retry = retry or RetryPolicy()
        self.stats = ClientStats()
        #: What each endpoint reports about each model beyond its name (cache keys include it):
        #: ``(endpoint, model) -> bounded_identity`` of its ``/models`` entry, see :meth:`identify`.
        self.served: dict[tuple[str, str], dict[str, Any] | None] = {}
        #: The latest ``system_fingerprint`` each (endpoint, model) answered with in this run.
        self.fingerprints: dict[tuple[str, str], str] = {}
        #: Each model's probe (see :meth:`probe`): the cache's keying and the long-run estimate share it.
        self._probes: dict[tuple[str, str], Probe] = {}
        self._speeds: dict[tuple[str, str], Speed] = {}
        #: Per endpoint, what its start-up check suggests (a URL that probably lacks /v1).
        self.hints: dict[str, str] = {}
        self._global = asyncio.Semaphore(concurrency)
        #: Each endpoint's gate: its concurrency, halved on 429 and grown back (AIMD), and paused
        #: for a Retry-After, for every request to it.
        # A batch endpoint starts at its whole concurrency: slow start would split a round of
        # ready calls over several batches, each a provider turnaround of minutes to hours.
        self.gates = {name: EndpointGate(e.concurrency, slow_start=e.transport != "batch")
                      for name, e in endpoints.items()}
        #: Each endpoint's ``/models`` entries by model id, as :meth:`list_models` last read them.
        self.model_entries: dict[str, dict[str, dict[str, Any]]] = {}
        #: Endpoints that refused a ``response_format``: asked with the text prompts alone from then on.
        self.refuse_response_format: set[str] = set()
        #: Each endpoint's transport by its canonical name (recorded with every call).
        self._transport_names = {name: canonical_transport(e.transport) for name, e in endpoints.items()}
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
        asker: Asker | None = None,
    ) -> Completion:
        """Return the reply to ``messages``, from the cache when the same request was made before.

        ``headers`` are sent with this call only (the routing key); they are not part of the cache
        key, so a reply cached without them, or with other ones, is still a hit. With ``reply``,
        the reply is asked in that schema (``response_format`` in the endpoint's form), unless the
        endpoint refused one before: a refusal is not retried, it sends this call and every later
        one to that endpoint without it, and prints one warning.

        With ``asker`` and :attr:`sharing` on, an identical request of the asker's group (see
        :meth:`share_key`) already made or in flight is not made again: its reply is returned, with
        ``shared_from`` naming the asker that made it (:mod:`madeval.llm.shared`)."""
        if reply is not None and endpoint not in self.refuse_response_format:
            form = reply.response_format(self.endpoints[endpoint].response_format)
            try:
                return await self._shared(endpoint, model, messages, {**params, "response_format": form},
                                          scope, headers, asker)
            except ResponseFormatRefused as refusal:
                self._refused(endpoint, str(refusal))
        return await self._shared(endpoint, model, messages, params, scope, headers, asker)

    async def _shared(
        self, endpoint: str, model: str, messages: list[dict[str, str]], params: dict[str, Any],
        scope: tuple[Any, ...], headers: dict[str, str] | None, asker: Asker | None,
    ) -> Completion:
        """The reply made once per identical request of the asker's group, else :meth:`_complete`'s."""
        if self.sharing is None or asker is None:
            return await self._complete(endpoint, model, messages, params, scope, headers)
        key = self.share_key(endpoint, model, messages, params, scope)
        completion = await self.sharing.reply(
            key, asker, lambda: self._complete(endpoint, model, messages, params, scope, headers))
        if completion.shared_from is not None:
            self.stats.shared += 1
            self.stats.changed()
        return completion

    def share_key(self, endpoint: str, model: str, messages: list[dict[str, str]], params: dict[str, Any],
                  scope: tuple[Any, ...]) -> str:
        """What makes two calls of a run identical: the endpoint (its name and URL) and what it
        reports about the model (the ``/models`` entry the run recorded), the model, the messages,
        the sampling parameters (the seed and ``response_format`` among them) and ``scope``, the
        call's place in its debate (item, repeat, agent, turn, purpose, re-ask), as the response
        cache keys it. Headers (the routing key) are not part of it: they do not change the reply."""
        entries = self.model_entries.get(endpoint, {})
        request = {"endpoint": endpoint, "base_url": self.endpoints[endpoint].public_url, "model": model,
                   "served": served_identity(entries.get(model)), "messages": messages, "params": params}
        return request_key(request, scope)

    def _refused(self, endpoint: str, why: str) -> None:
        """Note that ``endpoint`` refuses ``response_format``; warn the first time."""
        if endpoint in self.refuse_response_format:
            return
        self.refuse_response_format.add(endpoint)
        why = terminal_text(why)  # the endpoint's words: no escape sequence reaches the terminal
        print(f"madeval: warning: endpoint '{endpoint}' refused structured answers ({why}); "
              "asking it with the text prompts only", file=sys.stderr)

    async def _complete(
        self, endpoint: str, model: str, messages: list[dict[str, str]], params: dict[str, Any],
        scope: tuple[Any, ...], headers: dict[str, str] | None,
    ) -> Completion:
        """The reply from the cache, else from the endpoint (cached when it has text)."""
        key, stale = None, False
        if self.cache is not None:
            request = {"base_url": self.endpoints[endpoint].public_url, "model": model, "messages": messages, **params}
            served = self.served.get((endpoint, model))
            if served:  # absent when the server reports nothing: keys stay as they were
                request["served"] = served
            key = request_key(request, scope)
            hit = self.cache.get(key)
            now = self.fingerprints.get((endpoint, model))
            stale = hit is not None and bool(now) and hit.system_fingerprint != now
            if hit is not None and not stale:
                self.stats.cached += 1
                self.stats.changed()
                # The original call's cost, so that cost columns never see a free cached call.
                return Completion(hit.text, hit.prompt_tokens, hit.completion_tokens, hit.latency_s, 0, True, [],
                                  hit.system_fingerprint, transport=self._transport_names[endpoint])
        completion = await self._call_with_retries(endpoint, model, messages, params, headers)
        if key is not None and completion.text:  # an empty last reply is never reused
            self.cache.put(key, completion.text, completion.prompt_tokens, completion.completion_tokens,
                           completion.latency_s, completion.system_fingerprint, replace=stale)
        return completion

    async def _call_with_retries(
        self, endpoint: str, model: str, messages: list[dict[str, str]], params: dict[str, Any],
        headers: dict[str, str] | None = None,
    ) -> Completion:
        """Attempt the call until one attempt is ok, or the attempts run out (a one-line
        :class:`LLMError` quoting the last errors); a fatal answer raises at once."""
        errors: list[str] = []
        in_slot = 0.0  # the latency: seconds holding a slot (queueing for it and backoff excluded)
        for attempt in range(1, self.retry.max_attempts + 1):
            tried = await self._attempt(endpoint, model, messages, params, headers)
            in_slot += tried.in_slot
            if tried.ok:
                # An empty text is what the model said: kept when every attempt gave it. A reply
                # with no text at all (content missing or null) is never recorded.
                text = tried.reply[0]
                if text or (text is not None and attempt == self.retry.max_attempts):
                    return self._accepted(tried.reply, endpoint, model, params, attempt, in_slot, errors)
                errors.append("empty reply" if text is not None else "malformed reply: no text")
            else:
                errors.append(tried.error)
            if attempt < self.retry.max_attempts:
                self.stats.retries += 1
                await self._back_off(endpoint, attempt, tried.retry_after)
        self.stats.failures += 1
        raise LLMError(f"{endpoint}: gave up after {len(errors)} attempts ({', '.join(errors[-3:])})")

    async def _attempt(self, endpoint: str, model: str, messages: list[dict[str, str]], params: dict[str, Any],
                       headers: dict[str, str] | None) -> Attempt:
        """One attempt, holding the endpoint's slot and then a global one; the endpoint's gate
        learns how it went (ok, or rate limited for how long)."""
        # The endpoint's slot first: a call queued behind a slow endpoint must not hold one of the
        # global slots that calls to other endpoints could use meanwhile.
        gate = self.gates[endpoint]
        window = await gate.acquire()
        tried = Attempt(ok=False)  # a fatal answer raises: the gate hears nothing of it
        try:
            async with self._global:
                if "response_format" in params and endpoint in self.refuse_response_format:
                    raise ResponseFormatRefused("refused while this call waited")  # not sent again
                acquired = time.perf_counter()
                self.stats.started()
                try:
                    tried = await self._send(endpoint, model, messages, params, headers)
                finally:
                    tried.in_slot = time.perf_counter() - acquired
                    self.stats.finished()
        finally:
            gate.release(window, **tried.gate)
        return tried

    async def _send(self, endpoint: str, model: str, messages: list[dict[str, str]], params: dict[str, Any],
                    headers: dict[str, str] | None) -> Attempt:
        """Send the request once: ok with the transport's reply, a retry with its reason, or a raise
        (:class:`LLMError` for a fatal answer, :class:`ResponseFormatRefused` for a refused schema)."""
        structured = "response_format" in params
        try:
            reply = await self._transports[endpoint].chat(model, messages, params, headers=headers)
        except FatalError as error:
            if structured and refuses_response_format(error.status, str(error)):
                raise ResponseFormatRefused(self.redact(str(error))) from None
            self.stats.failures += 1
            hint = v1_hint(self.endpoints[endpoint], error.status)
            raise LLMError(self.redact(f"{endpoint}: {error} (not retried){hint}"), retryable=False) from None
        except Unanswered as error:  # retrying would pay for the line twice; a re-run waits again
            self.stats.failures += 1
            raise LLMError(self.redact(f"{endpoint}: {error}"), retryable=True) from None
        except RetryableError as error:
            if structured and refuses_response_format(error.status, error.detail):
                raise ResponseFormatRefused(self.redact(f"{error.reason}: {error.detail}")) from None
            gate = {"rate_limited": True, "retry_after": error.retry_after} if error.status == 429 else {}
            return Attempt(ok=False, error=self.redact(error.reason), retry_after=error.retry_after, gate=gate)
        return Attempt(ok=True, reply=reply, gate={"ok": True})

    def _accepted(self, reply: Any, endpoint: str, model: str, params: dict[str, Any], attempt: int,
                  in_slot: float, errors: list[str]) -> Completion:
        """The call's :class:`Completion` from the reply kept, counted in the client's stats."""
        text, prompt_tokens, completion_tokens = reply
        if not text:
            errors.append("empty reply")
        text, cut = cut_reply(text, params.get("max_tokens"))
        if cut is not None:
            errors.append(cut)
            self.stats.cut_replies += 1
        self.stats.calls += 1
        self.stats.prompt_tokens += prompt_tokens
        self.stats.completion_tokens += completion_tokens
        fingerprint = getattr(reply, "system_fingerprint", None)
        if fingerprint:
            self.fingerprints[endpoint, model] = fingerprint
        return Completion(text, prompt_tokens, completion_tokens, in_slot, attempt, False, errors, fingerprint,
                          getattr(reply, "cached_prompt_tokens", None), self._transport_names[endpoint])

    async def _back_off(self, endpoint: str, attempt: int, retry_after: float | None) -> None:
        """Wait before the next attempt: the policy's backoff, or only a Retry-After for a
        transport whose own turnaround is the backoff (a batch)."""
        if getattr(self._transports[endpoint], "retries_at_once", False):
            await asyncio.sleep(retry_after or 0.0)
        else:
            await asyncio.sleep(self.retry.delay(attempt, retry_after, self.endpoints[endpoint].timeout_s))

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
                hint = v1_hint(endpoint, error.status)
                if hint:
                    self.hints[name] = hint
                    print(f"madeval: warning: endpoint {shown} answered /models with HTTP 404{hint}",
                          file=sys.stderr)

    async def list_models(self, endpoint: str) -> list[str]:
        """The model ids an endpoint lists (empty when it lists none or cannot list); what it says
        of each is kept in :attr:`model_entries`."""
        try:
            entries = read_model_entries(await self._transports[endpoint].model_list_body())
        except (RetryableError, FatalError):
            entries = {}
        self.model_entries[endpoint] = entries
        return list(entries)

    async def model_cards(self, endpoint: str) -> list[dict[str, Any]]:
        """The ``/models`` entries of an endpoint (what it reports about each model; empty when it
        lists none or cannot list), as :meth:`list_models` read them (read now if it has not)."""
        if endpoint not in self.model_entries:
            await self.list_models(endpoint)
        return list(self.model_entries[endpoint].values())

    def identify(self, endpoint: str, model: str, served: dict[str, Any] | None) -> None:
        """Note what ``endpoint`` reports about ``model`` (its ``/models`` entry's
        :func:`madeval.llm.model_identity.served_identity`, bounded once by
        :func:`madeval.llm.model_identity.bounded_identity`: a huge entry as its digest): part of every
        cache key of its calls from now on."""
        self.served[endpoint, model] = served

    async def probe(self, endpoint: str, model: str) -> Probe:
        """One short call to ``model`` (:data:`PROBE_MESSAGES`, a few tokens, no cache, no retry):
        how long it took, and the ``system_fingerprint`` it came with (remembered for the cache).
        A failure is an :class:`LLMError` (a 404 names a URL that probably lacks /v1). A model is
        probed once per client: a second caller gets the first answer."""
        if (endpoint, model) in self._probes:
            return self._probes[endpoint, model]
        seconds, reply = await self._test_call(endpoint, model, PROBE_MESSAGES, PROBE_PARAMS)
        fingerprint = getattr(reply, "system_fingerprint", None)
        if fingerprint:
            self.fingerprints[endpoint, model] = fingerprint
        self._probes[endpoint, model] = Probe(seconds, fingerprint, reply_tokens(reply))
        return self._probes[endpoint, model]

    async def speed(self, endpoint: str, model: str) -> Speed:
        """How long ``model``'s calls take, before the reply and per token of it (:class:`Speed`): from a
        call whose reply runs to :data:`~madeval.llm.probe.SPEED_TOKENS` tokens and the short call of
        :meth:`probe` made after it, once :meth:`probe` itself has opened the connection and woken the
        model (neither of which a call of the run pays for); no cache, no retry. Failures as
        :meth:`probe`'s; measured once per client."""
        if (endpoint, model) not in self._speeds:
            await self.probe(endpoint, model)
            long_s, long_reply = await self._test_call(endpoint, model, SPEED_MESSAGES, SPEED_PARAMS)
            short_s, short_reply = await self._test_call(endpoint, model, PROBE_MESSAGES, PROBE_PARAMS)
            self._speeds[endpoint, model] = Speed.measured((long_s, reply_tokens(long_reply)),
                                                           (short_s, reply_tokens(short_reply)))
        return self._speeds[endpoint, model]

    async def _test_call(self, endpoint: str, model: str, messages: list[dict[str, str]],
                         params: dict[str, Any]) -> tuple[float, Any]:
        """One call of :meth:`probe` or :meth:`speed`: its seconds and reply; a failure is an :class:`LLMError`."""
        if getattr(self._transports[endpoint], "no_test_calls", False):
            raise LLMError(f"{endpoint}: no test call through the batch transport (it would be a batch of "
                           "its own, a provider turnaround before the run starts)", retryable=True)
        started = time.perf_counter()
        try:
            reply = await self._transports[endpoint].chat(model, messages, dict(params))
        except (RetryableError, FatalError) as error:
            status = getattr(error, "status", None)
            raise LLMError(self.redact(f"{endpoint}: {error}{v1_hint(self.endpoints[endpoint], status)}"),
                           retryable=isinstance(error, RetryableError)) from None
        return time.perf_counter() - started, reply

    def redact(self, text: str) -> str:
        """``text`` with every configured API key and URL credential replaced by ``***``."""
        for endpoint in self.endpoints.values():
            text = endpoint.redact(text)
        return text

    async def aclose(self) -> None:
        """Close the HTTP connections."""
        for transport in self._transports.values():
            await transport.close()
