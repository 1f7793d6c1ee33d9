"""``python -m bench``: measure madeval against the simulator and print a table (see bench/__init__)."""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
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
instruction: "Answer the following multiple-choice question. Make absolutely sure to provide your solution in the end: 'FINAL SOLUTION: <Letter>'."
answer_extraction: [final_solution, answer_is, last_paren_letter, lone_letter]
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


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--items", type=int, default=100)
    parser.add_argument("--agents", type=int, default=3)
    parser.add_argument("--paradigm", default="memory")
    parser.add_argument("--decider", default="simple_voting")
    parser.add_argument("--vote-after-turns", type=int, default=3)
    parser.add_argument("--persona", default="none")
    parser.add_argument("--latency", type=float, default=0.05)
    parser.add_argument("--concurrency", type=int, default=100)
    parser.add_argument("--transport", default="aiohttp", help="aiohttp or openai")
    parser.add_argument("--scaling", default="1000,10000", help="item counts for the memory/output check")
    parser.add_argument("--out", default="bench-results.json")
    parser.add_argument("--smoke", action="store_true", help="a tiny run for CI: 10 items, scaling 20,40")
    args = parser.parse_args(argv)
    if args.smoke:
        args.items, args.scaling = 10, "20,40"
    sizes = [int(s) for s in args.scaling.split(",") if s]
    largest = max([args.items, *sizes])
    tasks = task_folder(largest)
    work = Path(tempfile.mkdtemp(prefix="madeval-bench-runs-"))
    base = {"task": "bench_arith", "include_path": str(tasks), "paradigm": args.paradigm, "decider": args.decider,
            "decider_args": {"vote_after_turns": args.vote_after_turns} if "voting" in args.decider else {},
            "agents": args.agents, "persona": args.persona, "concurrency": args.concurrency,
            "transport": args.transport}
    report: dict = {"workload": {**base, "items": args.items, "latency_s": args.latency}, "time": time.time()}
    with simulator_process(latency=args.latency, tasks="bench_arith", include_path=tasks) as url:
        target = measure({**base, "items": args.items, "base_url": url, "output_path": str(work / "target"),
                          "cache": str(work / "cache.sqlite")})
        rerun = measure({**base, "items": args.items, "base_url": url, "output_path": str(work / "rerun"),
                         "cache": str(work / "cache.sqlite")})
    report["target"] = {**target, **bound(target, args.latency, args.concurrency),
                        "calls_per_s": target["calls"] / target["wall_s"]}
    report["cache_rerun"] = {"calls": rerun["calls"], "cached_calls": rerun["cached_calls"], "wall_s": rerun["wall_s"]}
    with simulator_process(latency=0.0, tasks="bench_arith", include_path=tasks) as url:
        zero = measure({**base, "items": args.items, "base_url": url, "output_path": str(work / "zero")})
        report["cpu_per_call_ms"] = 1000 * zero["cpu_s"] / max(zero["calls"], 1)
        report["scaling"] = []
        for size in sizes:
            result = measure({**base, "items": size, "base_url": url, "output_path": str(work / f"scale-{size}")})
            report["scaling"].append({"items": size, "peak_rss_mb": result["peak_rss_mb"],
                                      "output_bytes_per_item": result["output_bytes"] / size,
                                      "wall_s": result["wall_s"], "calls": result["calls"]})
        report["simulator_requests_per_s"] = asyncio.run(requests_per_second(url, seconds=2 if args.smoke else 5))
    Path(args.out).write_text(json.dumps(report, indent=2))
    print_table(report)
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(tasks, ignore_errors=True)


def print_table(report: dict) -> None:
    """The measurements as a plain table."""
    t = report["target"]
    w = report["workload"]
    rows = [
        ("workload", f"{w['items']} items, {w['agents']} agents, {w['paradigm']} + {w['decider']}, "
                     f"latency {1000 * w['latency_s']:.0f} ms, concurrency {w['concurrency']}, {w['transport']}"),
        ("wall time", f"{t['wall_s']:.3f} s ({t['total_s']:.2f} s with start-up and summary)"),
        ("calls", f"{t['calls']} ({t['calls_per_s']:.0f} calls/s)"),
        ("calls in flight", f"mean {t['mean_in_flight']:.1f}, peak {t['peak_in_flight']}"),
        ("longest chain", f"{t['max_chain']} calls = {t['chain_s']:.3f} s"),
        ("throughput bound", f"{t['total_calls_recorded']} calls x latency / concurrency = {t['throughput_s']:.3f} s"),
        ("bound", f"{t['bound_s']:.3f} s; wall / bound = {t['ratio']:.2f}"),
        ("harness CPU per call", f"{report['cpu_per_call_ms']:.3f} ms (latency 0)"),
        ("identical re-run", f"{report['cache_rerun']['calls']} calls, {report['cache_rerun']['wall_s']:.3f} s"),
        ("simulator capacity", f"{report['simulator_requests_per_s']:.0f} requests/s"),
    ]
    for row in report["scaling"]:
        rows.append((f"{row['items']} items", f"peak RSS {row['peak_rss_mb']:.0f} MB, "
                                              f"{row['output_bytes_per_item']:.0f} output bytes/item"))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")


if __name__ == "__main__":
    main()
