"""The madeval hooks of madeval-frameworks: the frameworks' components and presets.

Every preset is a dictionary of configuration options; options given on the command line win.
Agent counts, turn limits and neutral agents follow the authors' code (methods.md section 4-5).
"""

from __future__ import annotations

from madeval import hookimpl

from .agentverse import AgentVerseDecider, AgentVerseParadigm, AgentVerseResponder
from .chateval import ChatEvalParadigm, ChatEvalResponder, ChatEvalRoles
from .eot import EotConsistency, EotParadigm, EotPersonas, EotResponder
from .multi_persona import ModeratorDecider, MultiPersonaParadigm, MultiPersonaResponder, MultiPersonaRoles
from .reconcile import ReconcileResponder, ReconcileVote


def som() -> dict:
    """Society of Minds (Du et al. 2023): 3 agents, 2 debate rounds, majority of the last round."""
    return {"persona": "none", "responder": "som", "paradigm": "som", "decider": "counting",
            "agents": 3, "max_turns": 3}


def multi_persona() -> dict:
    """Multi-Persona (Liang et al.): affirmative, negative and a moderator (JSON verdict, early stop,
    fallback judge), at most 3 rounds."""
    return {"persona": "multi_persona", "responder": "multi_persona", "paradigm": "multi_persona",
            "decider": "moderator", "agents": 3, "neutral_agents": 1, "max_turns": 3}


def eot() -> dict:
    """Exchange-of-Thought (Yin et al.): Kitty, Ben, Peter; Memory communication with confidence;
    stop when all agree; at most 5 communication rounds."""
    return {"persona": "eot", "responder": "eot", "paradigm": "eot", "paradigm_args": {"mode": "memory"},
            "decider": "eot_consistency", "agents": 3, "max_turns": 6}


def eot_similarity() -> dict:
    """Exchange-of-Thought, benchmark variant (the MAD-frameworks appendix): after at least one communication
    round, stop when every pair of the agents' lower-cased answers has a difflib similarity >= 0.85; at most 3
    rounds."""
    return {**eot(), "decider_args": {"similarity": 0.85, "compare": "answers", "min_exchanges": 1},
            "max_turns": 3}


def chateval() -> dict:
    """ChatEval, one-by-one: General Public, Critic, Scientist speak in turn for 2 rounds; majority."""
    return {"persona": "chateval", "responder": "chateval", "paradigm": "chateval",
            "paradigm_args": {"strategy": "one_by_one"}, "decider": "counting", "agents": 3, "max_turns": 2}


def chateval_simultaneous() -> dict:
    """ChatEval, simultaneous-talk: the three roles speak at once each round (2 rounds); majority."""
    return {**chateval(), "paradigm_args": {"strategy": "simultaneous"}}


def chateval_summarizer() -> dict:
    """ChatEval, simultaneous-talk-with-summarizer: a summary (agent 0) replaces the history; majority."""
    return {**chateval(), "paradigm_args": {"strategy": "summarizer"}, "agents": 4, "neutral_agents": 1}


def agentverse() -> dict:
    """AgentVerse (MGSM setting): role assigner, solver, one critic, evaluator; up to 3 iterations."""
    return {"persona": "none", "responder": "agentverse", "paradigm": "agentverse",
            "decider": "agentverse_evaluator", "agents": 4, "neutral_agents": 2, "max_turns": 3}


def reconcile() -> dict:
    """ReConcile: answers with confidence, grouped discussion, stop on agreement, recalibrated
    confidence-weighted vote; 3 agents, at most 2 discussion rounds."""
    return {"persona": "none", "responder": "reconcile", "paradigm": "collective_refinement",
            "decider": "reconcile", "agents": 3, "max_turns": 3}


PRESETS = {
    "som": som,
    "multi_persona": multi_persona,
    "eot": eot,
    "eot_similarity": eot_similarity,
    "chateval": chateval,
    "chateval_simultaneous": chateval_simultaneous,
    "chateval_summarizer": chateval_summarizer,
    "agentverse": agentverse,
    "reconcile": reconcile,
}


@hookimpl
def register_personas(register):
    """The frameworks' fixed roles (no LLM call)."""
    register("multi_persona", MultiPersonaRoles)
    register("eot", EotPersonas)
    register("chateval", ChatEvalRoles)


@hookimpl
def register_responders(register):
    """The frameworks' prompts."""
    register("multi_persona", MultiPersonaResponder)
    register("eot", EotResponder)
    register("chateval", ChatEvalResponder)
    register("agentverse", AgentVerseResponder)
    register("reconcile", ReconcileResponder)


@hookimpl
def register_paradigms(register):
    """The frameworks' turn orders and visibility."""
    register("multi_persona", MultiPersonaParadigm)
    register("eot", EotParadigm)
    register("chateval", ChatEvalParadigm)
    register("agentverse", AgentVerseParadigm)


@hookimpl
def register_deciders(register):
    """The frameworks' stopping rules and answers."""
    register("moderator", ModeratorDecider)
    register("eot_consistency", EotConsistency)
    register("agentverse_evaluator", AgentVerseDecider)
    register("reconcile", ReconcileVote)


@hookimpl
def register_presets(register):
    """The frameworks as presets."""
    for name, factory in PRESETS.items():
        register(name, factory)


@hookimpl(optionalhook=True)  # a madeval without the simulator hook still loads the plugin
def simulator_reply(prompt):
    """The simulator's replies to the frameworks' own prompts (:mod:`madeval_frameworks.simulated`)."""
    from .simulated import reply  # simulator code, loaded only when a simulator runs

    return reply(prompt)
