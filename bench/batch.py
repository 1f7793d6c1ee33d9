"""``python -m bench.batch``: the harness's own overhead per call through ``--transport batch``.

The simulator runs in its own process with batches that finish at once (no provider turnaround),
so what is left is madeval's CPU per call: gathering calls, writing the request file, uploading it,
polling, reading the output file, handing replies back. Printed next to the default transport's, on
the same workload (Memory, 3 agents, 3 turns, simple voting), with the batch round trips against
the longest dependency chain.

``python -m bench.batch --memory`` measures instead what the transport keeps between batches: it sends
``--rounds`` rounds of ``--lines`` calls straight through a batch transport journaling into a folder
(each round a batch), then the same rounds through a second transport over the same folder, as a
resumed run does (each call answered from the first one's batches), and prints the memory Python
has allocated (tracemalloc) after every tenth of the rounds: flat when nothing of an earlier batch is
kept once its replies are handed out.

``python -m bench.batch --output-file --lines 200000`` measures reading a batch output file of that
many replies (OpenAI's line format, written to a temporary folder): the peak memory Python allocates
(tracemalloc) reading it line by line from disk, as the transport does since output files are
streamed to the run folder, against reading the file's bytes whole (the file held, and split into
lines), as it did before. The outcomes themselves are in both.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import io
import json
import tempfile
import urllib.request
from pathlib import Path

from madeval.evaluation import run
from madeval.records.folder import read_records
from madeval.settings.config import DebateConfig, RunSettings

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


async def rounds_through(base_url: str, folder: Path, rounds: int, lines: int, phase: str) -> None:
    """Send ``rounds`` rounds of ``lines`` calls through one batch transport journaling in ``folder``;
    print the traced memory after every tenth of them (the replies of a round dropped first)."""
    import tracemalloc

    from madeval.llm.batch.settings import BatchSettings
    from madeval.llm.batch.transport import BatchTransport

    transport = BatchTransport(base_url, "-", 120.0)
    transport.configure_batches(BatchSettings(flush_s=0.02, poll_s=0.05), folder)
    step = max(1, rounds // 10)
    try:
        for number in range(1, rounds + 1):
            replies = await asyncio.gather(*(
                transport.chat("simulator",
                               [{"role": "user", "content": f"Round {number}, call {call}: A, B, C or D?"}],
                               {"max_tokens": 16}) for call in range(lines)))
            assert len(replies) == lines
            del replies
            if number % step == 0 or number == rounds:
                gc.collect()
                current, peak = tracemalloc.get_traced_memory()
                print(json.dumps({"phase": phase, "rounds": number, "lines": number * lines,
                                  "batches_created": transport.batches_created,
                                  "traced_mb": round(current / 1e6, 2), "peak_mb": round(peak / 1e6, 2)}), flush=True)
    finally:
        await transport.close()


def memory(rounds: int, lines: int) -> None:
    """The ``--memory`` measurement (see the module's note)."""
    import tracemalloc

    folder = Path(tempfile.mkdtemp(prefix="madeval-bench-batch-memory-"))
    with simulator_process(latency=0.0, tasks="generated", options=("--unknown", "answer")) as base_url:
        tracemalloc.start()
        asyncio.run(rounds_through(base_url, folder, rounds, lines, "first run"))
        tracemalloc.reset_peak()
        asyncio.run(rounds_through(base_url, folder, rounds, lines, "resumed from its journal"))
        tracemalloc.stop()


def output_file(lines: int) -> None:
    """The ``--output-file`` measurement (see the module's note)."""
    import tracemalloc

    from madeval.llm.batch.lines import read_file_outcomes, read_outcomes

    folder = Path(tempfile.mkdtemp(prefix="madeval-bench-batch-output-"))
    path = folder / "output.jsonl"
    with path.open("w", encoding="utf-8") as out:
        for number in range(lines):
            body = {"id": f"chatcmpl-{number}", "object": "chat.completion", "model": "m",
                    "choices": [{"index": 0, "finish_reason": "stop", "message": {
                        "role": "assistant", "content": f"Reasoning for line {number}. " * 8 + "Final Solution: B"}}],
                    "usage": {"prompt_tokens": 120, "completion_tokens": 60, "total_tokens": 180}}
            out.write(json.dumps({"id": f"batch_req_{number}", "custom_id": f"{number:032x}", "error": None,
                                  "response": {"status_code": 200, "request_id": f"r{number}", "body": body}}) + "\n")
    size = path.stat().st_size
    for how in ("line by line from the file", "whole bytes (before)"):
        gc.collect()
        tracemalloc.start()
        if how.startswith("line"):
            outcomes = read_file_outcomes(path, 16 << 20, "completed")
        else:
            outcomes = read_outcomes(path.read_bytes(), 16 << 20, "completed")
        current, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        assert len(outcomes) == lines
        print(json.dumps({"read": how, "lines": lines, "file_mb": round(size / 1e6, 1),
                          "outcomes_mb": round(current / 1e6, 1), "peak_mb": round(peak / 1e6, 1)}), flush=True)
        del outcomes
    path.unlink()
    folder.rmdir()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--memory", action="store_true", help="measure what the transport keeps between batches")
    parser.add_argument("--rounds", type=int, default=40, help="with --memory: rounds (batches) per phase")
    parser.add_argument("--lines", type=int, default=1000, help="with --memory: calls per round; with "
                        "--output-file: replies in the file")
    parser.add_argument("--output-file", action="store_true", help="measure reading an output file of --lines "
                        "replies, from disk line by line against whole")
    args = parser.parse_args()
    if args.output_file:
        output_file(args.lines)
        return
    if args.memory:
        memory(args.rounds, args.lines)
        return
    tasks = task_folder(args.items)
    with simulator_process(latency=0.0, tasks="bench_arith", include_path=tasks) as base_url:
        for transport in ("aiohttp", "batch"):
            print(json.dumps(measure(base_url, tasks, args.items, transport)), flush=True)


if __name__ == "__main__":
    main()
