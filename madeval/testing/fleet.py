"""A loopback fleet for tests and benches: simulator replicas behind a real router.

:class:`Fleet` starts N ``madeval simulator`` processes (replicas, each in its own process group
so that :meth:`Replica.kill` is a real SIGKILL) on free loopback ports, then one of the real
routers in front of them (``vllm-router`` or ``sglang-router``, from the ``fleet`` extra) with a
policy, and waits until the router admits every replica. Point madeval at :attr:`Fleet.base_url`.
madeval has no load balancer of its own: this module only starts the real ones::

    from madeval.testing.fleet import Fleet

    with Fleet(tmp_path, replicas=3, policy="consistent_hash") as fleet:
        madeval.evaluate("arith_mc", base_url=fleet.base_url, limit=6, output_path=tmp_path / "run")
        per_replica = fleet.stats()  # GET /stats of every live replica, by its URL

:meth:`Fleet.add_replica` adds one more replica to the running router
(vllm-router: ``POST /add_worker?url=...``; sglang-router: ``POST /workers`` with ``{"url": ...}``).
Every process is stopped on exit, its whole process group.
Every wait is bounded; when one runs out, :class:`FleetError` names the log to read.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from madeval.llm.embedded import NO_PROXY_OPENER, free_loopback_port
from madeval.llm.routing import SGLANG_ROUTER_HEADER, VLLM_ROUTER_HEADER
from madeval.util.install import install_command

#: The router binaries (console scripts of the ``fleet`` extra) and the policy that reads
#: madeval's routing key on each: vllm-router's ``consistent_hash`` reads ``X-Session-ID``;
#: sglang-router 0.3.2's command line offers ``manual`` (sticky per ``X-SMG-Routing-Key``), not
#: the ``consistent_hashing`` its library has.
ROUTERS = ("vllm-router", "sglang-router")
KEY_POLICY = {"vllm-router": "consistent_hash", "sglang-router": "manual"}
#: The header each router's key policy reads (``--routing-header``).
KEY_HEADER = {"vllm-router": VLLM_ROUTER_HEADER, "sglang-router": SGLANG_ROUTER_HEADER}
HOST = "127.0.0.1"


class FleetError(RuntimeError):
    """A replica or the router did not start, or the router did not admit a replica in time."""


def router_binary(router: str) -> str | None:
    """Where the ``router`` console script is: beside this Python's executable, or on PATH."""
    beside = Path(sys.executable).with_name(router)
    return str(beside) if beside.exists() else shutil.which(router)


def _get_json(url: str, timeout: float = 2.0) -> Any:
    """GET ``url`` and parse its JSON body (no proxy: everything here is loopback)."""
    with NO_PROXY_OPENER.open(url, timeout=timeout) as response:
        return json.loads(response.read(4 * 1024 * 1024))


def _wait(condition: Callable[[], bool], deadline_s: float, failure: str) -> None:
    """Poll ``condition`` every 50 ms until it holds; :class:`FleetError` with ``failure`` after
    ``deadline_s`` seconds. Connection errors count as "not yet"."""
    deadline = time.monotonic() + deadline_s
    while True:
        try:
            if condition():
                return
        except (OSError, ValueError):
            pass
        if time.monotonic() > deadline:
            raise FleetError(failure)
        time.sleep(0.05)


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    """Send ``sig`` to ``process``'s process group (its own session), if it still runs."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            pass


def _stop_group(process: subprocess.Popen, sig: int) -> None:
    """Send ``sig`` to ``process``'s process group and reap it (SIGKILL after 10 s)."""
    _signal_group(process, sig)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


@dataclass
class Replica:
    """One ``madeval simulator`` process: its URL (``http://127.0.0.1:PORT``), process and log."""

    url: str
    process: subprocess.Popen
    log: Path

    def stats(self) -> dict[str, Any]:
        """Its ``GET /stats`` (requests, prompt tokens computed and cached, routing keys...)."""
        return _get_json(self.url + "/stats")

    @property
    def alive(self) -> bool:
        """Whether the process is still running."""
        return self.process.poll() is None

    def kill(self) -> None:
        """SIGKILL the replica (its process group) and reap it: a replica that dies."""
        _stop_group(self.process, signal.SIGKILL)


@dataclass
class Fleet:
    """``replicas`` simulator replicas behind ``router`` with ``policy``, logs in ``folder``.

    ``simulator_args`` go to every ``madeval simulator`` (e.g. ``["--latency", "0.05",
    "--max-concurrency", "8", "--prefix-cache-tokens", "20000"]``; default tasks: ``generated``);
    ``router_args`` are appended to the router's command line. The router checks its workers'
    health every second, so a dead replica is taken out quickly. Use as a context manager.
    """

    folder: Path
    replicas: int = 3
    router: str = "vllm-router"
    policy: str | None = None  # None: the router's policy that reads madeval's routing key (KEY_POLICY)
    simulator_args: Sequence[str] = ()
    router_args: Sequence[str] = ()
    start_timeout_s: float = 60.0
    members: list[Replica] = field(default_factory=list, init=False)
    _router: subprocess.Popen | None = field(default=None, init=False)
    _router_port: int = field(default=0, init=False)
    _count: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        if self.router not in ROUTERS:
            raise ValueError(f"router must be one of {', '.join(ROUTERS)}, got '{self.router}'")
        self.folder = Path(self.folder)
        self.policy = self.policy or KEY_POLICY[self.router]

    @property
    def router_log(self) -> Path:
        """The router's stdout and stderr."""
        return self.folder / f"{self.router}.log"

    @property
    def router_url(self) -> str:
        """The router's address, ``http://127.0.0.1:PORT`` (its admin routes live here)."""
        return f"http://{HOST}:{self._router_port}"

    @property
    def base_url(self) -> str:
        """The OpenAI ``base_url`` to give madeval: the router's ``/v1``."""
        return self.router_url + "/v1"

    def __enter__(self) -> Fleet:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        """Start the replicas, then the router, and wait until it admits every replica; if any of
        it fails, stop what was started and raise."""
        binary = router_binary(self.router)
        if binary is None:
            raise FleetError(f"{self.router} is not installed ({install_command('fleet')})")
        try:
            self._start(binary)
        except BaseException:
            self.stop()
            raise

    def _start(self, binary: str) -> None:
        """The replicas, their health, then ``binary`` (the router) in front of them."""
        self.folder.mkdir(parents=True, exist_ok=True)
        started = [self._spawn_replica() for _ in range(self.replicas)]
        self.members.extend(started)
        for replica in started:
            self._wait_healthy(replica)
        self._router_port = free_loopback_port()
        command = [binary, *self._router_command(), *self.router_args]
        with self.router_log.open("ab") as log:
            self._router = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, start_new_session=True)
        self._wait_admitted({replica.url for replica in started})

    def _router_command(self) -> list[str]:
        """The router's arguments: loopback address, its metrics port, the policy, the workers,
        quiet logs and a health check every second."""
        common = ["--host", HOST, "--port", str(self._router_port), "--prometheus-port", str(free_loopback_port()),
                  "--policy", self.policy, "--health-check-interval-secs", "1",
                  "--worker-urls", *[replica.url for replica in self.members]]
        if self.router == "sglang-router":
            return ["launch", *common, "--log-level", "warn"]
        return [*common, "--log-level", "warning"]

    def _spawn_replica(self) -> Replica:
        """Start one ``madeval simulator`` process on a free port (not yet waited for)."""
        port = free_loopback_port()
        self._count += 1
        log = self.folder / f"replica-{self._count}-{port}.log"
        command = [sys.executable, "-m", "madeval", "simulator", "--port", str(port), *self.simulator_args]
        with log.open("ab") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                       start_new_session=True)
        return Replica(f"http://{HOST}:{port}", process, log)

    def _wait_healthy(self, replica: Replica) -> None:
        """Wait until ``replica`` answers ``GET /health``."""
        def healthy() -> bool:
            if not replica.alive:
                raise FleetError(f"the simulator replica {replica.url} exited; see {replica.log}")
            with NO_PROXY_OPENER.open(replica.url + "/health", timeout=1) as response:
                return response.status == 200
        _wait(healthy, self.start_timeout_s,
              f"the simulator replica {replica.url} did not answer /health in {self.start_timeout_s:g} s; "
              f"see {replica.log}")

    def admitted(self) -> set[str]:
        """The worker URLs the router lists as healthy (``GET /workers``)."""
        listing = _get_json(self.router_url + "/workers")
        return {worker["url"] for worker in listing.get("workers", []) if worker.get("is_healthy")}

    def _wait_admitted(self, urls: set[str]) -> None:
        """Wait until the router lists every one of ``urls`` as a healthy worker."""
        def ready() -> bool:
            if self._router is None or self._router.poll() is not None:
                raise FleetError(f"{self.router} exited; see {self.router_log}")
            return urls <= self.admitted()
        _wait(ready, self.start_timeout_s,
              f"{self.router} did not admit {sorted(urls)} in {self.start_timeout_s:g} s; see {self.router_log}")

    def start_replica(self) -> Replica:
        """Start one more replica and wait until it is healthy, without adding it to the router
        (:meth:`add_replica` does); it is stopped with the fleet."""
        replica = self._spawn_replica()
        self.members.append(replica)
        self._wait_healthy(replica)
        return replica

    def add_replica(self, replica: Replica | None = None) -> Replica:
        """Add ``replica`` (by default a new one, :meth:`start_replica`) to the running router and
        wait until the router admits it."""
        replica = replica or self.start_replica()
        if self.router == "sglang-router":  # 0.3.2 has no /add_worker; it queues a JSON POST to /workers
            request = urllib.request.Request(f"{self.router_url}/workers", json.dumps({"url": replica.url}).encode(),
                                             {"content-type": "application/json"}, method="POST")
        else:
            query = urllib.parse.urlencode({"url": replica.url})
            request = urllib.request.Request(f"{self.router_url}/add_worker?{query}", method="POST")
        try:
            with NO_PROXY_OPENER.open(request, timeout=10) as response:
                response.read()
        except urllib.error.HTTPError as error:
            raise FleetError(f"{self.router} refused to add {replica.url}: HTTP {error.code} "
                             f"{error.read(2000)!r}; see {self.router_log}") from None
        self._wait_admitted({replica.url})
        return replica

    def stats(self) -> dict[str, dict[str, Any]]:
        """``GET /stats`` of every live replica, by its URL."""
        return {replica.url: replica.stats() for replica in self.members if replica.alive}

    def total(self, field: str) -> int:
        """One ``GET /stats`` count summed over the live replicas (``requests``,
        ``prompt_tokens_computed``, ...)."""
        return sum(stats[field] for stats in self.stats().values())

    def stop(self) -> None:
        """Stop the router, then every replica (SIGTERM to each process group, reaped)."""
        processes = [replica.process for replica in self.members]
        if self._router is not None:
            processes.insert(0, self._router)
            self._router = None
        for process in processes:  # all signalled first, then reaped: they stop in parallel
            _signal_group(process, signal.SIGTERM)
        for process in processes:
            _stop_group(process, signal.SIGTERM)


__all__ = ["Fleet", "FleetError", "KEY_HEADER", "KEY_POLICY", "ROUTERS", "Replica", "router_binary"]
