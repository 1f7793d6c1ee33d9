"""``python -m bench import``: wall time and peak memory of ``madeval import mallm`` as the file grows.

Each measurement runs in its own process (its peak RSS is its own): the floor (madeval imported
and the task's items loaded, nothing imported), the real corpus (372 debates of about 60 KB each,
``shared/data/mallm``), the corpus written ``--copies`` times over (new ``exampleId``s, the same
items as later repeats) and files of small generated records (``--sizes``, 50,000 by default).
A bounded importer keeps the peak flat as the file grows: the peak minus the floor is what one
record (and the ids of the units written) costs, not the file. The leaderboard is not built here.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORPUS = Path(os.environ.get("MADEVAL_DATA_DIR", "")) / "mallm" / "mmlu_pro_memory_llama31_70b.json.gz"


def worker(spec: dict) -> dict:
    """In this process: import ``spec['file']`` (or only load the task when it is None)."""
    from madeval.core.plugins import registries
    from madeval.importers.writer import import_files
    from madeval.settings.config import RunSettings
    from madeval.task.definition import load_tasks

    started = time.perf_counter()
    task = load_tasks(RunSettings(tasks=[spec["task"]]), registries())[spec["task"]]
    loaded = time.perf_counter()
    added = 0
    if spec["file"]:
        outcome = import_files(registries().importers.create("mallm"), [Path(spec["file"])], task,
                               Path(spec["output"]))
        added = outcome.added
    done = time.perf_counter()
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"records": added, "task_load_s": loaded - started, "import_s": done - loaded,
            "per_record_ms": 1000 * (done - loaded) / added if added else None, "peak_rss_mb": peak_kb / 1024}


def measure(spec: dict) -> dict:
    done = subprocess.run([sys.executable, "-m", "bench.importing", "--worker", json.dumps(spec)], cwd=ROOT,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"bench worker failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def corpus_copies(path: Path, copies: int) -> int:
    """The corpus written ``copies`` times over into ``path`` (gzip), each copy with new exampleIds."""
    with gzip.open(CORPUS, "rt", encoding="utf-8") as handle:
        records = json.load(handle)
    count = 0
    with gzip.open(path, "wt", encoding="utf-8", compresslevel=1) as out:
        out.write("[")
        for copy in range(copies):
            for record in records:
                copied = {**record, "exampleId": f"{record['exampleId']}-{copy}"}
                out.write(("," if count else "") + json.dumps(copied))
                count += 1
        out.write("]")
    return count


def small_records(path: Path, size: int) -> int:
    """``size`` small records (three agents, one turn) over the first 500 MMLU-Pro items."""
    mirror = Path(os.environ.get("MADEVAL_DATA_DIR", "")) / "mmlu_pro" / "test.jsonl"
    with open(mirror, encoding="utf-8") as handle:
        rows = [json.loads(line) for _, line in zip(range(500), handle)]
    with open(path, "w", encoding="utf-8") as out:
        out.write("[")
        for n in range(size):
            row = rows[n % len(rows)]
            agents = [f"a{n}-{i}" for i in range(3)]
            memory = [{"message_id": i, "turn": 1, "agent_id": agents[i], "persona": f"P{i}", "contribution": "improve",
                       "message": f"Reasoning of agent {i}. FINAL SOLUTION: {'ABC'[i]}", "agreement": i > 0,
                       "solution": "FINAL SOLUTION: A", "memory_ids": [], "additional_args": {}} for i in range(3)]
            record = {"exampleId": f"e{n}", "datasetId": str(row["question_id"]), "input": [row["question"]],
                      "personas": [{"agentId": a, "model": "m", "persona": f"P{i}", "personaDescription": "d"}
                                   for i, a in enumerate(agents)],
                      "paradigm": "memory", "finalAnswer": "FINAL SOLUTION: A", "decisionSuccess": True, "turns": 1,
                      "globalMemory": memory, "votesEachTurn": {}, "references": [row["answer"]]}
            out.write(("," if n else "") + json.dumps(record))
        out.write("]")
    return size


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench import", description=__doc__)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--copies", type=int, default=4, help="the corpus written this many times over")
    parser.add_argument("--sizes", default="5000,50000", help="numbers of small generated records")
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return
    work = Path(tempfile.mkdtemp(prefix="madeval-bench-import-"))
    rows = [("floor (task loaded, nothing imported)", None, 0)]
    if CORPUS.is_file():
        rows.append(("corpus (372 debates)", CORPUS, CORPUS.stat().st_size))
        if args.copies > 1:
            path = work / f"corpus-x{args.copies}.json.gz"
            corpus_copies(path, args.copies)
            rows.append((f"corpus x{args.copies}", path, path.stat().st_size))
    for size in [int(s) for s in args.sizes.split(",") if s]:
        path = work / f"small-{size}.json"
        small_records(path, size)
        rows.append((f"{size} small records", path, path.stat().st_size))
    print(f"{'input':40} {'file MB':>8} {'records':>8} {'import s':>9} {'ms/record':>10} {'peak RSS MB':>12}")
    for number, (name, path, size) in enumerate(rows):
        result = measure({"task": "mmlu_pro", "file": str(path) if path else None,
                          "output": str(work / f"out-{number}")})
        per = f"{result['per_record_ms']:.2f}" if result["per_record_ms"] else "-"
        print(f"{name:40} {size / 1e6:8.1f} {result['records']:8d} {result['import_s']:9.2f} {per:>10} "
              f"{result['peak_rss_mb']:12.0f}")


if __name__ == "__main__":
    main()
