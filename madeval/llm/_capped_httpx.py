"""The ``openai`` SDK's aiohttp client with a cap on every response body it reads.

The SDK reads bodies in full, error bodies included, so the cap must sit below it: each HTTP
transport the client builds (the direct one and any proxy one from the environment) runs on
:class:`~madeval.llm.aiohttp_transport.CleanConnector` and is wrapped so that a ``Content-Length``
over the cap, or a stream that passes it, raises :class:`~madeval.llm.wire.ResponseTooLarge`. A
``Content-Encoding`` header is dropped (madeval asks for ``identity``): a compressed body then
reads as a malformed reply instead of being inflated past the cap.
"""

from __future__ import annotations

import functools
import os
import ssl
from typing import Any, AsyncIterator

import aiohttp
import httpx2
import openai

from madeval.llm.aiohttp_transport import CleanConnector
from madeval.llm.wire import ResponseTooLarge


class CappedStream(httpx2.AsyncByteStream):
    """A response stream that stops (and closes) once it has yielded more than ``limit`` bytes."""

    def __init__(self, inner: httpx2.AsyncByteStream, limit: int):
        self._inner = inner
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        size = 0
        async for chunk in self._inner:
            size += len(chunk)
            if size > self._limit:
                await self._inner.aclose()
                raise ResponseTooLarge(self._limit)
            yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class CappedTransport(httpx2.AsyncBaseTransport):
    """Wraps an httpx transport so that every response body is capped at ``limit`` bytes."""

    def __init__(self, inner: httpx2.AsyncBaseTransport, limit: int):
        self._inner = inner
        self._limit = limit

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        response = await self._inner.handle_async_request(request)
        length = response.headers.get("content-length", "")
        if length.isdigit() and int(length) > self._limit:
            await response.aclose()
            raise ResponseTooLarge(self._limit)
        headers = [(k, v) for k, v in response.headers.raw if k.lower() != b"content-encoding"]
        return httpx2.Response(response.status_code, headers=headers, request=request,
                               stream=CappedStream(response.stream, self._limit), extensions=response.extensions)

    async def aclose(self) -> None:
        await self._inner.aclose()


def capped_aiohttp_client(timeout_s: float, limit: int, *, direct_host: str | None = None) -> httpx2.AsyncClient:
    """``openai.DefaultAioHttpClient`` whose transports cap response bodies at ``limit`` bytes.

    Proxies come from the environment, except for ``direct_host`` (a loopback endpoint).
    """

    class Client(openai.DefaultAioHttpClient):
        def _init_transport(self, *args: Any, **kwargs: Any) -> httpx2.AsyncBaseTransport:
            return _capped(super()._init_transport(*args, **kwargs), limit)

        def _init_proxy_transport(self, *args: Any, **kwargs: Any) -> httpx2.AsyncBaseTransport:
            return _capped(super()._init_proxy_transport(*args, **kwargs), limit)

    mounts = {f"all://{direct_host}": None} if direct_host else None  # None: the direct transport
    tls = verifying_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))
    return Client(timeout=timeout_s, mounts=mounts, verify=tls)


@functools.lru_cache(maxsize=4)
def verifying_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    """The TLS context the SDK's transports would each make for themselves (``verify=True``: the
    system's certificates, or those ``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` name), made once per value
    of those two variables. Reading the certificates takes 20-30 ms, and every client made two or
    three (a batch run's transport makes two clients, each with its direct and proxy transports).

    The arguments are only the cache's key: httpx reads the two variables itself, as it would for
    each transport."""
    return httpx2.create_ssl_context(verify=True, trust_env=True)


def _capped(transport: Any, limit: int) -> CappedTransport:
    """``transport`` (the SDK's aiohttp transport) on a :class:`CleanConnector`, capped at ``limit``."""
    if getattr(transport, "client", ...) is None:  # the SDK's transport builds its session lazily
        def session() -> aiohttp.ClientSession:
            connector = CleanConnector(limit=transport.limits.max_connections or 0, ssl=transport.ssl_context,
                                       keepalive_timeout=transport.limits.keepalive_expiry)
            return aiohttp.ClientSession(connector=connector)

        transport.client = session
    return CappedTransport(transport, limit)
