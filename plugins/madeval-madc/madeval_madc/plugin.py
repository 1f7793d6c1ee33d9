"""The madeval hooks of madeval-madc: the ``som`` responder and paradigm, the ``madc`` preset, and
the simulator's replies to the Society-of-Minds prompts."""

from __future__ import annotations

import re

from madeval import hookimpl

from .paradigm import SocietyOfMindsParadigm
from .responder import SocietyOfMinds


def madc() -> dict:
    """MADC (Key Decision-Makers in Multi-Agent Debates): 5 agents, one debate round, the most-agreed answer
    shown last, majority vote.

    MADC's agents have the system prompt "You are a helpful assistant." (``prompt/agent_com0.json``)
    and answer in one debate round after their independent answers; the final answer is the most
    frequent last-round answer (ties: the earliest agent's).
    """
    return {
        "persona": "none",
        "responder": "som",
        "responder_args": {"system": "You are a helpful assistant."},
        "paradigm": "som",
        "paradigm_args": {"allocation": "madc"},
        "decider": "counting",
        "agents": 5,
        "max_turns": 2,
    }


@hookimpl
def register_responders(register):
    """The Society-of-Minds responder (Du et al. prompts)."""
    register("som", SocietyOfMinds, aliases=("society_of_minds",))


@hookimpl
def register_paradigms(register):
    """The Society-of-Minds paradigm with MADC's allocation strategies."""
    register("som", SocietyOfMindsParadigm, aliases=("society_of_minds",))


@hookimpl
def register_presets(register):
    """MADC's configuration as a preset."""
    register("madc", madc)


DU_PEER = re.compile(r"One agent solution: ```(.*?)```", re.DOTALL)


@hookimpl(optionalhook=True)  # a madeval without the simulator hook still loads the plugin
def simulator_reply(prompt):
    """The simulator's replies to Du et al.'s update and self-check prompts (also Free-MAD's).

    The update shows the peers' solutions: the agent's belief about them (its own latest answer
    wins a tie). The self-check shows none: its answer after self-doubt (``prompt.recheck``).
    """
    if "these are the solutions to the problem from other agents" in prompt.lowered:
        return prompt.final("som_update", prompt.believe(prompt.answers(DU_PEER.findall(prompt.user)), prompt.own))
    if "can you double check that your answer is correct" in prompt.lowered:
        return prompt.final("som_double_check", prompt.recheck(prompt.own))
    return None
