"""Built-in paradigms: who speaks when, and who sees what."""

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
    register("collective_refinement", CollectiveRefinement, aliases=("cr",))
