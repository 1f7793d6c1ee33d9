"""``python -m bench.combinations``: every persona x responder x paradigm x decider on the simulator.

Builds the cross product of the built-in components (the plugin packages' components are left
out: they belong to their presets), refuses what ``DebateSetup.validate`` refuses, runs every
valid configuration on ``--items`` generated questions against an in-process simulator whose
agents agree with their peers (``--conformity``, default 1), and prints one row per configuration:
calls per item, turns, decision success. With conforming agents every configuration must decide;
the last lines say how many did not. ``--csv PATH`` also writes the rows.
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import statistics
import sys
import tempfile
from collections import defaultdict

from madeval.core.plugins import registries
from madeval.evaluation import run
from madeval.run.plan import split_valid
from madeval.settings.config import DebateConfig, RunSettings
from madeval.simulator import simulate
from madeval.task.definition import load_tasks

BUILTIN = "madeval.builtins."
BASELINE_RESPONDERS = {"cot", "direct"}  # single-model baselines: their presets, not debates


def builtin_names(kind: str) -> list[str]:
    """The built-in components of one kind, in registration order."""
    registry = registries().registry(kind)
    return [name for name in registry.names() if registry.resolve(name).plugin.startswith(BUILTIN)]


def configurations(max_turns: int) -> tuple[list[DebateConfig], list[tuple[DebateConfig, str]]]:
    """(valid, refused with the one-line reason) over the built-in cross product."""
    responders = [r for r in builtin_names("responder") if r not in BASELINE_RESPONDERS]
    configs = [DebateConfig(persona=persona, responder=responder, paradigm=paradigm, decider=decider,
                            max_turns=max_turns)
               for persona, responder, paradigm, decider in itertools.product(
                   builtin_names("persona"), responders, builtin_names("paradigm"), builtin_names("decider"))]
    return split_valid(configs, registries())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.combinations", description=__doc__)
    parser.add_argument("--items", type=int, default=2)
    parser.add_argument("--max-turns", type=int, default=5)
    parser.add_argument("--conformity", type=float, default=1.0)
    parser.add_argument("--accuracy", type=float, default=0.6)
    parser.add_argument("--csv", help="also write the rows here")
    args = parser.parse_args(argv)
    valid, refused = configurations(args.max_turns)
    print(f"{len(valid) + len(refused)} configurations: {len(valid)} valid, {len(refused)} refused at start")
    reasons = defaultdict(int)
    for _, reason in refused:
        reasons[reason] += 1
    for reason, count in sorted(reasons.items(), key=lambda kv: -kv[1]):
        print(f"  refused x{count}: {reason}")
    tasks = load_tasks(RunSettings(tasks=["arith_mc"]), registries())
    with simulate(tasks=tasks.values(), accuracy=args.accuracy, conformity=args.conformity) as sim, \
            tempfile.TemporaryDirectory() as folder:
        settings = RunSettings(tasks=["arith_mc"], configurations=valid, limit=args.items, base_url=sim.base_url,
                               output_path=folder, cache="off", transport="aiohttp")
        result = run(settings, show_progress=False, out=io.StringIO())
    rows = [r for r in result.rows if r["scope"] == "task" and r["metric"] == "accuracy"]
    table = [{"configuration": r["label"], "calls_per_item": r["calls_per_item"], "turns": r["mean_turns"],
              "decided": r["decision_success_rate"]} for r in rows]
    width = max(len(t["configuration"]) for t in table)
    print(f"\n{'configuration'.ljust(width)}  calls/item  turns  decided")
    for t in table:
        print(f"{t['configuration'].ljust(width)}  {t['calls_per_item']:10.1f}  {t['turns']:5.2f}  {t['decided']:7.0%}")
    print_summary(valid, rows)
    undecided = [t["configuration"] for t in table if t["decided"] < 1.0]
    print(f"\n{result.outcome.finished} debates, {result.outcome.failed} failed; "
          f"{len(undecided)} configurations did not always decide{': ' + ', '.join(undecided) if undecided else ''}")
    if args.csv:
        with open(args.csv, "w", newline="", encoding="utf-8") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(table[0]))
            writer.writeheader()
            writer.writerows(table)
    if result.outcome.failed or undecided:
        sys.exit(1)


def print_summary(valid: list[DebateConfig], rows: list[dict]) -> None:
    """Calls per item and turns, averaged over personas and responders, per paradigm x decider."""
    by_label = {r["label"]: r for r in rows}
    cells: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for config in valid:
        row = by_label.get(config.label())
        if row is not None:
            cells[(config.paradigm, config.decider)].append(row)
    print("\nparadigm x decider (mean over personas and responders): calls/item, turns")
    for (paradigm, decider), members in sorted(cells.items()):
        calls = statistics.fmean(m["calls_per_item"] for m in members)
        turns = statistics.fmean(m["mean_turns"] for m in members)
        print(f"  {paradigm:24s} {decider:24s} {calls:6.1f} {turns:5.2f}  ({len(members)} configurations)")


if __name__ == "__main__":
    main()
