"""madeval's HTTP/1.1 client (the ``direct`` transport) against scripted loopback servers.

Each server reads one request at a time and answers with exact bytes, so the framings a real
server may choose (Content-Length, chunked, read-until-close, interim 100, Connection: close,
a silently dropped keep-alive) are each exercised on purpose.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import ssl
import subprocess

import pytest

from madeval.llm.http1 import ConnectionPool
from madeval.llm.transports import DirectTransport, FatalError, RetryableError

REPLY = {"choices": [{"message": {"role": "assistant", "content": "FINAL SOLUTION: B"}}],
         "usage": {"prompt_tokens": 11, "completion_tokens": 5}}


class ScriptedServer:
    """Answers the n-th request with the bytes ``answers[n]``."""

    def __init__(self, answers, *, close_after_each=False, tls=None):
        self.answers = list(answers)
        self.close_after_each = close_after_each
        self.tls = tls
        self.requests: list[tuple[bytes, bytes]] = []  # (head, body)
        self.connections = 0

    async def __aenter__(self):
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0, ssl=self.tls)
        self.port = self.server.sockets[0].getsockname()[1]
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


def chunked(payload: dict) -> bytes:
    body = json.dumps(payload).encode()
    pieces = [body[:7], body[7:30], body[30:]]
    encoded = b"".join(b"%x;ext=1\r\n%s\r\n" % (len(p), p) for p in pieces)
    return b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + encoded + b"0\r\nX-Trailer: t\r\n\r\n"


def test_http1_framings_and_connection_reuse():
    until_close = b"HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n" + json.dumps(REPLY).encode()
    interim = b"HTTP/1.1 100 Continue\r\n\r\n" + json_response(REPLY)

    async def main():
        async with ScriptedServer([json_response(REPLY), chunked(REPLY), interim, json_response(REPLY)]) as server:
            transport = DirectTransport(f"http://127.0.0.1:{server.port}/v1", "sk-secret", 5.0)
            replies = [await transport.chat("m", [{"role": "user", "content": "hi"}], {"seed": n}) for n in range(4)]
            await transport.close()
        assert replies == [("FINAL SOLUTION: B", 11, 5)] * 4
        # four sequential requests over one keep-alive connection
        assert server.connections == 1
        head, body = server.requests[0]
        assert head.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
        assert b"Authorization: Bearer sk-secret\r\n" in head
        assert b"Host: 127.0.0.1:%d\r\n" % server.port in head
        assert json.loads(body) == {"model": "m", "messages": [{"role": "user", "content": "hi"}], "seed": 0}

        async with ScriptedServer([until_close, json_response(REPLY)], close_after_each=True) as server:
            transport = DirectTransport(f"http://127.0.0.1:{server.port}/v1", "k", 5.0)
            assert await transport.chat("m", [], {}) == ("FINAL SOLUTION: B", 11, 5)
            assert await transport.chat("m", [], {}) == ("FINAL SOLUTION: B", 11, 5)
            await transport.close()
        # a body read until the server closed cannot be followed on the same connection
        assert server.connections == 2

    asyncio.run(main())


def test_http1_dropped_keepalive_reconnects_once_without_an_error():
    async def main():
        # The server closes every connection after answering, without saying "Connection: close":
        # the client's idle connection is dead by the next request.
        async with ScriptedServer([json_response(REPLY)] * 3, close_after_each=True) as server:
            transport = DirectTransport(f"http://127.0.0.1:{server.port}", "k", 5.0)
            for _ in range(3):
                assert await transport.chat("m", [], {}) == ("FINAL SOLUTION: B", 11, 5)
                await asyncio.sleep(0.05)  # let the close reach the client
            await transport.close()
        assert server.connections == 3 and len(server.requests) == 3

    asyncio.run(main())


def test_http1_status_errors_timeouts_and_garbage():
    rate_limited = json_response({"error": {"message": "slow down"}}, "429 Too Many Requests", b"Retry-After: 1.5\r\n")
    bad_request = json_response({"error": {"message": "max_tokens is too large"}}, "400 Bad Request")
    server_error = json_response({"error": {"message": "oops"}}, "503 Service Unavailable")

    async def main():
        async with ScriptedServer([rate_limited, bad_request, server_error, b"SPDY/3 200 OK\r\n\r\n"]) as server:
            transport = DirectTransport(f"http://127.0.0.1:{server.port}", "k", 5.0)
            with pytest.raises(RetryableError) as caught:
                await transport.chat("m", [], {})
            assert (caught.value.reason, caught.value.retry_after) == ("HTTP 429", 1.5)
            with pytest.raises(FatalError, match="^HTTP 400: max_tokens is too large$"):
                await transport.chat("m", [], {})
            with pytest.raises(RetryableError, match="^HTTP 503$"):
                await transport.chat("m", [], {})
            with pytest.raises(RetryableError, match="^connection: ValueError: not an HTTP/1.x status line"):
                await transport.chat("m", [], {})
            await transport.close()

        async with ScriptedServer([b"", b""]) as server:  # requests read, never answered
            pool = ConnectionPool(f"http://127.0.0.1:{server.port}", {})
            with pytest.raises(TimeoutError):
                await pool.request("POST", "/x", b"{}", 0.2)
            assert pool._idle == []  # the timed-out connection is not reused
            transport = DirectTransport(f"http://127.0.0.1:{server.port}", "k", 0.2)
            with pytest.raises(RetryableError, match="^timeout$"):
                await transport.chat("m", [], {})

        transport = DirectTransport("ftp://127.0.0.1/v1", "k", 1.0)
        with pytest.raises(RetryableError, match="unsupported URL 'ftp://127.0.0.1/v1'"):
            await transport.chat("m", [], {})
        async with ScriptedServer([]) as server:
            port = server.port
        transport = DirectTransport(f"http://127.0.0.1:{port}", "k", 1.0)
        with pytest.raises(RetryableError, match="^connection: ConnectionRefusedError"):
            await transport.models()

    asyncio.run(main())


@pytest.mark.skipif(shutil.which("openssl") is None, reason="needs the openssl command to make a certificate")
def test_http1_https_verifies_the_server_certificate(tmp_path, monkeypatch):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)

    async def main():
        async with ScriptedServer([json_response({"data": [{"id": "m1"}, {"id": "m2"}]})], tls=tls) as server:
            url = f"https://localhost:{server.port}/v1"
            # not trusted: refused
            with pytest.raises(RetryableError, match="CERTIFICATE_VERIFY_FAILED"):
                await DirectTransport(url, "k", 5.0).models()
            # trusted through SSL_CERT_FILE, as a researcher behind a private CA would do
            monkeypatch.setenv("SSL_CERT_FILE", str(cert))
            transport = DirectTransport(url, "k", 5.0)
            assert await transport.models() == ["m1", "m2"]
            await transport.close()
        assert server.requests[0][0].startswith(b"GET /v1/models HTTP/1.1\r\n")

    asyncio.run(main())
