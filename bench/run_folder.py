"""``python -m bench.run_folder``: what ends up in a run folder after two runs started at once into
it, after a SIGKILL mid-run and a resume, and after a full disk (a file-size limit) and a resume.

Each scenario runs ``--tries`` times against the simulator (in its own process) and prints, per
try, the exit codes, the stderr lines of each process that failed (one line is the goal; a
traceback is many), the records expected, the units present, the lines on disk, the duplicated
and broken lines, and the units the leaderboard counts. Nothing is timed.
"""

from __future__ import annotations

import argparse
import json
import resource
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from .simulator import simulator_process


def run_command(base_url: str, folder: Path, limit: int, repeats: int) -> list[str]:
    """The run every scenario uses: unanimity on ``arith_mc``, no cache, no progress bar."""
    return [sys.executable, "-m", "madeval", "--tasks", "arith_mc", "--limit", str(limit), "--repeats", str(repeats),
            "--decider", "unanimity", "--concurrency", "4", "--base-url", base_url, "--output-path", str(folder),
            "--cache", "off", "--no-progress"]


def on_disk(folder: Path) -> dict[str, int]:
    """Lines of records.jsonl, distinct units, duplicated lines and broken lines."""
    path = folder / "records.jsonl"
    lines = path.read_bytes().splitlines() if path.exists() else []
    keys: Counter = Counter()
    broken = 0
    for line in lines:
        try:
            keys[json.loads(line)["unit"]["key"]] += 1
        except (ValueError, KeyError, TypeError):
            broken += 1
    return {"lines": len(lines), "present": len(keys), "duplicated": sum(keys.values()) - len(keys), "broken": broken}


def leaderboard_units(folder: Path) -> int | None:
    """The units the leaderboard counts (``leaderboard show``), or None when it fails."""
    shown = subprocess.run([sys.executable, "-m", "madeval", "leaderboard", "show", str(folder)],
                           capture_output=True, text=True)
    if shown.returncode != 0:
        return None
    return sum(row["units"] for row in json.loads((folder / "leaderboard.json").read_text())["rows"])


def error_lines(*finished: tuple[int, str]) -> str:
    """The stderr line counts of the processes (exit code, stderr) that failed, or ``-``."""
    counts = [str(len(err.splitlines())) for code, err in finished if code not in (0, -9)]
    return " ".join(counts) or "-"


def concurrent(base_url: str, folder: Path) -> tuple[str, str, int]:
    """Two identical runs started at once into ``folder``."""
    processes = [subprocess.Popen(run_command(base_url, folder, 30, 1), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.PIPE, text=True) for _ in range(2)]
    finished = [(p.wait(), p.stderr.read()) for p in processes]
    return " ".join(str(code) for code, _ in finished), error_lines(*finished), 30


def killed(base_url: str, folder: Path, after: int) -> tuple[str, str, int]:
    """A run of 60 units killed with SIGKILL after ``after`` records, then the same command again."""
    process = subprocess.Popen(run_command(base_url, folder, 30, 2), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    path = folder / "records.jsonl"
    while process.poll() is None and not (path.exists() and path.read_bytes().count(b"\n") >= after):
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    first = process.wait()
    resumed = subprocess.run(run_command(base_url, folder, 30, 2), capture_output=True, text=True)
    return f"{first} {resumed.returncode}", error_lines((resumed.returncode, resumed.stderr)), 60


def disk_full(base_url: str, folder: Path, limit_bytes: int) -> tuple[str, str, int]:
    """A run whose files may not grow past ``limit_bytes`` (EFBIG), then the same command without it."""
    def limited() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

    first = subprocess.run(run_command(base_url, folder, 30, 1), capture_output=True, text=True,
                           preexec_fn=limited)
    resumed = subprocess.run(run_command(base_url, folder, 30, 1), capture_output=True, text=True)
    finished = [(first.returncode, first.stderr), (resumed.returncode, resumed.stderr)]
    return f"{first.returncode} {resumed.returncode}", error_lines(*finished), 30


def main() -> None:
    """Run the scenarios and print one table row per try."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tries", type=int, default=5)
    parser.add_argument("--latency", type=float, default=0.05, help="Simulator seconds per reply.")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="madeval-bench-folder-"))
    print("| scenario | try | exit codes | error lines | expected | present | lines | duplicated | broken "
          "| leaderboard units |")
    print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|")
    with simulator_process(latency=args.latency, tasks="generated") as base_url:
        for name, scenario in (
            ("two runs at once", lambda f, i: concurrent(base_url, f)),
            ("SIGKILL + resume", lambda f, i: killed(base_url, f, after=5 + 9 * i)),
            ("file-size limit + resume", lambda f, i: disk_full(base_url, f, 30_000 + 20_000 * i)),
        ):
            for attempt in range(args.tries):
                folder = root / f"{name.split()[0]}-{attempt}"
                codes, errors, expected = scenario(folder, attempt)
                found = on_disk(folder)
                print(
                    f"| {name} | {attempt + 1} | {codes} | {errors} | {expected} | {found['present']} "
                    f"| {found['lines']} | {found['duplicated']} | {found['broken']} | {leaderboard_units(folder)} |",
                    flush=True,
                )
    print(f"\nrun folders in {root}")


if __name__ == "__main__":
    main()
