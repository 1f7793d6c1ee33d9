"""What every transport shares: its two error types, the response size limit and reply parsing.

A transport raises only :class:`RetryableError` or :class:`FatalError`, so the retry logic in
:mod:`madeval.llm.client` does not depend on how a call travelled.
"""

from __future__ import annotations

import contextlib
import datetime
import email.utils
import json
import math
import time
from typing import Any

#: 4xx statuses worth retrying (timeout, conflict, rate limit); every 5xx is retried too.
RETRYABLE_STATUS = frozenset({408, 409, 429})

#: The default cap on a response body (``--max-response-mb``): a chat reply of ``max_tokens``
#: tokens is a few kilobytes, so a body this large is a broken or hostile server.
DEFAULT_MAX_RESPONSE_BYTES = 16 << 20

Reply = tuple["str | None", int, int]  # (text or None when the body had none, prompt, completion tokens)


class ChatReply(tuple):
    """A :data:`Reply` (it unpacks as the three values) that also carries the reply's
    ``system_fingerprint``, what the server says about the model that answered (or ``None``), and
    ``cached_prompt_tokens``, the prompt tokens the provider served from its prompt cache (``None``:
    not reported, so unknown; see :func:`cached_prompt_tokens`)."""

    system_fingerprint: str | None
    cached_prompt_tokens: int | None

    def __new__(cls, text: str | None, prompt_tokens: int, completion_tokens: int,
                system_fingerprint: str | None = None, cached_prompt_tokens: int | None = None):
        reply = super().__new__(cls, (text, prompt_tokens, completion_tokens))
        reply.system_fingerprint = system_fingerprint
        reply.cached_prompt_tokens = cached_prompt_tokens
        return reply


class RetryableError(Exception):
    """A failure worth retrying (429, 5xx, timeout, connection error, malformed reply)."""

    def __init__(self, reason: str, retry_after: float | None = None, status: int | None = None,
                 detail: str = ""):
        super().__init__(reason)
        self.reason = reason
        self.retry_after = retry_after
        self.status = status  # the HTTP status, when the server answered with one
        self.detail = detail  # the start of the error body's message, when there was one


class FatalError(Exception):
    """A failure that retrying cannot fix (400, 401, 404, a request the client refuses to send,
    a reply over the size limit)."""

    def __init__(self, reason: str, status: int | None = None):
        super().__init__(reason)
        self.status = status  # the HTTP status, when the server answered with one


class Unanswered(Exception):
    """A batched call whose batch got no answer within its completion window: not retried now (its
    line would be sent, and paid, again while the batch may still answer), fixable by running the
    same command again, which waits for that same batch."""


class ClientSideError(FatalError):
    """The request could not be sent as configured (invalid URL or header value): a setting to fix."""


class ResponseTooLarge(Exception):
    """A response body passed the size limit (raised while reading it, below the HTTP client)."""

    def __init__(self, limit: int):
        super().__init__(f"response body over the {limit} byte limit")
        self.limit = limit


def too_large(limit: int) -> FatalError:
    """The error for a body over ``limit`` bytes.

    Not retried: a reply of ``max_tokens`` tokens is kilobytes, a body past the limit (16 MiB
    by default) is a server that misbehaves, and retrying would only read the limit again.
    """
    return FatalError(f"response body over {limit / (1 << 20):g} MiB (--max-response-mb)")


def status_error(status: int, headers: Any, body: bytes) -> RetryableError | FatalError:
    """The error for a non-200 reply: retryable for 408/409/429 and 5xx, fatal otherwise.

    A retryable error's reason is the status alone (what records show); its ``detail`` keeps the
    body's message, for :func:`madeval.llm.structured.refuses_response_format`."""
    if status in RETRYABLE_STATUS or status >= 500:
        return RetryableError(f"HTTP {status}", retry_after(headers), status, short(error_message(body)))
    return FatalError(f"HTTP {status}: {short(error_message(body))}", status)


def read_reply(raw: bytes) -> Reply:
    """``(text, prompt_tokens, completion_tokens)`` from a chat-completions body.

    A body that is not JSON, has no first choice, or whose content is neither text nor null (a
    number, a list) is a retryable malformed reply; a choice whose content is missing or null (a
    refusal, a tool call) gives ``None``: the client retries it as "no text" and never records it.
    """
    try:
        data = json.loads(raw)
        message = data["choices"][0]["message"]
        text = message.get("content")
        if text is not None and not isinstance(text, str):
            raise TypeError(f"content is {type(text).__name__}, not text")
        usage = data.get("usage") or {}
        prompt_tokens = int(usage.get("prompt_tokens") or 0)
        completion_tokens = int(usage.get("completion_tokens") or 0)
        fingerprint = data.get("system_fingerprint")
        cached = cached_prompt_tokens(usage, prompt_tokens)
    except (ValueError, KeyError, IndexError, TypeError, AttributeError) as error:
        raise RetryableError(f"malformed reply: {short(str(error))}") from None
    except RecursionError:  # JSON nested past the parser's depth ([[[...]]]): not a reply either
        raise RetryableError("malformed reply: JSON nested too deeply") from None
    return ChatReply(text, prompt_tokens, completion_tokens,
                     short(fingerprint, 120) if isinstance(fingerprint, str) and fingerprint else None, cached)


def cached_prompt_tokens(usage: Any, prompt_tokens: int) -> int | None:
    """The prompt tokens a reply's ``usage`` says were served from the provider's prompt cache
    (``usage.prompt_tokens_details.cached_tokens``: OpenAI, vLLM with
    ``--enable-prompt-tokens-details``, SGLang), or ``None`` when it says nothing usable: absent means
    unknown, not 0. The count is the server's word, so anything but an integer from 0 to
    ``prompt_tokens`` (a float, a string, a negative or larger count) is ignored; the reply is kept."""
    details = usage.get("prompt_tokens_details") if isinstance(usage, dict) else None
    value = details.get("cached_tokens") if isinstance(details, dict) else None
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= prompt_tokens:
        return value
    return None


def read_model_list(raw: bytes) -> list[str]:
    """The model ids of a ``/models`` body; :class:`FatalError` when it is not a model list."""
    return list(read_model_entries(raw))


def read_model_entries(raw: bytes) -> dict[str, dict[str, Any]]:
    """The entries of a ``/models`` body by model id (what the server says of each model: vLLM's
    ``root``, ``max_model_len``...); :class:`FatalError` when it is not a model list."""
    try:
        return {str(model["id"]): dict(model) for model in json.loads(raw).get("data", [])}
    except (ValueError, AttributeError, KeyError, TypeError, RecursionError):
        raise FatalError("malformed model list") from None


def retry_after(headers: Any, now: float | None = None) -> float | None:
    """How long the server asks to wait, in seconds: ``Retry-After`` as seconds or as an HTTP date
    (RFC 9110, 10.2.3; a date in the past is 0), or ``retry-after-ms`` (OpenAI's, finer); None when
    there is none or it cannot be read. ``now``: the current time (for tests), else the clock."""
    try:
        milliseconds = headers.get("retry-after-ms")
        value = headers.get("retry-after")
    except AttributeError:
        return None
    with contextlib.suppress(TypeError, ValueError):
        if milliseconds is not None and math.isfinite(wait := float(milliseconds) / 1000) and wait >= 0:
            return wait
    if value is None:
        return None
    with contextlib.suppress(TypeError, ValueError):
        wait = float(value)
        return wait if math.isfinite(wait) and wait >= 0 else None
    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT
        when = when.replace(tzinfo=datetime.timezone.utc)
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def error_message(raw: bytes) -> str:
    """The ``error.message`` of an OpenAI-style error body, else the body's start."""
    try:
        return str(json.loads(raw)["error"]["message"])
    except (ValueError, KeyError, TypeError, RecursionError):
        return raw[:200].decode("utf-8", "replace")


def short(text: str, limit: int = 160) -> str:
    """``text`` on one line, cut to ``limit`` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
