"""The benchmark's tiny CI version runs end to end and its numbers hang together.

Speed targets are read from the benchmark's printed numbers, never asserted here: this only
checks that ``python -m bench --smoke`` works and measures what it says it measures.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
PLUGIN_PACKAGES = ("madeval-frameworks", "madeval-freemad", "madeval-madc")


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


def test_bench_prefix_reuse_measures_every_paradigm_and_preset(tmp_path):
    """``python -m bench prefix-reuse`` on one item: one row per built-in paradigm and plugin preset,
    each with the calls its protocol makes and a fraction that is its reusable share of the tokens."""
    out = tmp_path / "reuse.json"
    env = {**os.environ, "MADEVAL_LOAD_PLUGINS": ",".join(PLUGIN_PACKAGES)}
    done = subprocess.run([sys.executable, "-m", "bench", "prefix-reuse", "--items", "1", "--json", str(out)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = {row["configuration"]: row for row in json.loads(out.read_text())}
    # leaderboards/presets.yaml names every preset of the plugin packages (their tests check it).
    listed = yaml.safe_load((ROOT / "leaderboards" / "presets.yaml").read_text())["runs"]
    plugin_presets = {f"preset {run['preset']}" for run in listed}
    paradigms = {"memory", "relay", "report", "debate", "collective_refinement", "collective_improvement"}
    assert set(rows) == paradigms | plugin_presets
    # 3 agents x 5 turns, counting adds no call; Debate: a draft + 2 rounds of 2 debaters per turn;
    # Collective Improvement (voting only): one vote per agent after turn 5.
    calls = {name: rows[name]["calls"] for name in paradigms}
    assert calls == {"memory": 15, "relay": 15, "report": 15, "collective_refinement": 15,
                     "debate": 25, "collective_improvement": 18}
    for row in rows.values():
        assert row["calls"] > 0 and 0 <= row["reusable_tokens"] < row["prompt_tokens"]
        assert row["fraction"] == row["reusable_tokens"] / row["prompt_tokens"]
        # The same agent's earlier calls are some of the debate's earlier calls: never more reuse.
        assert 0 <= row["own_reusable_tokens"] <= row["reusable_tokens"]
        assert row["own_fraction"] == row["own_reusable_tokens"] / row["prompt_tokens"]
    # Every agent of a Memory debate is shown the same opening lines, so some prefix is always shared.
    assert rows["memory"]["reusable_tokens"] > 0
    assert "fraction" in done.stdout and "memory" in done.stdout


def test_bench_fleet_runs_every_fleet_on_the_same_workload(tmp_path):
    from madeval.testing.fleet import router_binary

    if router_binary("vllm-router") is None:
        pytest.skip("vllm-router is not installed (the 'fleet' extra: make install)")
    out = tmp_path / "fleet.json"
    done = subprocess.run([sys.executable, "-m", "bench", "fleet", "--smoke", "--replicas", "2", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    one, two = report["throughput"]["1"], report["throughput"]["2"]
    # --smoke: 8 debates of 3 agents, 2 turns, counting (every debate runs all its turns): 48 calls.
    for row in (one, two):
        assert (row["units"], row["failed"], row["calls"], row["total_calls_recorded"]) == (8, 0, 48, 48)
        assert row["calls_per_s"] == row["calls"] / row["wall_s"] and row["debates_per_s"] == 8 / row["wall_s"]
    # The prefix-cache runs: the same 4 debates (24 calls) under each policy, every prompt token of
    # them counted once by the replicas, as computed or as cached.
    rows = report["prefix_cache"]
    assert list(rows) == ["round_robin", "cache_aware", "consistent_hash"]
    totals = {row["computed_tokens"] + row["cached_tokens"] for row in rows.values()}
    assert len(totals) == 1 and totals.pop() > 0 and all(row["calls"] == 24 for row in rows.values())
    assert 0 < two["cpu_s"] and "(c) madeval CPU per call" in done.stdout and "(a) speed-up" in done.stdout


def test_bench_startup_measures_a_one_item_run_and_splits_it(tmp_path):
    """``python -m bench startup --runs 1``: one whole-process run of one item against the simulator,
    and one run split into phases, each with its wall and CPU time; the run loads no heavy library."""
    out = tmp_path / "startup.json"
    done = subprocess.run([sys.executable, "-m", "bench", "startup", "--runs", "1", "--json", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["runs"] == 1 and report["walls_s"] == [report["wall_s"]] and report["target_s"] == 1.5
    assert 0 < report["interpreter_s"] < report["wall_s"] and 0 < report["cpu_s"]
    for phase in ("imports", "run", "statistics", "outputs", "charts_when_asked"):
        # CPU time may exceed wall time: a library's threads (numpy's BLAS) count too.
        assert report[f"{phase}_cpu_s"] >= 0 and report[f"{phase}_s"] >= 0, phase
    assert report["imports_s"] > 0 and report["run_s"] > 0 and report["charts_when_asked_s"] > 0
    assert report["heavy_modules"] == []
    assert "one-item run, whole process" in done.stdout and "charts when asked" in done.stdout


def test_no_benchmark_reaches_into_the_tests():
    """Every bench module imports with madeval alone: none puts tests/ on the path or imports a
    test helper (what both need lives in madeval.testing)."""
    probe = ("import pkgutil, importlib, sys, bench\n"
             "for module in pkgutil.iter_modules(bench.__path__):\n"
             "    importlib.import_module('bench.' + module.name)\n"
             "print(sorted(p for p in sys.path if p.rstrip('/').endswith('tests')),"
             " sorted(m for m in ('browser', 'helpers', 'conftest') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[] []"
