"""Built-in paradigms: who speaks when, and who sees what (MALLM paper, Section 3.2).

Every paradigm honours ``visible_turns_in_memory``: an agent sees the messages of the last that
many turns plus those of the current turn (MALLM ignores the option). The default is 2 (MALLM's),
except for the simultaneous paradigms (Collective Refinement and Improvement), whose default of 1
is the previous turn the paper describes. In the sequential paradigms neutral agents (moderators)
propose a draft every turn instead of improving one.
"""

from __future__ import annotations

import dataclasses
from typing import Iterator

from madeval.builtins.finals import solution_text
from madeval.builtins.voting import Voting
from madeval.core.components import DebateState, Paradigm, Speaker
from madeval.core.hookspecs import hookimpl
from madeval.core.transcript import Message
from madeval.errors import UsageError


def require_agents(paradigm: Paradigm, setup, count: int, why: str) -> None:
    """Fail with one line unless ``setup`` has at least ``count`` agents."""
    if setup.agents < count:
        raise UsageError(
            f"paradigm '{paradigm.name}' needs at least {count} agents ({why}), got {setup.agents}"
        )


class FixedSteps(Paradigm):
    """A paradigm whose turn always takes the same steps one after another (most = least): by
    default one agent a step, as many steps as agents."""

    def least_steps(self, agents: int) -> int:
        """One step an agent."""
        return agents

    def most_steps(self, agents: int) -> int:
        """As many as the least: the steps are fixed."""
        return self.least_steps(agents)


class Memory(FixedSteps):
    """Memory: agents speak in order and every message is visible to every agent."""


    def turn(self, state: DebateState) -> Iterator[list[Speaker]]:
        for agent in state.agents:
            yield [Speaker(agent.index, self.stage_for(agent.index, state))]


class Relay(FixedSteps):
    """Relay: agents speak in order; a message is seen only by its author and the next agent."""


    def validate(self, setup) -> None:
        require_agents(self, setup, 3, "with 2 every message reaches everyone, which is memory")

    def turn(self, state: DebateState) -> Iterator[list[Speaker]]:
        count = len(state.agents)
        for agent in state.agents:
            audience = tuple(sorted({agent.index, (agent.index + 1) % count}))
            yield [Speaker(agent.index, self.stage_for(agent.index, state), audience)]


class Report(FixedSteps):  # agent 1's draft, then one report a step: as many steps as agents
    """Report: agent 1 drafts every turn for all to see; the others report to agent 1 only."""


    def validate(self, setup) -> None:
        require_agents(self, setup, 2, "agent 1 and at least one agent reporting to it")

    def turn(self, state: DebateState) -> Iterator[list[Speaker]]:
        yield [Speaker(0, "draft")]
        for agent in state.agents[1:]:
            yield [Speaker(agent.index, self.stage_for(agent.index, state), (0, agent.index))]


class Debate(FixedSteps):
    """Debate: agent 1 drafts; the others argue in ``debate_rounds`` relay rounds, seen by agent 1.

    In each round agents 2..n speak in order; a message is seen by its author, the next debater
    and the central agent 1, who drafts again at the start of the next turn.
    """


    def __init__(self, visible_turns_in_memory: int = 2, debate_rounds: int = 2):
        super().__init__(visible_turns_in_memory)
        if debate_rounds < 1:
            raise ValueError("debate_rounds must be at least 1")
        self.debate_rounds = debate_rounds

    def validate(self, setup) -> None:
        require_agents(self, setup, 3, "the central agent 1 and at least two agents who debate")

    def turn(self, state: DebateState) -> Iterator[list[Speaker]]:
        yield [Speaker(0, "draft")]
        debaters = [a.index for a in state.agents[1:]]
        for _ in range(self.debate_rounds):
            for position, agent in enumerate(debaters):
                following = debaters[(position + 1) % len(debaters)]
                audience = tuple(sorted({0, agent, following}))
                yield [Speaker(agent, self.stage_for(agent, state), audience)]

    def least_steps(self, agents: int) -> int:
        return 1 + self.debate_rounds * (agents - 1)  # the draft, then each round's debaters in turn


class CollectiveRefinement(Paradigm):
    """Collective Refinement: all agents speak at once; each sees every answer of the last turn.

    Turn 1 is an independent draft by every agent (nobody sees anything); in later turns each
    agent refines its own answer given all answers of the previous turn (Voting or Consensus,
    Voting or Consensus?, Appendix C). ``visible_turns_in_memory`` (default 1, the previous turn) widens
    that to more turns; 0 would hide every answer and is refused. Agents give no agreement
    stance, so consensus deciders cannot be used.
    """

    supports_agreement = False

    def __init__(self, visible_turns_in_memory: int = 1):
        super().__init__(visible_turns_in_memory)

    def validate(self, setup) -> None:
        if self.visible_turns == 0:
            raise UsageError(
                f"paradigm '{self.name}' with visible_turns_in_memory 0 shows agents no answer to "
                "refine; use at least 1"
            )

    def turn(self, state: DebateState) -> Iterator[list[Speaker]]:
        stage = "draft" if state.turn == 1 else "refine"
        yield [Speaker(agent.index, stage) for agent in state.agents]

    def most_steps(self, agents: int) -> int:
        return 1  # every agent at once


class CollectiveImprovement(CollectiveRefinement):
    """Collective Improvement (CI, Voting or Consensus?, Section 4.3): as Collective
    Refinement, but agents see only the *solutions* of the previous turn, not the messages.

    "CI prohibits communication and only shows the solutions from the previous turn to the agent
    in the next turn" (001, 4.3). An agent's view holds every previous-turn message, its own
    included, reduced to its solution: the text after the last "Final Solution:" marker (the
    solution the voting deciders list). The paper prints no CI prompt; agents get the same
    refine prompt as in Collective Refinement. "CI only works for voting decision protocols",
    so any other decider is refused, as are responders whose messages carry no solution.
    """


    def validate(self, setup) -> None:
        super().validate(setup)
        if not isinstance(setup.decider, Voting):
            raise UsageError(
                f"paradigm '{self.name}' works with voting deciders only (Voting or Consensus?, Section 4.3: "
                f"no turn order, so no agreement can be reached), not '{setup.decider.name}'"
            )
        if not setup.responder.shares_solutions:
            raise UsageError(
                f"paradigm '{self.name}' shows agents only the solutions of the previous turn, but "
                f"responder '{setup.responder.name}' shares no solutions"
            )

    def view(self, agent: int, state: DebateState) -> list[Message]:
        shown = []
        for message in super().view(agent, state):
            solution = solution_text(message.solution)
            if solution is not None:
                shown.append(dataclasses.replace(message, text=solution, solution=solution))
        return shown


@hookimpl
def register_paradigms(register):
    """The built-in paradigms."""
    register("memory", Memory)
    register("relay", Relay)
    register("report", Report)
    register("debate", Debate)
    register("collective_refinement", CollectiveRefinement, aliases=("cr",))
    register("collective_improvement", CollectiveImprovement, aliases=("ci",))
