"""Single-model baselines as presets, so they run and rank like any configuration.

* ``baseline_cot``: one agent, MALLM's Chain-of-Thought prompt (seed 000, Figure 24).
* ``baseline_direct``: one agent, the same prompt without "Let's think step-by-step.".
* ``self_consistency``: five independent Chain-of-Thought samples, the most frequent answer wins
  (Wang et al.; the baseline asked for in MALLM issue #83). Change the sample count with
  ``--agents``.
"""

from __future__ import annotations

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


@hookimpl
def register_presets(register):
    """The baseline presets."""
    register("baseline_cot", baseline_cot, aliases=("cot_baseline",))
    register("baseline_direct", baseline_direct)
    register("self_consistency", self_consistency)
