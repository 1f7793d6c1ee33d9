"""How a chat request travels to an endpoint: the transports by name.

``aiohttp`` (the default, :mod:`.aiohttp_transport`) speaks the OpenAI wire protocol over aiohttp
at about a third of the official client's CPU per call; ``openai`` (:mod:`.openai_transport`) goes
through the official ``AsyncOpenAI`` client. Both enforce one deadline per request and the
response size limit, and raise only :class:`RetryableError` or :class:`FatalError`, so retry
logic does not depend on the transport.

``direct``, the name of the home-made HTTP/1.1 client that ``aiohttp`` replaced, is kept as an
alias of ``aiohttp`` so that configuration files and stored ``run.json`` settings still work.
"""

from __future__ import annotations

from madeval.llm.aiohttp_transport import AiohttpTransport
from madeval.llm.wire import (
    DEFAULT_MAX_RESPONSE_BYTES,
    RETRYABLE_STATUS,
    ClientSideError,
    FatalError,
    Reply,
    RetryableError,
)

#: The wire's errors and limits are part of this module's interface, beside the transports.
__all__ = ["ALIASES", "DEFAULT_MAX_RESPONSE_BYTES", "DEFAULT_TRANSPORT", "RETRYABLE_STATUS", "TRANSPORTS",
           "ClientSideError", "FatalError", "Reply", "RetryableError", "batch_transport", "canonical_transport",
           "openai_transport", "transport_class"]


def openai_transport(*args, **kwargs):
    """An :class:`.openai_transport.OpenAITransport` (same arguments). The openai package takes
    about a second to import, so it is imported when this transport is first built, not before."""
    from madeval.llm.openai_transport import OpenAITransport

    return OpenAITransport(*args, **kwargs)


def batch_transport(*args, **kwargs):
    """A :class:`.batch.transport.BatchTransport` (same arguments; imports openai when first built)."""
    from madeval.llm.batch.transport import BatchTransport

    return BatchTransport(*args, **kwargs)


#: What builds each transport, by name: ``TRANSPORTS[name](base_url, api_key, timeout_s, **limits)``.
TRANSPORTS = {"aiohttp": AiohttpTransport, "openai": openai_transport, "batch": batch_transport}

#: Old transport names and the transport that now answers to them.
ALIASES = {"direct": "aiohttp"}

DEFAULT_TRANSPORT = "aiohttp"


def canonical_transport(name: str) -> str:
    """``name`` with an old alias replaced by its transport (``direct`` -> ``aiohttp``)."""
    return ALIASES.get(name, name)


def transport_class(name: str):
    """What builds the transport called ``name`` (aliases accepted): its class, or for ``openai`` a
    function that imports it first; ``KeyError`` for an unknown name."""
    return TRANSPORTS[canonical_transport(name)]
