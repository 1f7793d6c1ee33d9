"""``python -m bench.batch``: the harness's own overhead per call through ``--transport batch``.

The simulator runs in its own process with batches that finish at once (no provider turnaround),
so what is left is madeval's CPU per call: gathering calls, writing the request file, uploading it,
polling, reading the output file, handing replies back. Printed next to the default transport's, on
the same workload (Memory, 3 agents, 3 turns, simple voting), with the batch round trips against
the longest dependency chain.
"""

from __future__ import annotations

import argparse
import io
import json
import tempfile
import urllib.request
from pathlib import Path

from madeval.config import DebateConfig, RunSettings
from madeval.records import read_records
from madeval.run import run

from .__main__ import task_folder
from .simulator import simulator_process


def measure(base_url: str, tasks: Path, items: int, transport: str) -> dict:
    """One run; its CPU, calls, longest chain, and (batch) the batches the simulator created."""
    stats_url = base_url.removesuffix("/v1") + "/stats"
    before = json.load(urllib.request.urlopen(stats_url))["batches"]["batches_created"]
    settings = RunSettings(
        tasks=["bench_arith"], include_path=[str(tasks)], limit=items, base_url=base_url, cache="off",
        configurations=[DebateConfig(paradigm="memory", decider="simple_voting", agents=3, max_turns=3)],
        concurrency=100_000, transport=transport, output_path=tempfile.mkdtemp(prefix="madeval-bench-batch-"),
        batch_options={"flush_s": 0.05, "poll_s": 0.05} if transport == "batch" else {},
    )
    result = run(settings, show_progress=False, out=io.StringIO())
    records = list(read_records(result.folder))
    batches = json.load(urllib.request.urlopen(stats_url))["batches"]["batches_created"] - before
    calls = sum(record["calls"] for record in records)
    return {"transport": transport, "items": items, "calls": calls, "wall_s": round(result.outcome.wall_s, 2),
            "cpu_ms_per_call": round(1000 * result.outcome.cpu_s / calls, 3),
            "longest_chain": max(record["chain"] for record in records), "batches": batches}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=300)
    args = parser.parse_args()
    tasks = task_folder(args.items)
    with simulator_process(latency=0.0, tasks="bench_arith", include_path=tasks) as base_url:
        for transport in ("aiohttp", "batch"):
            print(json.dumps(measure(base_url, tasks, args.items, transport)), flush=True)


if __name__ == "__main__":
    main()
