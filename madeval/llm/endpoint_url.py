"""An endpoint's base URL split into where requests go and the secrets it may carry.

A base URL may hold credentials: user info (``https://user:pw@host/v1``, sent as HTTP Basic
authentication instead of the API key) and a query string (``?api-key=...``, sent with every
request, as Azure-style gateways expect). Neither is ever written or printed: everything shown
uses :attr:`EndpointURL.public`, the URL without them, and error texts pass through
:meth:`EndpointURL.redact`.

Proxies come from the environment (``HTTPS_PROXY``, ``HTTP_PROXY``, ``ALL_PROXY``, ``NO_PROXY``),
read once per endpoint, with one exception taken from Go's ``net/http``: a loopback endpoint
(``localhost``, 127.0.0.0/8, ::1: the embedded model, the simulator, a local vLLM) is never sent
through a proxy, which could not reach it.
"""

from __future__ import annotations

import ipaddress
import urllib.request
from dataclasses import dataclass
from urllib.parse import parse_qsl, unquote, urlsplit, urlunsplit


@dataclass(frozen=True)
class EndpointURL:
    """``base`` (scheme, host, port, path) plus the query and user info the URL carried."""

    base: str
    query: tuple[tuple[str, str], ...] = ()
    user: str | None = None
    password: str | None = None

    @classmethod
    def parse(cls, url: str) -> "EndpointURL":
        """Split ``url``; a URL that is not ``http(s)://host...`` keeps its text as ``base``
        (the HTTP client then refuses it as a client-side error)."""
        try:
            parts = urlsplit(url.strip())
            hostport = parts.netloc.rpartition("@")[2]
        except ValueError:
            return cls(url)
        base = urlunsplit((parts.scheme, hostport, parts.path.rstrip("/"), "", ""))
        query = tuple(parse_qsl(parts.query, keep_blank_values=True))
        user = unquote(parts.username) if parts.username is not None else None
        password = unquote(parts.password) if parts.password is not None else None
        return cls(base, query, user, password)

    @property
    def public(self) -> str:
        """The URL as written to disk and shown: no user info, no query."""
        return self.base

    @property
    def host(self) -> str:
        """The host name (empty for an unusable URL)."""
        try:
            return urlsplit(self.base).hostname or ""
        except ValueError:
            return ""

    def secrets(self) -> list[str]:
        """The credential strings the URL carried (to blank out of error texts)."""
        values = [self.user, self.password, *(value for _name, value in self.query)]
        return [value for value in values if value and len(value) >= 4]

    def basic_auth(self) -> str | None:
        """The ``Authorization`` header value of the URL's user info (HTTP Basic, as aiohttp
        encodes it), or ``None`` when the URL carries none: such credentials are the credentials."""
        if self.user is None:
            return None
        import aiohttp  # a fifth of a second: not for the many callers that only read URLs

        return aiohttp.encode_basic_auth(self.user, self.password or "")

    def redact(self, text: str) -> str:
        """``text`` with every secret of the URL replaced by ``***``."""
        for secret in self.secrets():
            text = text.replace(secret, "***")
        return text


def public_url(url: str) -> str:
    """``url`` without user info and query string; unchanged when it has neither."""
    parsed = EndpointURL.parse(url)
    return url if not parsed.query and parsed.user is None and "?" not in url else parsed.public


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses."""
    if host.lower() in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def env_proxy(url: EndpointURL) -> str | None:
    """The proxy URL the environment sets for ``url`` (``None``: connect directly)."""
    host = url.host
    if not host or is_loopback(host):
        return None
    proxies = urllib.request.getproxies_environment()
    scheme = urlsplit(url.base).scheme
    proxy = proxies.get(scheme) or proxies.get("all")
    if not proxy or urllib.request.proxy_bypass_environment(host, proxies):
        return None
    return proxy if "://" in proxy else f"http://{proxy}"
