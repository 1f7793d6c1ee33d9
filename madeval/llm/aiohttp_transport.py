"""The default transport: the OpenAI chat-completions wire protocol over ``aiohttp``.

aiohttp does the HTTP: it validates header values (a CR or LF in the API key is refused, not
sent), reuses a kept-alive connection only when its response was read to the end with nothing
after it (a server that sends a second, unasked-for reply loses the connection, so the reply is
never taken as the answer to the next request), and speaks through the environment's proxy.
madeval adds what an evaluation needs on top:

* one deadline per request (``--timeout``) over connecting, sending and reading the whole body,
  so a server that trickles bytes cannot hold a call longer;
* a cap on the body (``--max-response-mb``), checked against ``Content-Length`` before reading and
  while reading, so an endless or huge body costs at most the cap;
* no compression (``Accept-Encoding: identity``), so the cap bounds memory, not a zip bomb;
* the proxy looked up once per endpoint rather than on every request (aiohttp's ``trust_env``
  looks it up per request in a thread: measurable at thousands of calls per second).

It costs about a third of the official client's CPU per call (``python -m bench``), which decides
the pace when an endpoint (vLLM, the simulator) answers thousands of calls per second.
"""

from __future__ import annotations

import asyncio
import json
import ssl
from typing import Any

import aiohttp
from yarl import URL

from madeval._version import __version__
from madeval.llm.endpoint_url import env_proxy
from madeval.llm.http_transport import HTTPTransport, error_below
from madeval.llm.wire import (
    DEFAULT_MAX_RESPONSE_BYTES,
    ClientSideError,
    Reply,
    ResponseTooLarge,
    read_reply,
    status_error,
)


class CleanConnector(aiohttp.TCPConnector):
    """A connector that never hands out a kept-alive connection holding unread bytes.

    aiohttp refuses to pool a connection whose response was not read to the end, or that had
    bytes after it in the same read; but bytes that arrive while the connection sits idle in the
    pool (a second, unasked-for reply sent a moment later) are kept in its buffer, and the next
    request on it would take them as its reply. Such a connection is closed here and another one
    taken. (A reply smuggled in after the next request was sent cannot be told from the real one
    in HTTP/1.1; the real reply then left over makes aiohttp close the connection.)
    """

    async def connect(self, req, traces, timeout):  # noqa: D102 - aiohttp's method, same contract
        while True:
            connection = await super().connect(req, traces, timeout)
            protocol = connection.protocol
            if protocol is None or not protocol.should_close:
                return connection
            connection.close()


class AiohttpTransport(HTTPTransport):
    """Chat completions through one ``aiohttp.ClientSession`` per endpoint."""

    name = "aiohttp"

    def __init__(self, base_url: str, api_key: str, timeout_s: float,
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES):
        super().__init__(base_url, timeout_s, max_response_bytes)
        self._params = list(self._url.query) or None
        self._headers = {"Content-Type": "application/json", "Accept": "application/json",
                         "Accept-Encoding": "identity", "User-Agent": f"madeval/{__version__}"}
        self._headers["Authorization"] = self._url.basic_auth() or f"Bearer {api_key}"
        proxy = env_proxy(self._url)
        self._proxy = URL(proxy).with_user(None) if proxy else None
        self._proxy_auth = aiohttp.BasicAuth.from_url(URL(proxy)) if proxy else None
        self._session: aiohttp.ClientSession | None = None
        try:  # parsed once: yarl parses a URL given as text on every request
            self._targets: dict[str, URL] | None = {path: URL(self._url.base + path)
                                                     for path in ("/chat/completions", "/models")}
        except ValueError:
            self._targets = None  # refused on the first request, as a client-side error

    async def chat(self, model: str, messages: list[dict[str, str]], params: dict[str, Any],
                   headers: dict[str, str] | None = None) -> Reply:
        """One chat completion; returns ``(text, prompt_tokens, completion_tokens)``.

        ``headers`` are sent with this request besides the session's own (the routing key)."""
        body = json.dumps({"model": model, "messages": messages, **params}).encode()
        status, reply_headers, raw = await self._send("POST", "/chat/completions", body, self._timeout_s, headers)
        if status != 200:
            raise status_error(status, reply_headers, raw)
        return read_reply(raw)

    async def model_list_body(self) -> bytes:
        """The raw ``/models`` body; raises on connection errors and HTTP errors."""
        status, _headers, raw = await self._send("GET", "/models", None, min(self._timeout_s, 10.0))
        if status != 200:
            raise status_error(status, _headers, raw)
        return raw

    async def _send(self, method: str, path: str, body: bytes | None, timeout_s: float,
                    headers: dict[str, str] | None = None):
        """``(status, headers, body)`` of one exchange, all of it within ``timeout_s``; ``headers``
        are added to the session's for this request.

        A kept-alive connection the server closed just as the request went out is replaced once,
        within the same deadline, without counting as a failure (aiohttp does this itself only
        for idempotent methods; resending a chat request is what the retry would do anyway).
        """
        if self._targets is None:
            raise ClientSideError(f"invalid URL {self._url.public!r}")
        session = self._session or self._open()
        try:
            async with asyncio.timeout(timeout_s):
                try:
                    return await self._exchange(session, method, path, body, headers)
                except aiohttp.ClientConnectorError:
                    raise
                except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError):
                    return await self._exchange(session, method, path, body, headers)
        except (ResponseTooLarge, aiohttp.ClientError, OSError, ValueError) as error:  # TimeoutError included
            raise error_below(error, self._url) from None

    async def _exchange(self, session: aiohttp.ClientSession, method: str, path: str, body: bytes | None,
                        headers: dict[str, str] | None):
        async with session.request(method, self._targets[path], data=body, params=self._params, headers=headers,
                                   proxy=self._proxy, proxy_auth=self._proxy_auth,
                                   allow_redirects=False) as response:
            raw = await _read_capped(response, self._limit)
            return response.status, response.headers, raw

    def _open(self) -> aiohttp.ClientSession:
        # No connection cap (the LLM client's slots bound concurrency); no aiohttp timeout (the
        # deadline above is the only one; aiohttp's default of 300 s would cut the embedded model).
        # The TLS context is made now, not taken from aiohttp's import-time default, so that
        # SSL_CERT_FILE / SSL_CERT_DIR set before the run are honoured.
        tls = ssl.create_default_context() if self._url.base.startswith("https:") else True
        connector = CleanConnector(limit=0, ttl_dns_cache=300, ssl=tls)
        # No cookies: an API client has no use for them, and a hostile server cannot set any.
        self._session = aiohttp.ClientSession(connector=connector, headers=self._headers,
                                              timeout=aiohttp.ClientTimeout(), auto_decompress=False,
                                              cookie_jar=aiohttp.DummyCookieJar())
        return self._session

    async def close(self) -> None:
        """Close the connections."""
        if self._session is not None:
            await self._session.close()
            self._session = None


async def _read_capped(response: aiohttp.ClientResponse, limit: int) -> bytes:
    """The whole body, or :class:`ResponseTooLarge` (the connection is then closed, never reused)."""
    length = response.content_length
    if length is not None and length > limit:
        response.close()
        raise ResponseTooLarge(limit)
    if length is not None:  # aiohttp stops at Content-Length: read it in one piece
        return await response.read()
    chunks, size = [], 0
    async for chunk in response.content.iter_any():
        size += len(chunk)
        if size > limit:
            response.close()
            raise ResponseTooLarge(limit)
        chunks.append(chunk)
    return b"".join(chunks)
