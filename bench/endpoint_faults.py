"""``python -m bench endpoint-faults``: what a rate-limited endpoint and one that ignores max_tokens
cost a run (issue 25, items 13 and 14).

* ``rate-limit``: the simulator with a quota (``--quota`` requests a second; a request over it is a
  429 with ``Retry-After``); a run at ``--concurrency``. Prints the chat requests sent, the 429s and
  the wasted share (429s / requests), and the wall time.
* ``big-replies``: the hostile simulator sending 10 MB replies to ``--hostile-rate`` of the chat
  requests; a run of ``--items`` items under ``/usr/bin/time -v``. Prints the peak memory (maximum
  resident set size), the size of records.jsonl, its longest line and the run's last line.

``--code DIR`` runs the madeval under test from another checkout (e.g. a worktree of an older
commit, for a before/after); the simulator always runs from this one.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from madeval.llm.embedded import NO_PROXY_OPENER

from .simulator import simulator_process

ROOT = Path(__file__).resolve().parent.parent


def madeval_command(base_url: str, folder: Path, items: int, concurrency: int | None) -> list[str]:
    """The run under test: arith_mc, the default debate, no cache, no progress bar."""
    return [sys.executable, "-m", "madeval", "--base-url", base_url, "--tasks", "arith_mc", "--limit", str(items),
            *(("--concurrency", str(concurrency)) if concurrency else ()), "--output-path", str(folder),
            "--cache", "off", "--no-progress"]


def environment_for(code: Path | None) -> dict[str, str]:
    """The environment of the run under test: ``code`` first on the Python path when given (the
    run starts in its temporary folder, so ``python -m`` does not import the current folder's)."""
    if code is None:
        code = ROOT
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(code), os.environ.get("PYTHONPATH", "")])}


def rate_limit(args: argparse.Namespace) -> dict:
    options = ("--quota", str(args.quota), *(("--retry-after-date",) if args.date else ()))
    folder = Path(tempfile.mkdtemp(prefix="madeval-bench-429-")) / "run"
    with simulator_process(latency=args.latency, tasks="generated", options=options) as url:
        started = time.monotonic()
        done = subprocess.run(madeval_command(url, folder, args.items, args.concurrency), capture_output=True,
                              text=True, env=environment_for(args.code), cwd=folder.parent, check=False)
        wall = time.monotonic() - started
        with NO_PROXY_OPENER.open(url.removesuffix("/v1") + "/stats", timeout=5) as response:
            stats = json.loads(response.read())
    refused = stats["faults"].get("quota", 0)
    return {"exit": done.returncode, "requests": stats["requests"], "429": refused,
            "wasted_share": refused / max(stats["requests"], 1), "wall_s": round(wall, 1),
            "last_line": _last_line(done)}


def big_replies(args: argparse.Namespace) -> dict:
    options = ("--hostile", "10mb-reply", "--hostile-rate", str(args.hostile_rate), "--seed", str(args.seed))
    folder = Path(tempfile.mkdtemp(prefix="madeval-bench-big-")) / "run"
    with simulator_process(latency=0.0, tasks="generated", options=options) as url:
        started = time.monotonic()
        done = subprocess.run(["/usr/bin/time", "-v", *madeval_command(url, folder, args.items, args.concurrency)],
                              capture_output=True, text=True, env=environment_for(args.code), cwd=folder.parent,
                              check=False)
        wall = time.monotonic() - started
    peak_kb = re.search(r"Maximum resident set size \(kbytes\): (\d+)", done.stderr)
    records = folder / "records.jsonl"
    longest = max((len(line) for line in records.open("rb")), default=0) if records.exists() else 0
    return {"exit": done.returncode, "peak_rss_mb": int(peak_kb.group(1)) / 1024 if peak_kb else None,
            "records_mb": records.stat().st_size / 1e6 if records.exists() else None,
            "longest_line_mb": longest / 1e6, "wall_s": round(wall, 1), "last_line": _last_line(done)}


def _last_line(done: subprocess.CompletedProcess) -> str:
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return lines[-1] if lines else done.stderr.strip().splitlines()[-1:][0] if done.stderr.strip() else ""


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench endpoint-faults", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("scenario", choices=["rate-limit", "big-replies"])
    parser.add_argument("--items", type=int, default=30)
    parser.add_argument("--concurrency", type=int, help="the run's --concurrency [default: rate-limit 32, "
                        "big-replies madeval's own]")
    parser.add_argument("--quota", type=float, default=40.0, help="rate-limit: requests a second the endpoint serves")
    parser.add_argument("--latency", type=float, default=0.05, help="rate-limit: seconds per reply")
    parser.add_argument("--date", action="store_true", help="rate-limit: Retry-After as an HTTP date")
    parser.add_argument("--hostile-rate", type=float, default=0.2, help="big-replies: share of 10 MB replies")
    parser.add_argument("--seed", type=int, default=3,
                        help="big-replies: the simulator's seed (which requests get them)")
    parser.add_argument("--code", type=Path, help="run the madeval of this checkout (default: this one)")
    args = parser.parse_args(argv)
    if args.scenario == "rate-limit" and args.concurrency is None:
        args.concurrency = 32
    result = (rate_limit if args.scenario == "rate-limit" else big_replies)(args)
    for key, value in result.items():
        shown = f"{value:.3f}" if isinstance(value, float) else value
        print(f"{key:>16}: {shown}")


if __name__ == "__main__":
    main()
