"""API keys are read, never written: not in records, run.json, the cache or the logs."""

from __future__ import annotations

import subprocess
import sys

from madeval.simulator import simulate

FAKE_KEY = "sk-madeval-test-4f9c2e7a1b8d6053c0ffee"


def test_no_secret_in_output_cache_or_logs(generated_tasks, tmp_path):
    cache = tmp_path / "cache.sqlite"
    with simulate(tasks=generated_tasks.values(), api_key=FAKE_KEY) as sim:
        env = {"PATH": "/usr/bin:/bin", "MADEVAL_API_KEY": FAKE_KEY, "MADEVAL_LOAD_PLUGINS": "",
               "MADEVAL_CACHE_DIR": str(tmp_path / "cachedir")}
        done = subprocess.run(
            [sys.executable, "-m", "madeval", "--tasks", "arith_mc", "--limit", "4", "--base-url", sim.base_url,
             "--output-path", str(tmp_path / "out"), "--cache", str(cache)],
            env=env, capture_output=True, text=True, timeout=300,
        )
        assert done.returncode == 0, done.stderr
        # The key was really used: without it the endpoint refuses.
        refused = subprocess.run(
            [sys.executable, "-m", "madeval", "--tasks", "arith_mc", "--limit", "1", "--base-url", sim.base_url,
             "--output-path", str(tmp_path / "refused")],
            env={**env, "MADEVAL_API_KEY": "sk-wrong-key-0000000000"}, capture_output=True, text=True, timeout=300,
        )
    assert refused.returncode == 2 and "refused the API key" in refused.stderr
    assert FAKE_KEY not in refused.stderr
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert any(p.name == "records.jsonl" for p in files) and cache.exists()
    for path in files:
        assert FAKE_KEY.encode() not in path.read_bytes(), path
    assert FAKE_KEY not in done.stdout + done.stderr
