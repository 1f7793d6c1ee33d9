"""The simulator in a separate process, so the harness under test has the other core."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from pathlib import Path
from typing import Iterator

from madeval.llm.embedded import NO_PROXY_OPENER, free_loopback_port


@contextlib.contextmanager
def simulator_process(*, latency: float, tasks: str, include_path: Path | None = None,
                      options: tuple[str, ...] = ()) -> Iterator[str]:
    """Run ``madeval simulator`` with ``latency`` seconds per reply (and any other ``options``);
    yield its base URL."""
    port = free_loopback_port()
    command = [sys.executable, "-m", "madeval", "simulator", "--port", str(port), "--tasks", tasks,
               "--conformity", "0.5", *(("--latency", str(latency)) if latency else ()), *options]
    if include_path is not None:
        command += ["--include-path", str(include_path)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base_url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.time() + 120
        while True:
            try:
                with NO_PROXY_OPENER.open(base_url + "/models", timeout=1):
                    break
            except OSError:
                if process.poll() is not None or time.time() > deadline:
                    raise RuntimeError("the simulator did not start") from None
                time.sleep(0.1)
        yield base_url
    finally:
        process.terminate()
        process.wait(timeout=10)
