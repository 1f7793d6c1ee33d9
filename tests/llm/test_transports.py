"""Both transports (``aiohttp``, the default, and ``openai``) against scripted loopback servers.

Each server reads one request at a time and answers with exact bytes, or runs a hostile script
(trickle, endless body, a smuggled second reply), so every framing a real or a hostile server may
choose is exercised on purpose.
"""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
import ssl
import subprocess
import time

import pytest

from madeval.llm.transports import ClientSideError, FatalError, RetryableError, transport_class

REPLY = {"choices": [{"message": {"role": "assistant", "content": "FINAL SOLUTION: B"}}],
         "usage": {"prompt_tokens": 11, "completion_tokens": 5}}
ANSWER = ("FINAL SOLUTION: B", 11, 5)
BOTH = pytest.mark.parametrize("name", ["aiohttp", "openai"])


class ScriptedServer:
    """Answers the n-th request with ``answers[n]``: bytes, or ``async f(writer)`` that writes."""

    def __init__(self, answers, *, close_after_each=False, tls=None):
        self.answers = list(answers)
        self.close_after_each = close_after_each
        self.tls = tls
        self.requests: list[tuple[bytes, bytes]] = []  # (head, body)
        self.connections = 0
        self.sent = 0  # bytes written by scripted answers

    async def __aenter__(self):
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self.server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        return self

    async def __aexit__(self, *exc):
        self.server.close()

    async def _serve(self, reader, writer):
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                body = await reader.readexactly(length)
                self.requests.append((head, body))
                answer = self.answers.pop(0)
                if callable(answer):
                    await answer(self, writer)
                else:
                    writer.write(answer)
                    await writer.drain()
                if self.close_after_each:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()


def json_response(payload: dict, status: str = "200 OK", extra: bytes = b"") -> bytes:
    body = json.dumps(payload).encode()
    return b"HTTP/1.1 %s\r\nContent-Type: application/json\r\n%sContent-Length: %d\r\n\r\n%s" % (
        status.encode(), extra, len(body), body)


def reply_with(text: str) -> bytes:
    return json_response({"choices": [{"message": {"content": text}}], "usage": {}})


def chunked(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    pieces = [body[:7], body[7:30], body[30:]]
    encoded = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in pieces)
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + encoded + b"0\r\nX-Trailer: t\r\n\r\n"


def make(name: str, url: str, key: str = "k", timeout_s: float = 5.0, limit: int = 1 << 20):
    return transport_class(name)(url, key, timeout_s, max_response_bytes=limit)


async def ask(transport):
    return await transport.chat("m", [{"role": "user", "content": "hi"}], {})


def headers_of(head: bytes) -> dict[str, str]:
    lines = head.decode("latin-1").split("\r\n")[1:]
    return {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines if line)}


# --- the hostile cases of issue 12 --------------------------------------------------------------


@BOTH
def test_hostile_trickled_body_is_cut_at_one_deadline_per_request(name):
    """One byte every 0.1 s keeps every socket read short; the request as a whole gets 0.6 s."""
    body = json.dumps(REPLY).encode()

    async def trickle(server, writer):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body))
        for byte in body:
            writer.write(bytes([byte]))
            await writer.drain()
            await asyncio.sleep(0.1)

    async def main():
        async with ScriptedServer([trickle]) as server:
            transport = make(name, server.url, timeout_s=0.6)
            started = time.monotonic()
            with pytest.raises(RetryableError, match="^timeout$"):
                await ask(transport)
            elapsed = time.monotonic() - started
            await transport.close()
        return elapsed

    elapsed = asyncio.run(main())
    # the whole body would take len(body) * 0.1 s (about 10 s); the deadline ends it at 0.6 s
    # (the upper bound leaves room for a loaded machine, far below the 10 s of a per-read timeout)
    assert 0.55 < elapsed < 5.0


@BOTH
def test_hostile_endless_chunked_body_stops_at_the_size_limit_without_retry(name):
    chunk = b"x" * 65536

    async def endless(server, writer):
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        while True:
            writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            server.sent += len(chunk)
            await writer.drain()

    async def main():
        async with ScriptedServer([endless, json_response(REPLY)]) as server:
            transport = make(name, server.url, limit=1 << 20)
            with pytest.raises(FatalError, match=r"^response body over 1 MiB"):
                await ask(transport)
            assert await ask(transport) == ANSWER  # on a fresh connection
            await transport.close()
        return server

    server = asyncio.run(main())
    assert server.connections == 2
    # the client stopped reading at the limit: the server got out the limit plus socket buffers
    assert server.sent < 16 << 20


@BOTH
def test_hostile_huge_content_length_is_refused_before_reading(name):
    async def huge(server, writer):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n{")
        await writer.drain()
        await asyncio.sleep(30)  # a client that waits for the body would time out instead

    async def main():
        async with ScriptedServer([huge]) as server:
            transport = make(name, server.url, timeout_s=25.0, limit=1 << 20)
            started = time.monotonic()
            with pytest.raises(FatalError, match=r"^response body over 1 MiB"):
                await ask(transport)
            elapsed = time.monotonic() - started
            await transport.close()
        return elapsed

    assert asyncio.run(main()) < 10.0  # refused at the head, not at the 25 s deadline


@BOTH
@pytest.mark.parametrize("delay", [0.0, 0.05])
def test_hostile_smuggled_second_reply_is_never_taken_for_the_next_request(name, delay):
    """A reply followed by a second, unasked-for one (in the same packet, or a moment later):
    the connection is not reused, so the next request gets its own reply, not the smuggled one."""

    async def smuggle(server, writer):
        writer.write(reply_with("first"))
        if delay:
            await writer.drain()
            await asyncio.sleep(delay)
        writer.write(reply_with("SMUGGLED"))
        await writer.drain()

    async def main():
        async with ScriptedServer([smuggle, reply_with("second"), reply_with("third")]) as server:
            transport = make(name, server.url)
            first = await ask(transport)
            await asyncio.sleep(0.1)  # the smuggled bytes have arrived by now
            second = await ask(transport)
            third = await ask(transport)
            await transport.close()
        return [first[0], second[0], third[0]], server

    texts, server = asyncio.run(main())
    assert texts == ["first", "second", "third"]
    assert len(server.requests) == 3


@BOTH
def test_hostile_header_with_crlf_is_refused_and_never_sent(name):
    async def main():
        async with ScriptedServer([json_response(REPLY)]) as server:
            transport = make(name, server.url, key="sk-secret\r\nX-Injected: yes")
            with pytest.raises(ClientSideError, match="^invalid request"):
                await ask(transport)
            await transport.close()
        return server

    server = asyncio.run(main())
    assert server.requests == []


@BOTH
def test_hostile_proxy_from_the_environment_is_honoured(name, monkeypatch):
    """HTTP_PROXY points at a loopback proxy; the endpoint's host does not even resolve, so only
    a request sent through the proxy (absolute URL in the request line) can be answered."""
    for variable in ("NO_PROXY", "no_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(variable, raising=False)

    async def main():
        async with ScriptedServer([json_response(REPLY)]) as proxy:
            monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
            transport = make(name, "http://llm.madeval.invalid/v1")
            assert await ask(transport) == ANSWER
            await transport.close()
            # NO_PROXY names the host: connected to directly, which fails (the name does not exist)
            monkeypatch.setenv("NO_PROXY", "madeval.invalid")
            transport = make(name, "http://llm.madeval.invalid/v1", timeout_s=3.0)
            with pytest.raises(RetryableError, match="connection|timeout"):
                await ask(transport)
            await transport.close()
            monkeypatch.delenv("NO_PROXY")
            # a loopback endpoint is never sent through a proxy
            async with ScriptedServer([json_response(REPLY)]) as direct:
                transport = make(name, direct.url)
                assert await ask(transport) == ANSWER
                await transport.close()
            return proxy, direct

    proxy, direct = asyncio.run(main())
    assert proxy.requests[0][0].startswith(b"POST http://llm.madeval.invalid/v1/chat/completions HTTP/1.1\r\n")
    assert len(proxy.requests) == 1 and len(direct.requests) == 1


@BOTH
def test_hostile_url_credentials_are_used_as_the_credentials(name):
    """``https://user:pw@host/v1?api-key=...``: Basic authentication from the user info instead of
    the API key, the query sent with every request; error texts never show either."""

    async def main():
        async with ScriptedServer([json_response(REPLY), json_response({"data": [{"id": "m1"}]})]) as server:
            url = f"http://alice:pa%3Ass-word@127.0.0.1:{server.port}/v1?api-key=query-secret&v=2"
            transport = make(name, url, key="sk-not-sent")
            assert await ask(transport) == ANSWER
            assert await transport.models() == ["m1"]
            await transport.close()
        return server

    server = asyncio.run(main())
    chat_head, models_head = (head.decode("latin-1") for head, _ in server.requests)
    assert chat_head.startswith("POST /v1/chat/completions?api-key=query-secret&v=2 HTTP/1.1\r\n")
    assert models_head.startswith("GET /v1/models?api-key=query-secret&v=2 HTTP/1.1\r\n")
    basic = "Basic " + base64.b64encode(b"alice:pa:ss-word").decode()
    for head, _body in server.requests:
        assert headers_of(head)["authorization"] == basic
        assert b"sk-not-sent" not in head


# --- ordinary HTTP behaviour --------------------------------------------------------------------


@BOTH
def test_framings_and_keep_alive(name):
    until_close = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + json.dumps(REPLY).encode()
    interim = b"HTTP/1.1 100 Continue\r\n\r\n" + json_response(REPLY)

    async def main():
        async with ScriptedServer([json_response(REPLY), chunked(REPLY), interim, json_response(REPLY)]) as server:
            transport = make(name, server.url, key="sk-secret")
            replies = [await transport.chat("m", [{"role": "user", "content": "hi"}], {"seed": n}) for n in range(4)]
            await transport.close()
        assert replies == [ANSWER] * 4
        assert server.connections == 1  # four sequential requests over one keep-alive connection
        head, body = server.requests[0]
        assert head.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
        assert b"authorization: bearer sk-secret\r\n" in head.lower()
        assert json.loads(body) == {"model": "m", "messages": [{"role": "user", "content": "hi"}], "seed": 0}

        async with ScriptedServer([until_close, json_response(REPLY)], close_after_each=True) as server:
            transport = make(name, server.url)
            assert await ask(transport) == ANSWER
            assert await ask(transport) == ANSWER
            await transport.close()
        assert server.connections == 2  # a body read until close cannot be followed on its connection

    asyncio.run(main())


@BOTH
def test_dropped_keep_alive_connection_is_replaced_without_an_error(name):
    async def main():
        # The server closes every connection after answering, without saying "Connection: close".
        async with ScriptedServer([json_response(REPLY)] * 3, close_after_each=True) as server:
            transport = make(name, server.url)
            for _ in range(3):
                assert await ask(transport) == ANSWER
                await asyncio.sleep(0.05)  # let the close reach the client
            await transport.close()
        assert server.connections == 3 and len(server.requests) == 3

    asyncio.run(main())


@BOTH
def test_status_errors_garbage_refusals_and_bad_urls(name):
    rate_limited = json_response({"error": {"message": "slow down"}}, "429 Too Many Requests", b"Retry-After: 1.5\r\n")
    bad_request = json_response({"error": {"message": "max_tokens is too large"}}, "400 Bad Request")
    server_error = json_response({"error": {"message": "oops"}}, "503 Service Unavailable")

    async def main():
        answers = [rate_limited, bad_request, server_error, b"SPDY/3 200 OK\r\n\r\n"]
        async with ScriptedServer(answers, close_after_each=True) as server:
            transport = make(name, server.url)
            with pytest.raises(RetryableError) as caught:
                await ask(transport)
            assert (caught.value.reason, caught.value.retry_after, caught.value.status) == ("HTTP 429", 1.5, 429)
            with pytest.raises(FatalError, match="^HTTP 400: max_tokens is too large$") as fatal:
                await ask(transport)
            assert fatal.value.status == 400 and not isinstance(fatal.value, ClientSideError)
            with pytest.raises(RetryableError, match="^HTTP 503$"):
                await ask(transport)
            with pytest.raises(RetryableError):  # not HTTP at all
                await ask(transport)
            await transport.close()

        transport = make(name, "ftp://127.0.0.1/v1")
        with pytest.raises(ClientSideError):
            await ask(transport)
        await transport.close()
        async with ScriptedServer([]) as server:
            url = server.url
        transport = make(name, url)
        with pytest.raises(RetryableError, match="^connection"):
            await transport.models()
        await transport.close()

    asyncio.run(main())


@BOTH
@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_https_verifies_the_server_certificate(name, tmp_path, monkeypatch):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)

    async def main():
        async with ScriptedServer([json_response({"data": [{"id": "m1"}, {"id": "m2"}]})], tls=tls) as server:
            url = f"https://localhost:{server.port}/v1"
            untrusted = make(name, url)
            with pytest.raises(RetryableError, match="(?i)certificate"):
                await untrusted.models()
            await untrusted.close()
            # trusted through SSL_CERT_FILE, as a researcher behind a private CA would do
            monkeypatch.setenv("SSL_CERT_FILE", str(cert))
            transport = make(name, url)
            assert await transport.models() == ["m1", "m2"]
            await transport.close()
        assert server.requests[-1][0].startswith(b"GET /v1/models HTTP/1.1\r\n")

    asyncio.run(main())


def test_direct_is_an_old_name_of_the_aiohttp_transport(tmp_path):
    """Config files and stored run.json settings that name 'direct' (the former home-made client)
    keep working, and new run.json files record 'aiohttp'."""
    from madeval.llm.aiohttp_transport import AiohttpTransport
    from madeval.settings.config import build_settings

    assert transport_class("direct") is transport_class("aiohttp") is AiohttpTransport
    settings = build_settings({"tasks": "arith_mc", "transport": "direct"})
    assert settings.transport == "aiohttp" and settings.public()["transport"] == "aiohttp"
    assert build_settings({"tasks": "arith_mc"}).transport == "aiohttp"  # the default


def test_hostile_reply_without_text_is_retried_and_never_recorded():
    """A 200 whose content is not text (a number) is malformed and one whose content is null has
    no text: both are retried, and when every attempt gives them the call fails (its unit goes to
    errors.jsonl) instead of returning an empty reply that would be scored as the agent's answer.
    An empty string is what the model said: after the last attempt it is returned, noted."""
    from madeval.errors import LLMError
    from madeval.llm.client import Endpoint, LLMClient, RetryPolicy

    numeric = json_response({"choices": [{"message": {"content": 42}}], "usage": {}})
    null = json_response({"choices": [{"message": {"content": None, "refusal": "no"}}], "usage": {}})
    empty = reply_with("")

    async def complete(answers):
        async with ScriptedServer(answers) as server:
            client = LLMClient({"e": Endpoint("e", server.url)}, retry=RetryPolicy(max_attempts=2, base_delay_s=0.0))
            try:
                return await client.complete("e", "m", [{"role": "user", "content": "hi"}], {}, ("u", 0))
            finally:
                await client.aclose()

    with pytest.raises(
        LLMError, match=r"gave up after 2 attempts \(malformed reply: .*not text, malformed reply: no text\)"
    ):
        asyncio.run(complete([numeric, null]))
    with pytest.raises(LLMError, match=r"gave up after 2 attempts"):
        asyncio.run(complete([null, null]))
    completion = asyncio.run(complete([empty, empty]))
    assert completion.text == "" and completion.errors == ["empty reply", "empty reply"]
    assert asyncio.run(complete([null, reply_with("B")])).text == "B"
