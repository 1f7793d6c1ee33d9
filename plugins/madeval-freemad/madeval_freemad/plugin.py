"""The madeval hooks of madeval-freemad."""

from __future__ import annotations

from madeval import hookimpl

from .attack import CommunicationAttack
from .decider import FreeMadScore
from .metrics import TokenCost
from .responders import AntiConformity, Conformity

#: Free-MAD's setting (Free-MAD paper, Section 5.1 and 1.2 of methods.md): a Society-of-Minds debate
#: with N = 4 agents (3 for AIME) and a single debate round (R = 1: turn 1 answers, turn 2 debates).
#: The paper reports the token cost (Eq. 6) next to accuracy, so its runs score ``token_cost`` too.
FREEMAD = {"persona": "none", "paradigm": "som", "decider": "freemad_score", "agents": 4, "max_turns": 2,
           "metrics": ["token_cost"]}


def freemad_n() -> dict:
    """Free-MAD-n: anti-conformity debate, score-based decision, 4 agents, one debate round, token cost."""
    return {**FREEMAD, "metrics": list(FREEMAD["metrics"]), "responder": "anti_conformity"}


def freemad_c() -> dict:
    """Free-MAD-c: conformity (Society-of-Minds) debate, score-based decision, 4 agents, one debate round,
    token cost."""
    return {**FREEMAD, "metrics": list(FREEMAD["metrics"]), "responder": "conformity"}


@hookimpl
def register_deciders(register):
    """Free-MAD's score-based decision."""
    register("freemad_score", FreeMadScore, aliases=("freemad",))


@hookimpl
def register_responders(register):
    """Free-MAD's anti-conformity and conformity debate modes."""
    register("anti_conformity", AntiConformity, aliases=("freemad_anti_conformity",))
    register("conformity", Conformity, aliases=("freemad_conformity",))


@hookimpl
def register_paradigms(register):
    """The communication attack wrapper."""
    register("communication_attack", CommunicationAttack, aliases=("attack",))


@hookimpl
def register_metrics(register):
    """Free-MAD's token cost."""
    register("token_cost", TokenCost)


@hookimpl
def register_presets(register):
    """Free-MAD-n and Free-MAD-c."""
    register("freemad_n", freemad_n)
    register("freemad_c", freemad_c)
