"""``python -m bench shared-calls``: calls made against calls used, and wall time, with shared calls on and off.

Two studies against the simulator (``--accuracy 0.55 --conformity 0.3 --persuasion 0.3``, in its own
process, ``--latency`` seconds per reply), each run with identical calls shared between configurations
(the default) and with ``--no-share-calls``:

* the seven deciders of "Voting or Consensus?" (majority, supermajority and unanimity consensus;
  simple, approval, ranked and cumulative voting) over Memory, 3 agents, 5 turns, on ``--items``
  mmlu_pro items (60: 3,600 calls unshared, of which 1,325 distinct requests on 1c91df2);
* the MALLM paper's grid (responder x persona x paradigm x decider: simple, critical, reasoning x
  none, expert, ipip x memory, relay, report, debate x majority and unanimity consensus, simple and
  approval voting: 144 configurations, 3 agents, 7 turns) on ``--grid-items`` items.

For each run it prints the calls the debates used (what each configuration's cost columns count),
the calls made (the run's ``paid`` note, checked against the requests the simulator answered), the
share saved, the calls in flight on average, the harness's CPU seconds and the run's execution
wall time (the fastest of ``--repeats`` runs; on a loaded machine CPU is the steadier figure). The
seven-decider study's goal: no identical request made twice (at most 1,325 + 5% of its 3,600 calls
made) in no more wall time than unshared. At the default 50 ms per reply both runs take a few
seconds, mostly the harness's and the simulator's CPU on a shared machine; ``--latency 0.2`` makes
the endpoint the bottleneck, as a real one is.
mmlu_pro comes from the local mirror (``MADEVAL_DATA_DIR``).
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import tempfile
import urllib.request
from pathlib import Path

from madeval.core.plugins import registries
from madeval.evaluation import run
from madeval.llm.embedded import NO_PROXY_OPENER
from madeval.run.plan import split_valid
from madeval.settings.config import DebateConfig, RunSettings

from .simulator import simulator_process

SIMULATOR = ("--accuracy", "0.55", "--conformity", "0.3", "--persuasion", "0.3")
DECIDERS = ("majority_consensus", "supermajority_consensus", "unanimity_consensus", "simple_voting",
            "approval_voting", "ranked_voting", "cumulative_voting")
#: The MALLM paper's grid (Appendix D): 3 responders x 3 personas x 4 paradigms x 4 deciders.
GRID = {"responder": ("simple", "critical", "reasoning"), "persona": ("none", "expert", "ipip"),
        "paradigm": ("memory", "relay", "report", "debate"),
        "decider": ("majority_consensus", "unanimity_consensus", "simple_voting", "approval_voting")}
#: The seven-decider study's distinct requests on 60 items, measured on 1c91df2 (issue 32).
DISTINCT_60 = 1325


def deciders_study() -> list[DebateConfig]:
    """The seven deciders over Memory, 3 agents, 5 turns."""
    return [DebateConfig(paradigm="memory", agents=3, max_turns=5, decider=decider) for decider in DECIDERS]


def mallm_grid() -> list[DebateConfig]:
    """The MALLM paper's 144 configurations (3 agents, 7 turns), those madeval accepts."""
    configs = [DebateConfig(responder=responder, persona=persona, paradigm=paradigm, decider=decider, agents=3,
                            max_turns=7)
               for responder, persona, paradigm, decider in itertools.product(*GRID.values())]
    valid, refused = split_valid(configs, registries())
    for config, reason in refused:
        print(f"  refused: {config.label()}: {reason}")
    return valid


def requests(base_url: str) -> int:
    """The chat requests the simulator has answered so far."""
    with NO_PROXY_OPENER.open(urllib.request.Request(base_url.removesuffix("/v1") + "/stats"), timeout=10) as reply:
        return int(json.loads(reply.read())["requests"])


def measure(configs: list[DebateConfig], items: int, base_url: str, share: bool, folder: Path,
            concurrency: int) -> dict:
    """One run of ``configs`` on ``items`` mmlu_pro items: calls used and made, requests answered, wall time."""
    before = requests(base_url)
    settings = RunSettings(base_url=base_url, model="simulator", tasks=["mmlu_pro"], limit=items, seed=1234,
                           configurations=configs, share_calls=share, output_path=str(folder),
                           concurrency=concurrency, cache="off")
    result = run(settings, show_progress=False, out=io.StringIO())
    paid = result.board["paid"]
    return {"units": result.outcome.finished, "failed": result.outcome.failed, "used": paid["calls"],
            "made": paid["made"], "answered": requests(base_url) - before, "tokens": paid["tokens"],
            "made_tokens": paid["made_tokens"], "wall_s": result.outcome.wall_s, "cpu_s": result.outcome.cpu_s,
            "in_flight": result.outcome.mean_in_flight}


def study(name: str, configs: list[DebateConfig], items: int, base_url: str, work: Path, repeats: int,
          concurrency: int) -> dict[bool, dict]:
    """Both modes ``repeats`` times, alternating; the fastest of each mode; a line per mode."""
    runs: dict[bool, list[dict]] = {True: [], False: []}
    for attempt in range(repeats):
        for share in (False, True):
            runs[share].append(measure(configs, items, base_url, share, work / f"{name}-{share}-{attempt}",
                                       concurrency))
    best = {share: min(found, key=lambda r: r["wall_s"]) for share, found in runs.items()}
    print(f"\n{name}: {len(configs)} configurations x {items} items")
    print("  mode      units  calls used  calls made  answered  saved   tokens made / used     in flight  cpu s  "
          "wall s (each run)")
    for share in (True, False):
        r = best[share]
        walls = ", ".join(f"{run['wall_s']:.2f}" for run in runs[share])
        print(f"  {'shared' if share else 'unshared':8} {r['units']:6} {r['used']:11,} {r['made']:11,} "
              f"{r['answered']:9,} {100 * (r['used'] - r['made']) / max(r['used'], 1):5.1f}%  "
              f"{r['made_tokens']:>10,} / {r['tokens']:<10,} {r['in_flight']:9.1f} {r['cpu_s']:6.2f}  "
              f"{r['wall_s']:6.2f} ({walls})")
    return best


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench shared-calls", description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=60, help="mmlu_pro items of the seven-decider study")
    parser.add_argument("--grid-items", type=int, default=2, help="mmlu_pro items of the 144-configuration grid")
    parser.add_argument("--latency", type=float, default=0.05, help="simulator seconds per reply")
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=1, help="runs per mode; the fastest is shown")
    parser.add_argument("--skip-grid", action="store_true")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="madeval-bench-shared-"))
    with simulator_process(latency=args.latency, tasks="mmlu_pro", options=SIMULATOR) as url:
        measure([DebateConfig()], 1, url, True, work / "warm-up", args.concurrency)  # imports, task loading
        seven = study("seven deciders", deciders_study(), args.items, url, work, args.repeats, args.concurrency)
        if not args.skip_grid:
            study("MALLM grid", mallm_grid(), args.grid_items, url, work, args.repeats, args.concurrency)
    shared, unshared = seven[True], seven[False]
    floor = round(DISTINCT_60 * args.items / 60)
    bound = floor + 0.05 * unshared["used"]
    print(f"\nseven deciders: {shared['made']:,} calls made for {shared['used']:,} used "
          f"(goal at most {bound:,.0f}{'' if args.items == 60 else ', scaled from 60 items'}): "
          f"{'met' if shared['made'] <= bound else 'NOT met'}; every call made was answered once "
          f"({'yes' if shared['answered'] == shared['made'] else 'no: ' + str(shared['answered'])}); wall time "
          f"{shared['wall_s']:.2f} s shared against {unshared['wall_s']:.2f} s unshared")
    print(f"runs in {work}")


if __name__ == "__main__":
    main()
