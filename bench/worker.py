"""One measured run, in its own process (so its peak memory is its own): prints one JSON line.

``python -m bench.worker '<json workload>'``
"""

from __future__ import annotations

import io
import json
import resource
import sys
import time
from pathlib import Path


def measure(workload: dict) -> dict:
    """Run ``workload`` against ``workload['base_url']`` and report what it cost."""
    from madeval.evaluation import run
    from madeval.records.folder import read_records
    from madeval.settings.config import DebateConfig, RunSettings

    config = DebateConfig(
        persona=workload.get("persona", "none"),
        paradigm=workload["paradigm"],
        decider=workload["decider"],
        decider_args=workload.get("decider_args", {}),
        agents=workload["agents"],
        max_turns=workload.get("max_turns", 10),
    )
    settings = RunSettings(
        tasks=[workload["task"]],
        include_path=[workload["include_path"]],
        configurations=[config],
        limit=workload["items"],
        base_url=workload["base_url"],
        concurrency=workload["concurrency"],
        transport=workload["transport"],
        output_path=workload["output_path"],
        cache=workload.get("cache", "off"),
    )
    started = time.perf_counter()
    result = run(settings, show_progress=False, out=io.StringIO())
    total = time.perf_counter() - started
    outcome = result.outcome
    records = result.folder / "records.jsonl"
    chains, recorded_calls = [], 0
    for record in read_records(result.folder):
        chains.append(record["chain"])
        recorded_calls += record["calls"]
    return {
        "units": outcome.finished + outcome.skipped,
        "failed": outcome.failed,
        "wall_s": outcome.wall_s,
        "total_s": total,
        "cpu_s": outcome.cpu_s,
        "calls": outcome.calls,
        "cached_calls": outcome.cached_calls,
        "peak_in_flight": outcome.peak_in_flight,
        "mean_in_flight": outcome.mean_in_flight,
        "max_chain": max(chains, default=0),
        "total_calls_recorded": recorded_calls,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "output_bytes": Path(records).stat().st_size,
    }


if __name__ == "__main__":
    print(json.dumps(measure(json.loads(sys.argv[1]))))
