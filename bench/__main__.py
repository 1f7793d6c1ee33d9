"""``python -m bench``: measure madeval against the simulator and print a table (see bench/__init__)."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .loadgen import requests_per_second
from .simulator import simulator_process

ROOT = Path(__file__).resolve().parent.parent
GENERATOR = ROOT / "tasks" / "generated" / "arith.py"
TASK = """task: bench_arith
dataset: {{generator: !function arith.multiple_choice, size: {size}, seed: 7}}
doc_to_id: id
doc_to_text: question
doc_to_choice: choices
doc_to_target: answer
answer_type: choice
instruction: "Answer the following multiple-choice question. Make absolutely sure to provide your solution in the end: \
'FINAL SOLUTION: <Letter>'."
answer_extraction: [choice]
"""


def task_folder(size: int) -> Path:
    """A temporary task folder with ``bench_arith``: ``size`` generated four-option items."""
    folder = Path(tempfile.mkdtemp(prefix="madeval-bench-tasks-"))
    shutil.copy(GENERATOR, folder / "arith.py")
    (folder / "bench_arith.yaml").write_text(TASK.format(size=size))
    return folder


def measure(workload: dict) -> dict:
    """Run one workload in a fresh worker process and return its measurements."""
    done = subprocess.run([sys.executable, "-m", "bench.worker", json.dumps(workload)], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench worker failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def bound(result: dict, latency: float, concurrency: int) -> dict:
    """The best any harness can do: max(longest chain x latency, calls x latency / concurrency)."""
    chain = result["max_chain"] * latency
    throughput = result["total_calls_recorded"] * latency / concurrency
    best = max(chain, throughput)
    return {"chain_s": chain, "throughput_s": throughput, "bound_s": best,
            "ratio": result["wall_s"] / best if best else float("nan")}


def environment() -> dict:
    """Where the numbers come from: commit, versions, cores and load (compare like with like)."""
    import os
    import platform

    from madeval import __version__

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True, check=False).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                                capture_output=True, text=True, check=False).stdout.strip())
    return {"commit": commit + ("+dirty" if dirty else ""), "madeval": __version__,
            "python": platform.python_version(), "cpus": os.cpu_count(), "load_before": os.getloadavg()[0]}


#: ``python -m bench NAME``: the module of bench/ that measures it (imported only when asked).
SUBCOMMANDS = {
    "prefix-reuse": "prefix_reuse",
    "fleet": "fleet",
    "startup": "startup",
    "mallm-answers": "mallm_answers",
    "import": "importing",
    "viewer": "viewer",
    "endpoint-faults": "endpoint_faults",
    "lmeval-start": "lmeval_start",
    "board-cost": "board_cost",
    "shared-calls": "shared_calls",
    "calibration": "calibration",
}


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] and argv[0] in SUBCOMMANDS:  # e.g. python -m bench fleet: see bench/fleet.py
        return importlib.import_module(f".{SUBCOMMANDS[argv[0]]}", __package__).main(argv[1:])
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--paradigm", default="memory")
    parser.add_argument("--decider", default="simple_voting")
    parser.add_argument("--vote-after-turns", type=int, default=3)
    parser.add_argument("--persona", default="none")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--transports", default="aiohttp,openai",
                        help="transports to measure, comma-separated (the first is madeval's default)")
    parser.add_argument("--scaling", default="1000,10000", help="item counts for the memory/output check")
    parser.add_argument("--out", default="bench-results.json")
    parser.add_argument("--repeats", type=int, default=3,
                        help="measure wall time and CPU this many times and report the best and the median "
                             "(a shared machine's speed varies by half between minutes)")
    parser.add_argument("--smoke", action="store_true",
                        help="a tiny run for CI: 10 items, scaling 20,40, 1 repeat, 0.25 s of simulator load")
    args = parser.parse_args(argv)
    if args.smoke:
        args.items, args.scaling, args.repeats = 10, "20,40", 1
    transports = [t for t in args.transports.split(",") if t]
    sizes = [int(s) for s in args.scaling.split(",") if s]
    largest = max([args.items, *sizes])
    tasks = task_folder(largest)
    work = Path(tempfile.mkdtemp(prefix="madeval-bench-runs-"))
    base = {"task": "bench_arith", "include_path": str(tasks), "paradigm": args.paradigm, "decider": args.decider,
            "decider_args": {"vote_after_turns": args.vote_after_turns} if "voting" in args.decider else {},
            "agents": args.agents, "persona": args.persona, "concurrency": args.concurrency}
    report: dict = {"workload": {**base, "items": args.items, "latency_s": args.latency},
                    "environment": environment(), "time": time.time(), "target": {}, "cpu_per_call_ms": {}}
    try:
        with simulator_process(latency=args.latency, tasks="bench_arith", include_path=tasks) as url:
            for transport in transports:
                runs = []
                for attempt in range(args.repeats):
                    target = measure({**base, "transport": transport, "items": args.items, "base_url": url,
                                      "output_path": str(work / f"target-{transport}-{attempt}"),
                                      "cache": str(work / f"cache-{transport}-{attempt}.sqlite")})
                    runs.append({**target, **bound(target, args.latency, args.concurrency),
                                 "calls_per_s": target["calls"] / target["wall_s"]})
                best = min(runs, key=lambda run: run["wall_s"])
                report["target"][transport] = {**best, "ratio_median": statistics.median(r["ratio"] for r in runs),
                                               "ratios": [r["ratio"] for r in runs]}
            rerun = measure({**base, "transport": transports[0], "items": args.items, "base_url": url,
                             "output_path": str(work / "rerun"),
                             "cache": str(work / f"cache-{transports[0]}-0.sqlite")})
        report["cache_rerun"] = {"calls": rerun["calls"], "cached_calls": rerun["cached_calls"],
                                 "wall_s": rerun["wall_s"]}
        with simulator_process(latency=0.0, tasks="bench_arith", include_path=tasks) as url:
            for transport in transports:
                for cache in ("off", "on"):
                    costs = []
                    for attempt in range(args.repeats):
                        zero = measure({**base, "transport": transport, "items": args.items, "base_url": url,
                                        "output_path": str(work / f"zero-{transport}-{cache}-{attempt}"),
                                        "cache": "off" if cache == "off"
                                                 else str(work / f"zero-{transport}-{attempt}.sqlite")})
                        costs.append(1000 * zero["cpu_s"] / max(zero["calls"], 1))
                    report["cpu_per_call_ms"][f"{transport}, cache {cache}"] = {
                        "best": min(costs), "median": statistics.median(costs), "all": costs}
            report["scaling"] = []
            for size in sizes:
                result = measure({**base, "transport": transports[0], "items": size, "base_url": url,
                                  "output_path": str(work / f"scale-{size}")})
                report["scaling"].append({"items": size, "peak_rss_mb": result["peak_rss_mb"],
                                          "output_bytes_per_item": result["output_bytes"] / size,
                                          "wall_s": result["wall_s"], "calls": result["calls"],
                                          "failed": result["failed"]})
            # --smoke only shows that the figure is measured: a quarter second of load is enough for that
            load_s = 0.25 if args.smoke else 5.0
            report["simulator_requests_per_s"] = asyncio.run(requests_per_second(url, seconds=load_s))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(tasks, ignore_errors=True)
    import os

    report["environment"]["load_after"] = os.getloadavg()[0]
    Path(args.out).write_text(json.dumps(report, indent=2))
    print_table(report)


def print_table(report: dict) -> None:
    """The measurements as a plain table, with the targets of issue 7 beside them."""
    w = report["workload"]
    e = report["environment"]
    rows = [
        ("workload", f"{w['items']} items, {w['agents']} agents, {w['paradigm']} + {w['decider']}, "
                     f"latency {1000 * w['latency_s']:.0f} ms, concurrency {w['concurrency']}"),
        ("environment",
         f"commit {e['commit']}, {e['cpus']} cpus, load {e['load_before']:.2f} -> {e['load_after']:.2f}"),
    ]
    for transport, t in report["target"].items():
        rows += [
            (f"[{transport}] wall time", f"{t['wall_s']:.3f} s ({t['total_s']:.2f} s with start-up and summary); "
                                         f"{t['failed']} failed"),
            (f"[{transport}] calls", f"{t['calls']} ({t['calls_per_s']:.0f} calls/s); in flight mean "
                                     f"{t['mean_in_flight']:.1f}, peak {t['peak_in_flight']}"),
            (f"[{transport}] bound", f"max(longest chain {t['max_chain']} x latency = {t['chain_s']:.3f} s, "
                                     f"{t['total_calls_recorded']} calls x latency / concurrency = "
                                     f"{t['throughput_s']:.3f} s) = {t['bound_s']:.3f} s"),
            (f"[{transport}] wall / bound", f"{t['ratio']:.2f} best, {t['ratio_median']:.2f} median of "
                                            f"{len(t['ratios'])} (target <= 1.3)"),
        ]
    for name, value in report["cpu_per_call_ms"].items():
        rows.append((f"CPU per call [{name}]", f"{value['best']:.3f} ms best, {value['median']:.3f} median "
                                               f"at latency 0 (target <= 1)"))
    rows += [
        ("identical re-run", f"{report['cache_rerun']['calls']} calls, {report['cache_rerun']['wall_s']:.3f} s"),
        ("simulator capacity", f"{report['simulator_requests_per_s']:.0f} requests/s (target >= 2000)"),
    ]
    for row in report["scaling"]:
        rows.append((f"{row['items']} items", f"peak RSS {row['peak_rss_mb']:.0f} MB (target < 500 at 10k), "
                                              f"{row['output_bytes_per_item']:.0f} output bytes/item"))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")


if __name__ == "__main__":
    main()
