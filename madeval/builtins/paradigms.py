"""Built-in paradigms: who speaks when, and who sees what (MALLM, seed 000, Section 3.2).

Every paradigm honours ``visible_turns_in_memory`` (default 2): an agent sees the messages of the
last that many turns plus those of the current turn (MALLM ignores the option). Neutral agents
(moderators) propose a draft every turn instead of improving one.
"""

from __future__ import annotations

from typing import Iterator

from .. import hookimpl
from ..components import DebateState, Paradigm, Speaker
from ..transcript import Message


class Memory(Paradigm):
    """Memory: agents speak in order and every message is visible to every agent."""

    name = "memory"

    def turn(self, state: DebateState) -> Iterator[list[Speaker]]:
        for agent in state.agents:
            yield [Speaker(agent.index, self.stage_for(agent.index, state))]


class Relay(Paradigm):
    """Relay: agents speak in order; a message is seen only by its author and the next agent."""

    name = "relay"

    def turn(self, state: DebateState) -> Iterator[list[Speaker]]:
        count = len(state.agents)
        for agent in state.agents:
            audience = tuple(sorted({agent.index, (agent.index + 1) % count}))
            yield [Speaker(agent.index, self.stage_for(agent.index, state), audience)]


class Report(Paradigm):
    """Report: agent 1 drafts every turn for all to see; the others report to agent 1 only."""

    name = "report"

    def turn(self, state: DebateState) -> Iterator[list[Speaker]]:
        yield [Speaker(0, "draft")]
        for agent in state.agents[1:]:
            yield [Speaker(agent.index, self.stage_for(agent.index, state), (0, agent.index))]


class Debate(Paradigm):
    """Debate: agent 1 drafts; the others argue in ``debate_rounds`` relay rounds, seen by agent 1.

    In each round agents 2..n speak in order; a message is seen by its author, the next debater
    and the central agent 1, who drafts again at the start of the next turn.
    """

    name = "debate"

    def __init__(self, visible_turns_in_memory: int = 2, debate_rounds: int = 2):
        super().__init__(visible_turns_in_memory)
        if debate_rounds < 1:
            raise ValueError("debate_rounds must be at least 1")
        self.debate_rounds = debate_rounds

    def turn(self, state: DebateState) -> Iterator[list[Speaker]]:
        yield [Speaker(0, "draft")]
        debaters = [a.index for a in state.agents[1:]]
        for _ in range(self.debate_rounds):
            for position, agent in enumerate(debaters):
                following = debaters[(position + 1) % len(debaters)]
                audience = tuple(sorted({0, agent, following}))
                yield [Speaker(agent, self.stage_for(agent, state), audience)]


class CollectiveRefinement(Paradigm):
    """Collective Refinement: all agents speak at once; each sees every answer of the last turn.

    Turn 1 is an independent draft by every agent (nobody sees anything); in later turns each
    agent refines its own answer given all answers of the previous turn (Voting or Consensus,
    seed 001, Appendix C). Agents give no agreement stance, so consensus deciders cannot be used.
    """

    name = "collective_refinement"
    supports_agreement = False

    def turn(self, state: DebateState) -> Iterator[list[Speaker]]:
        stage = "draft" if state.turn == 1 else "refine"
        yield [Speaker(agent.index, stage) for agent in state.agents]

    def view(self, agent: int, state: DebateState) -> list[Message]:
        return [m for m in state.transcript.messages if m.turn == state.turn - 1 and m.visible_to(agent)]


@hookimpl
def register_paradigms(register):
    """The built-in paradigms."""
    register("memory", Memory)
    register("relay", Relay)
    register("report", Report)
    register("debate", Debate)
    register("collective_refinement", CollectiveRefinement, aliases=("cr",))
