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
  ``preset_args``.
"""

from __future__ import annotations

from ..errors import UsageError
from ..hookspecs import hookimpl

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


def self_consistency_matched(run: str | None = None, match: str | None = None, task: str | None = None) -> dict:
    """Self-consistency with as many samples as configuration ``match`` of run ``run`` made calls per item."""
    if not (run and match):
        raise UsageError("preset self_consistency_matched needs --preset-args run=FOLDER,match=CONFIG")
    from ..leaderboard.matched import matched_calls  # reads a run: only when the preset is used

    config, label, calls = matched_calls(run, match, task)
    samples = max(1, round(calls))
    recorded = {"run": run, "match": match, "matched_config": config, "matched_label": label,
                "matched_calls_per_item": calls, "samples": samples}
    if task:
        recorded["task"] = task
    return {**self_consistency(), "agents": samples, "name": f"self_consistency_matched to {label}",
            "preset_args": recorded}


@hookimpl
def register_presets(register):
    """The baseline presets."""
    register("baseline_cot", baseline_cot, aliases=("cot_baseline",))
    register("baseline_direct", baseline_direct)
    register("self_consistency", self_consistency)
    register("self_consistency_matched", self_consistency_matched)
