"""``python -m bench fleet``: madeval through vllm-router in front of simulator replicas (issue 17).

Every replica is a ``madeval simulator`` process acting as one serving engine (``--max-concurrency``,
``--latency``, ``--prefill-ms-per-1k``, and for (b) a prefix cache), started with the real router
by :class:`madeval.testing.fleet.Fleet`; the runs are made in this process (``bench.worker.measure``:
madeval's imports are paid once, and its CPU time is this process's). Prints:

(a) throughput, calls/s and debates/s, of 1 replica and of ``--replicas`` replicas behind the
    router (``--policy``), on the same workload, and their ratio (target >= 3.5x at 4 replicas);
(b) Memory, 3 agents, 5 turns (the ``counting`` decider: every debate runs all its turns) on
    ``--replicas`` replicas with a prefix cache: computed prompt tokens (summed over the replicas'
    ``GET /stats``) and wall time under ``round_robin``, ``cache_aware`` and ``consistent_hash``
    with madeval's routing key (targets: the key computes at most half of round robin's tokens, and
    no more than cache_aware). No routing can cache more than the share of prompt tokens that
    repeat an earlier prompt of the same agent: ``python -m bench prefix-reuse``'s "own fraction";
(c) madeval's CPU per call: the process CPU time of the madeval side over its calls, in the
    ``--replicas`` run of (a) (target <= 1 ms).
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path

from madeval.testing.fleet import Fleet, FleetError, router_binary

from .__main__ import environment, task_folder
from .worker import measure

POLICIES = ("round_robin", "cache_aware", "consistent_hash")


def replica_args(args: argparse.Namespace, tasks: Path, cache: bool) -> list[str]:
    """``madeval simulator`` arguments for one replica of the bench."""
    replica = ["--tasks", "bench_arith", "--include-path", str(tasks), "--conformity", "0.5",
               "--latency", str(args.latency), "--max-concurrency", str(args.max_concurrency),
               "--prefill-ms-per-1k", str(args.prefill_ms_per_1k)]
    return replica + (["--prefix-cache-tokens", str(args.cache_tokens)] if cache else [])


def run_on_fleet(work: Path, name: str, fleet_options: dict, workload: dict) -> dict:
    """Start a fleet, run ``workload`` through its router, and return the run's measurements with
    the replicas' prompt token counts."""
    with Fleet(work / f"fleet-{name}", **fleet_options) as fleet:
        result = measure({**workload, "base_url": fleet.base_url, "output_path": str(work / f"run-{name}")})
        computed, cached = fleet.total("prompt_tokens_computed"), fleet.total("prompt_tokens_cached")
    if result["failed"]:
        raise SystemExit(f"bench fleet: {result['failed']} units failed in '{name}'; see {work}")
    return {**result, "computed_tokens": computed, "cached_tokens": cached,
            "calls_per_s": result["calls"] / result["wall_s"], "debates_per_s": result["units"] / result["wall_s"]}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench fleet", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--replicas", type=int, default=4)
    parser.add_argument("--policy", default="round_robin", help="the router's policy for (a)")
    parser.add_argument("--items", type=int, default=160, help="debates in (a)")
    parser.add_argument("--cache-items", type=int, default=48, help="debates in (b)")
    parser.add_argument("--max-concurrency", type=int, default=8, help="requests each replica serves at once")
    parser.add_argument("--latency", type=float, default=0.1, help="seconds per reply on a replica")
    parser.add_argument("--prefill-ms-per-1k", type=float, default=50.0,
                        help="prefill cost per 1,000 prompt tokens a replica's cache did not hold")
    parser.add_argument("--cache-tokens", type=int, default=200_000, help="prefix cache of each replica in (b)")
    parser.add_argument("--out", default="bench-fleet.json")
    parser.add_argument("--smoke", action="store_true", help="a tiny run for CI: 8 and 4 debates, 2 turns, no latency")
    args = parser.parse_args(argv)
    if args.smoke:
        args.items, args.cache_items, args.latency, args.prefill_ms_per_1k = 8, 4, 0.0, 0.0
    if args.replicas < 1 or args.items < 1 or args.cache_items < 1 or args.max_concurrency < 1:
        parser.error("--replicas, --items, --cache-items and --max-concurrency must be at least 1")
    if router_binary("vllm-router") is None:
        raise SystemExit("bench fleet: vllm-router is not installed (pip install 'madeval[fleet]')")
    tasks = task_folder(max(args.items, args.cache_items))
    work = Path(tempfile.mkdtemp(prefix="madeval-bench-fleet-"))
    base = {"task": "bench_arith", "include_path": str(tasks), "transport": "aiohttp", "paradigm": "memory",
            "decider": "counting", "agents": 3, "concurrency": args.replicas * args.max_concurrency * 2}
    report = {"environment": environment(), "replicas": args.replicas, "policy": args.policy,
              "replica": {"max_concurrency": args.max_concurrency, "latency_s": args.latency,
                          "prefill_ms_per_1k": args.prefill_ms_per_1k, "cache_tokens": args.cache_tokens}}
    try:
        throughput = {**base, "items": args.items, "max_turns": 2 if args.smoke else 3}
        report["throughput"] = {
            str(n): run_on_fleet(work, f"throughput-{n}", {"replicas": n, "policy": args.policy,
                                                          "simulator_args": replica_args(args, tasks, cache=False)},
                                 throughput)
            for n in sorted({1, args.replicas})}
        cached = {**base, "items": args.cache_items, "max_turns": 2 if args.smoke else 5}
        report["prefix_cache"] = {
            policy: run_on_fleet(work, f"cache-{policy}", {"replicas": args.replicas, "policy": policy,
                                                           "simulator_args": replica_args(args, tasks, cache=True)},
                                 cached)
            for policy in POLICIES}
    except FleetError as error:
        raise SystemExit(f"bench fleet: {error}") from None
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(tasks, ignore_errors=True)
    Path(args.out).write_text(json.dumps(report, indent=2))
    print_table(report)


def print_table(report: dict) -> None:
    """The figures, with issue 17's targets beside them."""
    replica, n = report["replica"], report["replicas"]
    one, many = report["throughput"]["1"], report["throughput"][str(n)]
    cache = report["prefix_cache"]
    rr, aware, key = (cache[policy] for policy in POLICIES)
    rows = [
        ("environment", f"commit {report['environment']['commit']}, {report['environment']['cpus']} cpus"),
        ("replica", f"--max-concurrency {replica['max_concurrency']}, latency {1000 * replica['latency_s']:.0f} ms, "
                    f"prefill {replica['prefill_ms_per_1k']:g} ms per 1k computed tokens"),
    ]
    for label, row in (("1 replica", one), (f"{n} replicas", many)):
        rows.append((f"(a) {label}", f"{row['calls']} calls in {row['wall_s']:.2f} s: "
                                     f"{row['calls_per_s']:.0f} calls/s, "
                                     f"{row['debates_per_s']:.1f} debates/s ({report['policy']})"))
    rows.append(("(a) speed-up", f"{many['calls_per_s'] / one['calls_per_s']:.2f}x (target >= 3.5x at 4 replicas)"))
    for policy, row in cache.items():
        share = row["cached_tokens"] / max(row["cached_tokens"] + row["computed_tokens"], 1)
        rows.append((f"(b) {policy}", f"{row['computed_tokens']} prompt tokens computed, {row['cached_tokens']} cached "
                                      f"({share:.1%}), wall {row['wall_s']:.2f} s"))
    for name, other, target in (("round robin", rr, 0.5), ("cache_aware", aware, 1)):
        ratio = key["computed_tokens"] / max(other["computed_tokens"], 1)
        rows.append((f"(b) key / {name}", f"{ratio:.2f} (target <= {target:g})"))
    rows.append(("(c) madeval CPU per call", f"{1000 * many['cpu_s'] / max(many['calls'], 1):.3f} ms (target <= 1)"))
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")
