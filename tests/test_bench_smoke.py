"""The benchmark's tiny CI version runs end to end and its numbers hang together.

Speed targets are read from the benchmark's printed numbers, never asserted here: this only
checks that ``python -m bench --smoke`` works and measures what it says it measures.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_bench_smoke_runs_and_reports_consistent_numbers(tmp_path):
    out = tmp_path / "bench.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--smoke", "--transports", "aiohttp", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    target = report["target"]["aiohttp"]
    # Every unit finished, and the recorded calls are the client's calls.
    assert target["units"] == 10 and target["failed"] == 0
    assert target["calls"] == target["total_calls_recorded"] > 0
    # Memory + simple voting after 3 turns, 3 agents: 9 sequential turns then one parallel vote
    # step, so no debate's chain is shorter than 10 calls, and the bound is at least 10 x 50 ms.
    assert target["max_chain"] >= 10 and target["bound_s"] >= 0.5 - 1e-9
    # The bound is the larger of its two terms (latency 50 ms, concurrency 100); --smoke measures once.
    assert target["bound_s"] == max(target["max_chain"] * 0.05, target["total_calls_recorded"] * 0.05 / 100)
    assert target["ratios"] == [target["wall_s"] / target["bound_s"]] and target["ratio"] == target["ratios"][0]
    assert 0 < target["mean_in_flight"] <= target["peak_in_flight"] <= 100
    # An identical re-run is served from the cache alone.
    assert report["cache_rerun"]["calls"] == 0 and report["cache_rerun"]["cached_calls"] == target["calls"]
    # Output per item does not grow with the item count (records are streamed, never rewritten).
    small, large = report["scaling"]
    assert small["failed"] == large["failed"] == 0
    assert abs(large["output_bytes_per_item"] / small["output_bytes_per_item"] - 1) < 0.05
    assert report["simulator_requests_per_s"] > 0
    assert "wall / bound" in done.stdout and "CPU per call" in done.stdout
