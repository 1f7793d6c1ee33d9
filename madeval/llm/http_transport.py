"""What the two HTTP transports share (:mod:`.aiohttp_transport`, the default, and
:mod:`.openai_transport`, whose SDK runs on aiohttp too): the endpoint, deadline and body cap each
is made with, the model list read from the raw ``/models`` body, and the errors that whatever
failed below them turns into.
"""

from __future__ import annotations

import aiohttp

from madeval.llm.endpoint_url import EndpointURL
from madeval.llm.wire import (
    DEFAULT_MAX_RESPONSE_BYTES,
    ClientSideError,
    ResponseTooLarge,
    RetryableError,
    read_model_list,
    short,
    too_large,
)


class HTTPTransport:
    """Base of the HTTP transports: the endpoint ``base_url`` (credentials in it are the
    credentials), one deadline per request (``timeout_s``) and a cap on every body read
    (``max_response_bytes``)."""

    def __init__(self, base_url: str, timeout_s: float, max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES):
        self._url = EndpointURL.parse(base_url)
        self._timeout_s = timeout_s
        self._limit = max_response_bytes

    async def models(self) -> list[str]:
        """The model ids the endpoint lists; raises on connection errors and HTTP errors."""
        return read_model_list(await self.model_list_body())

    async def model_list_body(self) -> bytes:
        """The raw ``/models`` body; raises on connection errors and HTTP errors."""
        raise NotImplementedError


def error_below(error: BaseException | None, url: EndpointURL, *, timed_out: bool = False) -> Exception:
    """The transport's error (:class:`RetryableError` or :class:`ClientSideError`) for what failed
    below it: a deadline passed, a body over the cap, aiohttp's or the system's connection errors,
    a request refused before it was sent (``ValueError``: a header with CR/LF, a bad URL). ``None``:
    nothing more is known (``timed_out``: the client's deadline passed). ``url`` redacts the
    endpoint's credentials from the message."""
    if isinstance(error, ResponseTooLarge):
        return too_large(error.limit)
    if isinstance(error, (aiohttp.InvalidURL, aiohttp.NonHttpUrlClientError)):
        return ClientSideError(f"invalid URL: {short(url.redact(str(error)))}")
    if isinstance(error, ValueError) and not isinstance(error, (aiohttp.ClientError, OSError)):
        return ClientSideError(f"invalid request: {short(url.redact(str(error)))}")
    if error is None or isinstance(error, TimeoutError):  # aiohttp.ServerTimeoutError included
        return RetryableError("timeout" if timed_out or error is not None else "connection")
    if isinstance(error, aiohttp.ClientResponseError):  # the reply was not valid HTTP, or the proxy refused
        return RetryableError(f"bad response: {short(url.redact(error.message))}")
    return RetryableError(f"connection: {short(url.redact(_describe(error)))}")


def _describe(error: BaseException) -> str:
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
