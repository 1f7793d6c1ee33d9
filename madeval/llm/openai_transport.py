"""The ``openai`` transport: requests through the official ``openai.AsyncOpenAI`` client.

It runs on the SDK's aiohttp backend (``openai.DefaultAioHttpClient``; the default httpx pool slows
down badly with many connections in flight), with the same guarantees as the default transport:
one deadline per request over the whole exchange, and a cap on every body the SDK reads (replies,
error bodies, the model list), enforced below the SDK on the HTTP stream itself.
"""

from __future__ import annotations

import asyncio
from typing import Any

import aiohttp
import openai

from madeval.llm._capped_httpx import capped_aiohttp_client
from madeval.llm.endpoint_url import is_loopback
from madeval.llm.http_transport import HTTPTransport, error_below
from madeval.llm.wire import (
    DEFAULT_MAX_RESPONSE_BYTES,
    Reply,
    ResponseTooLarge,
    RetryableError,
    read_reply,
    short,
    status_error,
)

#: The request options of the SDK's own chat call: bearer authentication.
_AUTH = {"security": {"bearer_auth": True}}


class OpenAITransport(HTTPTransport):
    """Requests through the official ``openai.AsyncOpenAI`` client."""

    name = "openai"

    def __init__(self, base_url: str, api_key: str, timeout_s: float,
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES):
        super().__init__(base_url, timeout_s, max_response_bytes)
        headers = {"Accept-Encoding": "identity"}
        if self._url.user is not None:  # credentials in the URL are the credentials (HTTP Basic)
            headers["Authorization"] = self._url.basic_auth()
        self._client = openai.AsyncOpenAI(
            base_url=self._url.base,
            api_key=api_key,
            max_retries=0,
            timeout=timeout_s,
            default_headers=headers,
            default_query=dict(self._url.query) or None,
            http_client=capped_aiohttp_client(
                timeout_s, max_response_bytes, direct_host=self._url.host if is_loopback(self._url.host) else None
            ),
        )

    async def chat(self, model: str, messages: list[dict[str, str]], params: dict[str, Any],
                   headers: dict[str, str] | None = None) -> Reply:
        """One chat completion; returns ``(text, prompt_tokens, completion_tokens)``.

        ``headers`` are sent with this request besides the client's own (the routing key).

        The request goes through the client's own ``post`` (its auth, headers and error types)
        with the body as plain JSON, and the reply is read as bytes: the typed
        ``chat.completions.create`` re-walks every message through the SDK's TypedDict
        transform and builds pydantic models, which cost about 2 ms of CPU per call here,
        four times the rest of the harness (see ``python -m bench``).
        """
        body = {"model": model, "messages": messages, **params}
        options = _AUTH if headers is None else {**_AUTH, "headers": headers}
        raw = await self._call(lambda: self._client.post("/chat/completions", cast_to=bytes, body=body,
                                                         options=options),
                               self._timeout_s)
        return read_reply(raw)

    async def model_list_body(self) -> bytes:
        """The raw ``/models`` body, read as the aiohttp transport reads it (the SDK's typed
        ``models.list`` would parse it with no bound on its nesting)."""
        return await self._call(lambda: self._client.get("/models", cast_to=bytes, options=_AUTH),
                                min(self._timeout_s, 10.0))

    async def _call(self, request, timeout_s: float):
        """Await ``request()`` within ``timeout_s``, turning the SDK's errors into the transport's two.

        A kept-alive connection the server closed just as the request went out is replaced once,
        within the same deadline, without counting as a failure (as the aiohttp transport does).
        """
        try:
            async with asyncio.timeout(timeout_s):
                try:
                    return await request()
                except openai.APIConnectionError as error:  # APITimeoutError included
                    if not _stale_connection(_root_cause(error)):
                        raise
                    return await request()
        except openai.APIStatusError as error:
            raise status_error(error.status_code, error.response.headers, error.response.content) from None
        except openai.APIConnectionError as error:  # APITimeoutError included
            cause, timed_out = _root_cause(error), isinstance(error, openai.APITimeoutError)
            raise error_below(cause, self._url, timed_out=timed_out) from None
        except openai.APIResponseValidationError as error:
            raise RetryableError(f"malformed reply: {short(str(error))}") from None
        # the deadline (a TimeoutError), a body over the cap, errors that pass through the SDK unwrapped
        except (ResponseTooLarge, aiohttp.ClientError, OSError, ValueError) as error:
            raise error_below(error, self._url) from None

    async def close(self) -> None:
        """Close the connections."""
        await self._client.close()


def _root_cause(error: BaseException) -> BaseException | None:
    """The first error below the SDK's and httpx's wrappers (aiohttp's, or madeval's own)."""
    cause = error.__cause__
    while cause is not None and cause.__cause__ is not None and not isinstance(
        cause, (ResponseTooLarge, ValueError, aiohttp.ClientError)
    ):
        cause = cause.__cause__
    return cause


def _stale_connection(cause: BaseException | None) -> bool:
    """True when a kept-alive connection was found closed (not when a new one failed)."""
    return isinstance(cause, (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)) and not isinstance(
        cause, aiohttp.ClientConnectorError
    )
