"""A minimal HTTP/1.1 keep-alive load generator, to measure the simulator's own capacity."""

from __future__ import annotations

import asyncio
import json
import time
from urllib.parse import urlparse


async def _connection(host: str, port: int, path: str, body: bytes, stop: float, counter: list[int]) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    request = (
        f"POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body
    while time.perf_counter() < stop:
        writer.write(request)
        head = await reader.readuntil(b"\r\n\r\n")
        length = next(int(line.split(b":")[1]) for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length"))
        await reader.readexactly(length)
        counter[0] += 1
    writer.close()


async def requests_per_second(base_url: str, *, connections: int = 100, seconds: float = 5.0) -> float:
    """Chat requests per second the server answers with ``connections`` busy connections."""
    url = urlparse(base_url)
    body = json.dumps({"model": "m", "seed": 1, "messages": [
        {"role": "system", "content": "You take part in a discussion to solve a task.\nInput: What is 2 + 2?"},
        {"role": "user", "content": "Propose a solution."}]}).encode()
    counter = [0]
    stop = time.perf_counter() + seconds
    started = time.perf_counter()
    await asyncio.gather(*(_connection(url.hostname, url.port, url.path + "/chat/completions", body, stop, counter)
                           for _ in range(connections)))
    return counter[0] / (time.perf_counter() - started)
