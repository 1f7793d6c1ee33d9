"""``python -m bench startup``: madeval's own overhead for a one-item run, as a whole process.

Runs ``madeval --tasks arith_mc --limit 1`` against the simulator at latency 0 (in its own
process) ``--runs`` times and reports the median wall time of the whole process (interpreter
start to exit) with its CPU time, then splits one more run, made in a probe interpreter, into:
interpreter start (``python -c pass``), imports (the command line and the run path), the run
itself, statistics (the leaderboard), outputs (Markdown, CSV, JSON, HTML) and, not part of a
default run, the charts drawn when asked (``--charts``). The target is under 1.5 s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_S = 1.5
ROOT = Path(__file__).resolve().parent.parent

def madeval_command(base_url: str, folder: Path) -> list[str]:
    """The measured command: one item of ``arith_mc``, no cache, no progress bar."""
    return [sys.executable, "-m", "madeval", "--tasks", "arith_mc", "--limit", "1", "--base-url", base_url,
            "--cache", "off", "--no-progress", "--output-path", str(folder)]


def whole_process(command: list[str]) -> dict[str, float]:
    """Wall and CPU seconds (user + system) of ``command`` run to its end."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command[:4])} ... failed:\n{done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu}


def phases(base_url: str, folder: Path) -> dict[str, float]:
    """One run in a probe interpreter, timed phase by phase (see the module docstring)."""
    done = subprocess.run([sys.executable, "-m", "bench.startup", "probe", base_url, str(folder)],
                          cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"startup probe failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def probe(base_url: str, folder: str) -> None:
    """The probe interpreter's job: import, run (leaderboard and outputs timed apart), then draw
    the charts the run left out; print each phase's wall and CPU seconds as one JSON line."""
    import io

    clocks = (time.perf_counter, time.process_time)
    start = [clock() for clock in clocks]
    import madeval.leaderboard as board_module
    import madeval.run.engine  # noqa: F401 - the run's own modules count as imported
    from madeval.cli.main import main

    imported = [clock() for clock in clocks]
    spent = {"statistics": [0.0, 0.0], "outputs": [0.0, 0.0]}

    def timed(name, function):
        def wrapper(*args, **kwargs):
            began = [clock() for clock in clocks]
            try:
                return function(*args, **kwargs)
            finally:
                for index, clock in enumerate(clocks):
                    spent[name][index] += clock() - began[index]
        return wrapper

    board_module.build_leaderboard = timed("statistics", board_module.build_leaderboard)
    board_module.write_outputs = timed("outputs", board_module.write_outputs)
    printed = sys.stdout
    sys.stdout = io.StringIO()  # the run's table: only the JSON line below is the probe's output
    try:
        main(madeval_command(base_url, Path(folder))[3:])
    except SystemExit as done:
        if done.code not in (0, None):
            raise
    finally:
        sys.stdout = printed
    ran = [clock() for clock in clocks]
    from madeval.testing import HEAVY_MODULES

    heavy = sorted(m for m in HEAVY_MODULES if m in sys.modules)
    from madeval.leaderboard.charts import draw_all

    board = json.loads((Path(folder) / "leaderboard.json").read_text(encoding="utf-8"))
    draw_all(board, Path(folder) / "charts")
    drawn = [clock() for clock in clocks]
    report = {"heavy_modules": heavy}
    for index, kind in enumerate(("s", "cpu_s")):
        report[f"imports_{kind}"] = imported[index] - start[index]
        report[f"statistics_{kind}"] = spent["statistics"][index]
        report[f"outputs_{kind}"] = spent["outputs"][index]
        report[f"run_{kind}"] = ran[index] - imported[index] - spent["statistics"][index] - spent["outputs"][index]
        report[f"charts_when_asked_{kind}"] = drawn[index] - ran[index]
    print(json.dumps(report))


def measure(runs: int) -> dict:
    """The bench's numbers: ``runs`` whole-process runs and one run split into phases."""
    from .simulator import simulator_process  # imports madeval: never in the probe, which times that

    load_before = os.getloadavg()[0]
    work = Path(tempfile.mkdtemp(prefix="madeval-bench-startup-"))
    try:
        with simulator_process(latency=0.0, tasks="arith_mc") as url:
            whole_process(madeval_command(url, work / "warm-up"))  # file caches, .pyc files
            measured = [whole_process(madeval_command(url, work / f"run-{index}")) for index in range(runs)]
            bare = statistics.median(whole_process([sys.executable, "-c", "pass"])["wall_s"] for _ in range(3))
            split = phases(url, work / "probe")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    walls = [m["wall_s"] for m in measured]
    return {"runs": runs, "wall_s": statistics.median(walls), "walls_s": walls,
            "cpu_s": statistics.median(m["cpu_s"] for m in measured), "interpreter_s": bare, **split,
            "target_s": TARGET_S, "load_before": load_before, "load_after": os.getloadavg()[0]}


def print_report(report: dict) -> None:
    """The figure and its breakdown as a plain table."""
    def phase(name: str) -> str:
        return f"{report[name + '_s']:.2f} s, CPU {report[name + '_cpu_s']:.2f} s"

    rows = [
        ("one-item run, whole process", f"{report['wall_s']:.2f} s median of {report['runs']} "
                                        f"({', '.join(f'{w:.2f}' for w in report['walls_s'])}); "
                                        f"CPU {report['cpu_s']:.2f} s (target < {report['target_s']} s)"),
        ("  interpreter start", f"{report['interpreter_s']:.2f} s (python -c pass)"),
        ("  imports", f"{phase('imports')} (command line and run path)"),
        ("  run", f"{phase('run')} (tasks, endpoint checks, the debate, records)"),
        ("  statistics", f"{phase('statistics')} (leaderboard rows, intervals, tests)"),
        ("  outputs", f"{phase('outputs')} (Markdown, CSV, JSON, HTML)"),
        ("charts when asked", f"{phase('charts_when_asked')} more (--charts; not in a default run)"),
        ("heavy modules a run loaded", ", ".join(report["heavy_modules"]) or "none"),
        ("load average", f"{report['load_before']:.1f} before, {report['load_after']:.1f} after "
                         f"(wall times stretch with the load; CPU times much less)"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")


def main(argv: list[str] | None = None) -> None:
    """``python -m bench startup [--runs N] [--json FILE]``."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["probe"]:
        return probe(*argv[1:])
    parser = argparse.ArgumentParser(prog="python -m bench startup", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="whole-process runs; the median is reported")
    parser.add_argument("--json", type=Path, help="also write the numbers here")
    args = parser.parse_args(argv)
    report = measure(max(args.runs, 1))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print_report(report)


if __name__ == "__main__":
    main()
