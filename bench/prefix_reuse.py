"""``python -m bench prefix-reuse``: how much of each debate's prompts a prefix cache could skip.

Runs every built-in paradigm (3 agents, ``--max-turns`` turns, the ``counting`` decider, which lets
every debate run all its turns) and every plugin preset (in its authors' setting: agents, turns and
decision as the preset gives them) on ``--items`` items of ``arith_mc`` against an in-process
simulator, captures the exact messages of every call, and prints per configuration: calls,
prompt tokens, the tokens that are a prefix of an earlier call's prompt in the same debate
(:mod:`madeval.llm.prefix_reuse`), and their fraction, weighted by prompt tokens over all calls; and
the fraction left when only the same agent's earlier calls count (each agent routed to its own
replica, the routing key's per-agent grain). ``--visible-turns N`` runs the built-in paradigms with
``visible_turns_in_memory`` N instead of their defaults (an option that changes what agents see:
with N >= the turns, no turn drops out of an agent's memory, as in MALLM's code).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Iterator
from unittest import mock

from madeval.core.plugins import registries
from madeval.evaluation import run
from madeval.llm.client import LLMClient
from madeval.llm.prefix_reuse import PrefixReuse, prefix_reuse, prompt_tokens
from madeval.settings.config import DebateConfig, RunSettings, debate_config
from madeval.simulator import simulate
from madeval.task.definition import load_tasks

PARADIGMS = ("memory", "relay", "report", "debate", "collective_refinement", "collective_improvement")
BUILTIN = "madeval.builtins."
#: Collective Improvement refuses counting (no turn order, no agreement): a vote after the last turn.
DECIDER = {"collective_improvement": {"decider": "simple_voting", "decider_args": {"vote_after_turns": 5}}}


def plugin_presets() -> list[str]:
    """The presets the installed plugins register (the built-in ones are single-model baselines)."""
    presets = registries().presets
    return [name for name in presets.names() if not presets.resolve(name).plugin.startswith(BUILTIN)]


def configurations(max_turns: int, visible_turns: int | None = None) -> list[tuple[str, DebateConfig]]:
    """(row name, configuration): the built-in paradigms (with ``visible_turns_in_memory``
    ``visible_turns`` when given), then the plugin presets."""
    window = {} if visible_turns is None else {"paradigm_args": {"visible_turns_in_memory": visible_turns}}
    rows = [(paradigm, DebateConfig(paradigm=paradigm, agents=3, max_turns=max_turns, **window, **DECIDER.get(
                paradigm, {"decider": "counting"}))) for paradigm in PARADIGMS]
    return rows + [(f"preset {name}", debate_config({"preset": name})) for name in plugin_presets()]


@contextlib.contextmanager
def captured_prompts() -> Iterator[dict[tuple, list[tuple[object, list[str]]]]]:
    """Record every request's (speaker, prompt tokens), grouped by debate, in the order the client
    sends them.

    ``LLMClient.complete`` is wrapped, not replaced: the call still goes to the endpoint. Its
    ``scope`` is the unit's (item, repeat), which names the debate within a run of one
    configuration, then the speaker (an agent's index or "judge").
    """
    debates: dict[tuple, list[tuple[object, list[str]]]] = defaultdict(list)
    send = LLMClient.complete

    async def capturing(client, endpoint, model, messages, params, scope, *rest, **options):
        debates[tuple(scope[:2])].append((scope[2], prompt_tokens(messages)))
        return await send(client, endpoint, model, messages, params, scope, *rest, **options)

    with mock.patch.object(LLMClient, "complete", capturing):
        yield debates


def measure(config: DebateConfig, *, items: int, base_url: str) -> tuple[PrefixReuse, PrefixReuse]:
    """Run ``config`` on ``items`` items of arith_mc and sum the prefix reuse of its debates: from
    any earlier call of the debate (one replica per debate), and from the same speaker's earlier
    calls only (one replica per agent)."""
    with captured_prompts() as debates, tempfile.TemporaryDirectory() as folder:
        settings = RunSettings(tasks=["arith_mc"], configurations=[config], limit=items, base_url=base_url,
                               output_path=folder, cache="off")
        result = run(settings, show_progress=False, out=io.StringIO())
    if result.outcome.failed:
        raise SystemExit(f"{config.label()}: {result.outcome.failed} units failed")
    per_debate, per_agent = PrefixReuse(), PrefixReuse()
    for calls in debates.values():
        per_debate += prefix_reuse([tokens for _, tokens in calls])
        for speaker in {speaker for speaker, _ in calls}:
            per_agent += prefix_reuse([tokens for who, tokens in calls if who == speaker])
    return per_debate, per_agent


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench prefix-reuse", description=__doc__)
    parser.add_argument("--items", type=int, default=3)
    parser.add_argument("--max-turns", type=int, default=5)
    parser.add_argument("--conformity", type=float, default=0.5)
    parser.add_argument("--visible-turns", type=int, help="visible_turns_in_memory of the built-in paradigms "
                        "(default: each paradigm's own)")
    parser.add_argument("--json", help="also write the rows here")
    args = parser.parse_args(argv)
    if args.items < 1 or args.max_turns < 1 or not 0 <= args.conformity <= 1:
        parser.error("--items and --max-turns must be at least 1, --conformity between 0 and 1")
    if args.visible_turns is not None and args.visible_turns < 1:
        parser.error("--visible-turns must be at least 1")
    if args.json and not Path(args.json).resolve().parent.is_dir():
        parser.error(f"--json {args.json}: no such folder")
    tasks = load_tasks(RunSettings(tasks=["arith_mc"]), registries())
    rows = []
    with simulate(tasks=tasks.values(), conformity=args.conformity) as sim:
        for name, config in configurations(args.max_turns, args.visible_turns):
            reuse, own = measure(config, items=args.items, base_url=sim.base_url)
            rows.append({"configuration": name, "agents": config.agents, "max_turns": config.max_turns,
                         "calls": reuse.calls, "prompt_tokens": reuse.prompt_tokens,
                         "reusable_tokens": reuse.reusable_tokens, "fraction": reuse.fraction,
                         "own_reusable_tokens": own.reusable_tokens, "own_fraction": own.fraction})
    if args.visible_turns is not None:
        print(f"built-in paradigms with visible_turns_in_memory {args.visible_turns}")
    print_table(rows, args.items)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))


def print_table(rows: list[dict], items: int) -> None:
    """One line per paradigm or preset."""
    width = max(len(row["configuration"]) for row in rows)
    print(f"prefix reuse over {items} items of arith_mc (tokens: words and punctuation of role + content)")
    print("reusable: a prefix of any earlier call of the debate; own: of the same agent's earlier calls")
    print(f"{'paradigm / preset'.ljust(width)}  agents  turns  calls  prompt tokens  reusable  fraction"
          f"  own fraction")
    for row in rows:
        print(f"{row['configuration'].ljust(width)}  {row['agents']:6d}  {row['max_turns']:5d}  {row['calls']:5d}  "
              f"{row['prompt_tokens']:13d}  {row['reusable_tokens']:8d}  {row['fraction']:8.1%}"
              f"  {row['own_fraction']:12.1%}")


if __name__ == "__main__":
    main()
