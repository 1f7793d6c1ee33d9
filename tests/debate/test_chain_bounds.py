"""The bounds of a debate's chain of dependent calls (what a batch run says of its round trips).

Each bound is worked out by hand below and then met by a scripted debate: the fewest by replies
that end the debate as early as they can, the most by replies that end it as late as they can
(disagreeing, tying, unreadable, empty). The chain is measured as a run measures it (a call's
depth is one more than the deepest call finished before it started).
"""

from __future__ import annotations

import asyncio
import random

import pytest

from madeval.core.components import DebateSetup, TaskPrompt
from madeval.core.transcript import Agent, Persona, Transcript
from madeval.debate.chain import chain_bounds
from madeval.debate.loop import run_debate
from madeval.testing import core_registries, letter


class ChainLLM:
    """Scripted replies, with each call's depth measured as :class:`madeval.debate.session.DebateSession`
    measures it; calls made at once (gathered) overlap, as they do on an endpoint."""

    def __init__(self, script, transcript: Transcript):
        self.script, self.transcript = script, transcript
        self.finished = self.chain = 0

    async def chat(self, agent, messages, *, purpose, nonce=0, max_tokens=None, reply=None):
        depth = self.finished + 1
        await asyncio.sleep(0)  # the other calls gathered with this one start before it ends
        self.finished = max(self.finished, depth)
        self.chain = max(self.chain, depth)
        return self.script(self.transcript.turns_used, agent, purpose, messages)


def setup_of(*, paradigm="memory", decider="majority_consensus", responder="simple", persona="none", agents=3,
             max_turns=3, decider_args=None, extract="task", challenges=(), all_agents_draft_first=False):
    built = core_registries()
    setup = DebateSetup(
        personas=[built.personas.create(persona) for _ in range(agents)],
        responder=built.responders.create(responder, {}),
        paradigm=built.paradigms.create(paradigm, {}),
        decider=built.deciders.create(decider, decider_args or {}),
        agents=agents, max_turns=max_turns, neutral=[False] * agents, all_agents_draft_first=all_agents_draft_first,
        extract=extract, challenges=tuple(challenges))
    setup.validate()
    return setup


def chain_of(setup: DebateSetup, script) -> int:
    transcript = Transcript()
    llm = ChainLLM(script, transcript)
    agents = [Agent(i, Persona(""), "m", "e", False) for i in range(setup.agents)]
    asyncio.run(run_debate(setup, TaskPrompt("Answer.", "Q?"), llm, agents=agents, extract=letter,
                           rng=random.Random(0), transcript=transcript))
    assert transcript.decision is not None
    return llm.chain


def own_answer(turn, agent, purpose, messages):
    """Every agent keeps a solution of its own and disagrees: no consensus, no winner."""
    if agent is None:
        return ""  # the judge: an empty verdict (one more turn)
    if purpose == "vote":
        return "I cannot choose."  # unreadable: re-asked, then an abstention
    if purpose == "persona":
        return "not JSON"  # re-asked up to max_attempts
    if purpose == "agreement":
        return "[DISAGREE]"
    if purpose == "challenge":
        return "[DISAGREE] That is wrong."
    return f"[DISAGREE] Final Solution: {'ABC'[agent]}"


def agree_at_once(turn, agent, purpose, messages):
    """Agent 1 drafts A and everyone agrees; every ballot and verdict names solution 1."""
    if agent is None:
        return "Final Solution: A"
    if purpose == "vote":
        return "1"
    if turn >= 1 and agent > 0 and purpose in ("improve", "feedback"):
        return "[AGREE]"
    return "[AGREE] Final Solution: A"


def test_the_issue_case_memory_majority_ten_turns_is_two_to_thirty():
    """Memory, 3 agents, majority consensus, 10 turns (the run that said "at least 1"): a draft and one
    agreement end it at 2 calls; three agents disagreeing for 10 turns make 30, and consensus at
    max_turns takes no call."""
    setup = setup_of(max_turns=10)
    bounds = chain_bounds(setup)
    assert (bounds.least, bounds.most) == (2, 30)
    assert chain_of(setup, agree_at_once) == 2
    assert chain_of(setup_of(max_turns=10), own_answer) == 30


CASES = [
    # 3 steps x 3 turns + one round of ballots; at most + 1 vote (turn 3 of 3) of 1 + 2 re-asks
    (dict(decider="simple_voting"), 10, 12),
    # ... and with --extract llm each vote first asks every agent's final solution: + 1 a vote
    (dict(decider="simple_voting", max_turns=4, extract="llm"), 9 + 1 + 1, 3 * 4 + 2 * (1 + 1 + 2)),
    # Collective Refinement: 1 step a turn
    (dict(paradigm="collective_refinement", decider="simple_voting"), 4, 6),
    # Reasoning shares no solution: the judge (after turn 2) needs each agent's final solution first
    (dict(responder="reasoning", decider="judge", decider_args={"after_turns": 2}), 3 + 3 + 2,
     9 + 2 * (1 + 1)),
    # Expert personas one after another (1 call each, at most 3 attempts), counting after 2 turns, and
    # the wrong-answer challenge (the judge's answer, each agent's reply and new answer)
    (dict(persona="expert", decider="counting", max_turns=2, challenges=["wrong"]), 3 + 6 + 2, 9 + 6 + 3),
    # All-Agents Drafting: turn 1 is one step, so consensus may come in turn 2's first step
    (dict(all_agents_draft_first=True, decider="unanimity_consensus"), 2, 1 + 3 + 3),
]


@pytest.mark.parametrize(("options", "least", "most"), CASES,
                         ids=["voting", "voting-extract-llm", "cr", "reasoning-judge", "expert-counting-wrong",
                              "all-draft-unanimity"])
def test_bounds_worked_out_by_hand_are_met_by_debates(options, least, most):
    setup = setup_of(**options)
    bounds = chain_bounds(setup)
    assert (bounds.least, bounds.most) == (least, most)
    assert chain_of(setup_of(**options), own_answer) == most
    early = chain_of(setup_of(**options), agree_at_once)
    assert least <= early <= most
    if options.get("persona") is None and options.get("decider") != "unanimity_consensus":
        assert early == least  # the fewest is met too (unanimity needs every agent: more than 2)


def test_consensus_asks_a_final_solution_only_when_it_is_reached():
    """Reasoning shares no solution: a consensus is followed by the draft's author's final solution.
    Reached at once: 2 steps + 1; reached at the last step of the last turn: 9 steps + 1."""
    setup = setup_of(responder="reasoning")
    assert (chain_bounds(setup).least, chain_bounds(setup).most) == (3, 10)
    assert chain_of(setup_of(responder="reasoning"), agree_at_once) == 3

    def agree_last(turn, agent, purpose, messages):
        if turn == 3 and agent == 2 and purpose == "improve":
            return "[AGREE]"
        return own_answer(turn, agent, purpose, messages)

    assert chain_of(setup_of(responder="reasoning"), agree_last) == 10


def test_a_reply_of_two_calls_doubles_a_steps_calls_at_most():
    """Split Free Text asks the agreement and then the contribution: an upper bound of 2 calls a step
    (the first drafter makes one), which a disagreeing debate stays within."""
    setup = setup_of(responder="splitfreetext", decider="unanimity_consensus")
    bounds = chain_bounds(setup)
    assert (bounds.least, bounds.most) == (2, 18)
    assert chain_of(setup_of(responder="splitfreetext", decider="unanimity_consensus"), own_answer) == 17


def test_a_component_that_does_not_say_leaves_the_most_unknown():
    from madeval.core.components import Paradigm

    setup = setup_of()
    setup.paradigm = type("Mine", (Paradigm,), {"name": "mine"})()
    bounds = chain_bounds(setup)
    assert bounds.least == 2 and bounds.most is None
    assert bounds.unknown == "paradigm 'mine' does not say its most steps a turn"
