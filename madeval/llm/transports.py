"""How a chat request travels to an endpoint.

:class:`OpenAITransport` (the default) uses the official ``openai`` ``AsyncOpenAI`` client, on its
aiohttp HTTP backend (``openai.DefaultAioHttpClient``), because the default httpx pool slows down
badly with many connections in flight. :class:`DirectTransport` speaks the same OpenAI wire
protocol over madeval's own small HTTP/1.1 client; it costs about a fifth of the CPU per call,
which decides the pace when an endpoint (a vLLM server, the simulator) answers thousands of calls
per second.

Both raise only the two exceptions below, so retry logic does not depend on the transport.
"""

from __future__ import annotations

import json
from typing import Any

import openai

from .. import __version__
from .http1 import ConnectionFailed, ConnectionPool, Response

RETRYABLE_STATUS = {408, 409, 429}


class RetryableError(Exception):
    """A failure worth retrying (429, 5xx, timeout, connection error, malformed reply)."""

    def __init__(self, reason: str, retry_after: float | None = None):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after


class FatalError(Exception):
    """A failure that retrying cannot fix (400, 401, 404, ...)."""


Reply = tuple["str | None", int, int]  # (text or None when the body had none, prompt, completion tokens)


class OpenAITransport:
    """Requests through the official ``openai.AsyncOpenAI`` client."""

    name = "openai"

    def __init__(self, base_url: str, api_key: str, timeout_s: float):
        self._client = openai.AsyncOpenAI(
            base_url=base_url,
            api_key=api_key,
            max_retries=0,
            timeout=timeout_s,
            http_client=openai.DefaultAioHttpClient(timeout=timeout_s),
        )

    async def chat(self, model: str, messages: list[dict[str, str]], params: dict[str, Any]) -> Reply:
        """One chat completion; returns ``(text, prompt_tokens, completion_tokens)``.

        The request goes through the client's own ``post`` (its auth, headers, timeouts and
        error types) with the body as plain JSON, and the reply is read as bytes: the typed
        ``chat.completions.create`` re-walks every message through the SDK's TypedDict
        transform and builds pydantic models, which cost about 2 ms of CPU per call here,
        four times the rest of the harness (see ``python -m bench``).
        """
        body = {"model": model, "messages": messages, **params}
        try:
            raw = await self._client.post("/chat/completions", cast_to=bytes, body=body, options=_AUTH)
        except openai.APIStatusError as error:
            status = error.status_code
            if status in RETRYABLE_STATUS or status >= 500:
                raise RetryableError(f"HTTP {status}", _retry_after(error.response.headers)) from None
            raise FatalError(f"HTTP {status}: {_short(error.message)}") from None
        except openai.APITimeoutError:
            raise RetryableError("timeout") from None
        except openai.APIConnectionError as error:
            raise RetryableError(f"connection: {_short(str(error))}") from None
        except (openai.APIResponseValidationError, ValueError) as error:
            raise RetryableError(f"malformed reply: {_short(str(error))}") from None
        return _read_reply(raw)

    async def models(self) -> list[str]:
        """The model ids the endpoint lists; raises on connection errors and HTTP errors."""
        try:
            listed = await self._client.models.list(timeout=10.0)
        except openai.APIStatusError as error:
            raise FatalError(f"HTTP {error.status_code}") from None
        except (openai.APIConnectionError, openai.APITimeoutError):
            raise RetryableError("connection") from None
        except (openai.APIResponseValidationError, ValueError):
            raise FatalError("malformed model list") from None
        try:
            return [str(model.id) for model in listed.data]
        except (AttributeError, TypeError):
            raise FatalError("malformed model list") from None

    async def close(self) -> None:
        """Close the connections."""
        await self._client.close()


class DirectTransport:
    """The OpenAI chat-completions wire protocol over madeval's own HTTP/1.1 client (:mod:`.http1`)."""

    name = "direct"

    def __init__(self, base_url: str, api_key: str, timeout_s: float):
        headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json",
                   "Accept": "application/json", "User-Agent": f"madeval/{__version__}"}
        self._pool = ConnectionPool(base_url, headers)
        self._timeout_s = timeout_s

    async def chat(self, model: str, messages: list[dict[str, str]], params: dict[str, Any]) -> Reply:
        """One chat completion; returns ``(text, prompt_tokens, completion_tokens)``."""
        body = json.dumps({"model": model, "messages": messages, **params}).encode()
        response = await self._send("POST", "/chat/completions", body, self._timeout_s)
        if response.status != 200:
            if response.status in RETRYABLE_STATUS or response.status >= 500:
                raise RetryableError(f"HTTP {response.status}", _retry_after(response.headers))
            raise FatalError(f"HTTP {response.status}: {_short(_error_message(response.body))}")
        return _read_reply(response.body)

    async def _send(self, method: str, path: str, body: bytes | None, timeout_s: float) -> Response:
        try:
            return await self._pool.request(method, path, body, timeout_s)
        except TimeoutError:
            raise RetryableError("timeout") from None
        except ConnectionFailed as error:
            raise RetryableError(f"connection: {_short(str(error))}") from None

    async def models(self) -> list[str]:
        """The model ids the endpoint lists; raises on connection errors and HTTP errors."""
        response = await self._send("GET", "/models", None, 10.0)
        if response.status != 200:
            raise FatalError(f"HTTP {response.status}")
        try:
            return [str(m["id"]) for m in json.loads(response.body).get("data", [])]
        except (ValueError, AttributeError, KeyError, TypeError):
            raise FatalError("malformed model list") from None

    async def close(self) -> None:
        """Close the connections."""
        self._pool.close()


TRANSPORTS = {"openai": OpenAITransport, "direct": DirectTransport}


#: The request options of the SDK's own chat call: bearer authentication.
_AUTH = {"security": {"bearer_auth": True}}


def _read_reply(raw: bytes) -> Reply:
    """``(text, prompt_tokens, completion_tokens)`` from a chat-completions body.

    A body that is not JSON or has no first choice is a retryable malformed reply; a choice
    whose content is missing or null gives ``None`` (the client retries it as "no text").
    """
    try:
        data = json.loads(raw)
        message = data["choices"][0]["message"]
        text = message.get("content")
        usage = data.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens") or 0)
        completion_tokens = int(usage.get("completion_tokens") or 0)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
        raise RetryableError(f"malformed reply: {_short(str(error))}") from None
    return (text if isinstance(text, str) else None), prompt_tokens, completion_tokens


def _retry_after(headers: Any) -> float | None:
    try:
        value = headers.get("retry-after")
        return float(value) if value is not None else None
    except (AttributeError, ValueError):
        return None


def _error_message(raw: bytes) -> str:
    try:
        return str(json.loads(raw)["error"]["message"])
    except (ValueError, KeyError, TypeError):
        return raw[:200].decode("utf-8", "replace")


def _short(text: str, limit: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
