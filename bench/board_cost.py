"""``python -m bench board-cost``: peak memory and time of building a leaderboard of a large run
folder, without and with a price file (``--prices``).

Pricing needs each call's model and tokens, which live in the transcripts the board drops as it
reads them; a priced board keeps each record's tokens per model instead (:mod:`madeval.pricing.usage`).
This bench shows what that costs: a synthetic run folder of ``--records`` debates (12 calls and 12
messages of ``--message-chars`` characters each, two configurations) is turned into a board in a
fresh process per mode, and each prints its peak RSS and seconds: the floor (madeval, scipy and the
board code imported, nothing read), the board without prices, the board with prices, and, for
scale, the records read with their transcripts kept (what the board would hold without the lean read).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

MODES = ("floor", "board", "board with prices", "records with transcripts")


def write_run(folder: Path, records: int, message_chars: int) -> Path:
    """A run folder of ``records`` debates over two configurations; returns the price file beside it."""
    folder.mkdir(parents=True)
    configs = {"c1": {"label": "debate"}, "c2": {"label": "single"}}
    (folder / "run.json").write_text(json.dumps({"configurations": configs, "tasks": {"t": {}},
                                                 "settings": {"transport": "aiohttp"}}))
    text = ("lorem ipsum " * (message_chars // 12 + 1))[:message_chars]
    with open(folder / "records.jsonl", "w", encoding="utf-8") as handle:
        for index in range(records):
            config = "c1" if index % 2 else "c2"
            item = str(index // 2)
            calls = [{"purpose": "draft", "agent": i % 3, "turn": 1 + i // 3, "model": "m-big" if i % 4 else "m-judge",
                      "endpoint": "default", "prompt_tokens": 1500 + i, "completion_tokens": 300 + i,
                      "latency_s": 0.5, "attempts": 1, "cached": False, "errors": [], "depth": 1 + i // 3,
                      "cached_prompt_tokens": 1024 if i % 3 else None, "transport": "aiohttp"}
                     for i in range(12)]
            messages = [{"id": i, "turn": 1 + i // 3, "agent": i % 3, "text": text, "answer": "A"} for i in range(12)]
            record = {"unit": {"key": json.dumps([config, item]), "config": config, "task": "t", "item": item,
                               "repeat": 0},
                      "metrics": {"accuracy": float(index % 3 == 0)}, "decision_success": True, "parse_failure": False,
                      "turns": 4, "calls": 12, "tokens": {"prompt": 18066, "completion": 3666, "total": 21732},
                      "llm_s": 6.0, "wall_s": 7.0, "transcript": {"calls": calls, "messages": messages, "agents": []}}
            handle.write(json.dumps(record) + "\n")
    prices = folder.parent / "prices.yaml"
    prices.write_text("m-big: {input: 0.15, output: 0.60}\nm-judge: {input: 2.0, output: 8.0}\n")
    return prices


def worker(mode: str, folder: str, prices: str) -> dict:
    """In this process: build the board (or read the records) and report peak RSS and seconds."""
    from madeval.analysis.run_data import load_run
    from madeval.leaderboard import (
        LeaderboardOptions,
        build_leaderboard,
        table,  # noqa: F401  (scipy and the statistics, as a board needs)
    )

    start = time.perf_counter()
    if mode == "board":
        build_leaderboard(folder, LeaderboardOptions(resamples=99))
    elif mode == "board with prices":
        board = build_leaderboard(folder, LeaderboardOptions(resamples=99, prices=prices))
        assert all(row["cost_per_item"] is not None for row in board["rows"])
    elif mode == "records with transcripts":
        load_run(folder, transcripts=True)
    seconds = time.perf_counter() - start
    return {"mode": mode, "seconds": seconds, "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench board-cost", description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--message-chars", type=int, default=1500)
    parser.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(*args.worker)))
        return
    with tempfile.TemporaryDirectory(prefix="madeval-bench-board-cost-") as root:
        folder = Path(root) / "run"
        prices = write_run(folder, args.records, args.message_chars)
        size = (folder / "records.jsonl").stat().st_size / 1e6
        print(f"run folder: {args.records:,} records, records.jsonl {size:,.0f} MB")
        print(f"{'mode':<26} {'peak RSS MB':>12} {'seconds':>8}")
        for mode in MODES:
            done = subprocess.run([sys.executable, "-m", "bench", "board-cost", "--worker", mode, str(folder),
                                   str(prices)], capture_output=True, text=True, check=True)
            found = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"{mode:<26} {found['peak_mb']:>12.0f} {found['seconds']:>8.2f}")


if __name__ == "__main__":
    main()
