"""Single-model baselines as presets, so they run and rank like any configuration.

* ``baseline_cot``: one agent, MALLM's Chain-of-Thought prompt (MALLM paper, Figure 24).
* ``baseline_direct``: one agent, the same prompt without "Let's think step-by-step.".
* ``self_consistency``: five independent Chain-of-Thought samples, the most frequent answer wins
  (Wang et al.; the baseline asked for in MALLM issue #83). Change the sample count with
  ``--agents``.
* ``self_consistency_matched``: self-consistency at another configuration's budget, so "does debate
  beat sampling at the same cost" is one row: ``--preset self_consistency_matched --preset-args
  run=FOLDER,match=CONFIG[,task=TASK]`` takes as many samples as CONFIG (label or id) made calls per
  item in the finished run in FOLDER (the mean over items of the mean over repeats, all tasks pooled
  unless ``task`` is given), rounded to the nearest whole sample (at least 1). A finished run, not
  the sweep's plan: a debate's calls depend on when its protocol stops, which only a run shows.
  The configuration records the matched configuration, its calls per item and the sample count in
  ``preset_args``. With ``budget=cost,prices=FILE`` it matches dollars instead of calls: as many
  samples as CONFIG's dollars per item divided by the dollars of one sample, the cost per call of
  the run's configuration of single samples (baseline_cot or self_consistency; or ``sample=CONFIG``),
  at the price file's prices (:mod:`madeval.leaderboard.matched`): a debate's calls grow longer as
  they read each other, so the same number of calls is not the same money.
"""

from __future__ import annotations

from madeval.core.hookspecs import hookimpl
from madeval.errors import UsageError

SINGLE_TURN = {"persona": "none", "paradigm": "collective_refinement", "decider": "counting", "max_turns": 1}


def baseline_cot() -> dict:
    """One agent with MALLM's Chain-of-Thought baseline prompt (Figure 24)."""
    return {**SINGLE_TURN, "responder": "cot", "agents": 1}


def baseline_direct() -> dict:
    """One agent answering directly, without chain of thought."""
    return {**SINGLE_TURN, "responder": "direct", "agents": 1}


def self_consistency() -> dict:
    """Five independent Chain-of-Thought samples; the most frequent answer wins."""
    return {**SINGLE_TURN, "responder": "cot", "agents": 5}


def self_consistency_matched(run: str | None = None, match: str | None = None, task: str | None = None,
                             budget: str = "calls", prices: str | None = None, sample: str | None = None) -> dict:
    """Self-consistency with as many samples as configuration ``match`` of run ``run`` made calls per
    item (``budget=calls``) or as its dollars per item buy (``budget=cost``, with ``prices``)."""
    if not (run and match):
        raise UsageError("preset self_consistency_matched needs --preset-args run=FOLDER,match=CONFIG")
    if budget not in ("calls", "cost"):
        raise UsageError(f"preset self_consistency_matched: budget is calls or cost, got '{budget}'")
    if budget == "cost" and not prices:
        raise UsageError("preset self_consistency_matched budget=cost needs prices=FILE (a price file)")
    if budget == "calls" and (prices or sample):
        raise UsageError("preset self_consistency_matched: prices and sample go with budget=cost")
    from madeval.leaderboard.matched import matched_calls, matched_cost  # reads a run: only when the preset is used

    config, label, calls = matched_calls(run, match, task)
    samples = max(1, round(calls))
    recorded = {"run": run, "match": match, "matched_config": config, "matched_label": label,
                "matched_calls_per_item": calls, "samples": samples}
    if budget == "cost":
        money = matched_cost(run, match, prices, sample, task)
        samples = money.samples
        recorded.update(budget="cost", prices=prices, matched_cost_per_item=money.cost_per_item,
                        sample_config=money.sample_label, cost_per_sample=money.cost_per_sample, samples=samples)
    if task:
        recorded["task"] = task
    name = f"self_consistency_matched to {label}" + (" at its cost" if budget == "cost" else "")
    return {**self_consistency(), "agents": samples, "name": name,
            "preset_args": recorded}


@hookimpl
def register_presets(register):
    """The baseline presets."""
    register("baseline_cot", baseline_cot, aliases=("cot_baseline",))
    register("baseline_direct", baseline_direct)
    register("self_consistency", self_consistency)
    register("self_consistency_matched", self_consistency_matched)
