"""``python -m bench lmeval-start``: how long ``madeval --tasks lm_eval:gsm8k`` takes to make its first call.

Starts the simulator (serving ``lm_eval:gsm8k``) in its own process, then runs
``madeval --tasks lm_eval:gsm8k --limit 1`` against it ``--runs`` times with a fresh madeval cache
folder, and reports for each run the seconds from starting the process to the simulator's first
chat request (polled on ``GET /stats`` every 10 ms). The first run is cold: it walks lm-eval's task
files and stores the index (madeval_lmeval.index_cache), builds gsm8k's items through lm-eval and
stores them (madeval_lmeval.item_cache); the others read both without importing lm_eval.tasks. The target for a
warm run is under 1.5 s; each run's CPU time to the first call (read from ``/proc``, all threads)
and from start to exit is printed too, since a loaded machine stretches wall times several-fold.
Needs lm-eval installed and the gsm8k mirror under ``MADEVAL_DATA_DIR``.

``--task gsm8k`` measures a built-in task the same way (its rows read from the local mirror), to
compare madeval's own path to a first call with lm-eval's.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .simulator import simulator_process

TARGET_S = 1.5
TASK = "lm_eval:gsm8k"
ROOT = Path(__file__).resolve().parent.parent


def requests_seen(base_url: str) -> int:
    """The simulator's count of chat requests."""
    from madeval.llm.embedded import NO_PROXY_OPENER

    with NO_PROXY_OPENER.open(base_url.removesuffix("/v1") + "/stats", timeout=2) as response:
        return int(json.loads(response.read())["requests"])


def first_call(base_url: str, folder: Path, cache: Path, task: str = TASK) -> dict[str, float]:
    """Start one run of ``task``; seconds until the simulator sees its first request, and until the run ends."""
    before = requests_seen(base_url)
    command = [sys.executable, "-m", "madeval", "--tasks", task, "--limit", "1", "--base-url", base_url,
               "--cache", "off", "--no-progress", "--output-path", str(folder)]
    env = {**os.environ, "MADEVAL_CACHE_DIR": str(cache), "HF_HUB_OFFLINE": "1"}
    before_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               text=True)
    seen = seen_cpu = None
    while process.poll() is None and seen is None:
        if requests_seen(base_url) > before:
            seen, seen_cpu = time.perf_counter() - start, process_cpu(process.pid)
        else:
            time.sleep(0.01)
    _, errors = process.communicate(timeout=600)
    if process.returncode != 0:
        raise SystemExit(f"madeval --tasks {task} failed:\n{errors[-2000:]}")
    if seen is None:  # the run ended between two polls
        seen = time.perf_counter() - start
    after_cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after_cpu.ru_utime - before_cpu.ru_utime) + (after_cpu.ru_stime - before_cpu.ru_stime)
    return {"first_call_s": seen, "first_call_cpu_s": seen_cpu, "whole_s": time.perf_counter() - start,
            "cpu_s": cpu, "stderr_lines": len(errors.splitlines())}


def process_cpu(pid: int) -> float | None:
    """CPU seconds (user + system, all threads) the process has used so far; None off Linux."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime: fields 14, 15


def measure(runs: int, task: str = TASK) -> dict:
    """A cold run, then ``runs`` warm ones of ``task``; the median warm time to the first call."""
    work = Path(tempfile.mkdtemp(prefix="madeval-bench-lmeval-"))
    load_before = os.getloadavg()[0]
    try:
        with simulator_process(latency=0.0, tasks=task) as url:
            cache = work / "cache"
            cold = first_call(url, work / "cold", cache, task)
            warm = [first_call(url, work / f"warm-{index}", cache, task) for index in range(runs)]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    times = [w["first_call_s"] for w in warm]
    cpu = [w["first_call_cpu_s"] for w in warm if w["first_call_cpu_s"] is not None]
    return {"cold": cold, "warm": warm, "warm_first_call_s": statistics.median(times),
            "warm_first_call_cpu_s": statistics.median(cpu) if cpu else None, "target_s": TARGET_S,
            "load_before": load_before, "load_after": os.getloadavg()[0]}


def main(argv: list[str] | None = None) -> None:
    """``python -m bench lmeval-start [--runs N] [--task NAME] [--json FILE]``."""
    parser = argparse.ArgumentParser(prog="python -m bench lmeval-start", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=3, help="warm runs; the median is reported")
    parser.add_argument("--task", default=TASK, help=f"the task run (default {TASK}; gsm8k: the built-in one)")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    report = measure(max(args.runs, 1), args.task)
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    warm = ", ".join(f"{w['first_call_s']:.2f}" for w in report["warm"])
    print(f"first call, cold (index and items built and stored): {report['cold']['first_call_s']:.2f} s")
    print(f"first call, warm (index and items read from the cache): {report['warm_first_call_s']:.2f} s median of "
          f"{len(report['warm'])} ({warm}); target < {TARGET_S} s")
    if report["warm_first_call_cpu_s"] is not None:
        cpu = ", ".join(f"{w['first_call_cpu_s']:.2f}" for w in report["warm"])
        print(f"CPU seconds to the first call (not stretched by the machine's load), warm: "
              f"{report['warm_first_call_cpu_s']:.2f} median ({cpu}); cold {report['cold']['first_call_cpu_s']:.2f}")
    cpu = ", ".join(f"{w['cpu_s']:.2f}" for w in report["warm"])
    print(f"CPU seconds of each warm run, start to exit: {cpu}; cold {report['cold']['cpu_s']:.2f}")
    print(f"lines on stderr per warm run: {', '.join(str(w['stderr_lines']) for w in report['warm'])}")
    print(f"load average: {report['load_before']:.1f} before, {report['load_after']:.1f} after "
          "(wall times stretch with the load)")


if __name__ == "__main__":
    main()
