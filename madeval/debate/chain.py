"""The bounds of a debate's chain of dependent calls: the batch round trips it needs.

Under ``--transport batch`` a call waits for the batch holding the call before it, so a debate
needs as many batch round trips, one after another, as its longest chain of dependent calls (its
record's ``chain``). The components say their share, as the debate loop (:mod:`.loop`) runs them:

- personas: a sequential generator's calls follow each other agent after agent, independent ones
  run at once after them (:attr:`~madeval.core.components.PersonaGenerator.least_calls`,
  :attr:`~madeval.core.components.PersonaGenerator.most_calls`);
- turns: the paradigm's steps (:meth:`~madeval.core.components.Paradigm.least_steps`,
  :meth:`~madeval.core.components.Paradigm.most_steps`; All-Agents Drafting makes turn 1 one
  step), each at least one call and at most the responder's
  (:attr:`~madeval.core.components.Responder.most_calls`);
- the decider: how many turns it lets run and the calls it makes itself
  (:meth:`~madeval.core.components.Decider.least_chain`,
  :meth:`~madeval.core.components.Decider.most_chain`), given whether an agent's final solution
  takes a call (``--extract llm``, or a responder that shares no solutions);
- the challenge round after the decision: per variant, each agent's reply and, if it disagrees, its
  new answer (``wrong``: the judge's wrong answer first).

A call that fails and is sent again adds a round trip, which no bound counts.
"""

from __future__ import annotations

from dataclasses import dataclass

from madeval.core.components import DebateSetup


@dataclass(frozen=True)
class ChainBounds:
    """The fewest and the most calls one after another in a debate of one setup; ``most`` is None
    when a component does not say, and ``unknown`` then names it."""

    least: int
    most: int | None
    unknown: str | None = None


def chain_bounds(setup: DebateSetup) -> ChainBounds:
    """The bounds of the chain of dependent calls of a debate of ``setup`` (see the module)."""
    least_personas, most_personas = _persona_calls(setup)
    steps = setup.paradigm.least_steps(setup.agents)
    final = 1 if setup.extract == "llm" or not setup.responder.shares_solutions else 0
    least = least_personas + setup.decider.least_chain(
        1 if setup.all_agents_draft_first else steps, steps, setup.max_turns, final) + _challenge_calls(setup, 1)
    unknown = _unknown(setup, most_personas)
    if unknown is not None:
        return ChainBounds(least, None, unknown)
    calls = setup.responder.most_calls
    most_steps = setup.paradigm.most_steps(setup.agents)
    decided = setup.decider.most_chain((1 if setup.all_agents_draft_first else most_steps) * calls,
                                       most_steps * calls, setup.max_turns, final)
    if decided is None:
        return ChainBounds(least, None, f"decider '{setup.decider.name}' does not say its most calls")
    return ChainBounds(least, most_personas + decided + _challenge_calls(setup, 2), None)


def _persona_calls(setup: DebateSetup) -> tuple[int, int | None]:
    """The fewest and most persona calls one after another (None: a generator does not say)."""
    least = most = 0
    least_at_once = most_at_once = 0
    unknown = False
    for index, generator in enumerate(setup.personas):
        if index < len(setup.neutral) and setup.neutral[index]:
            continue  # a moderator gets its persona without a call
        if generator.most_calls is None:
            unknown = True
        if generator.sequential:
            least += generator.least_calls
            most += generator.most_calls or 0
        else:
            least_at_once = max(least_at_once, generator.least_calls)
            most_at_once = max(most_at_once, generator.most_calls or 0)
    return least + least_at_once, None if unknown else most + most_at_once


def _challenge_calls(setup: DebateSetup, per_agent: int) -> int:
    """The challenge round's calls one after another: ``per_agent`` (1 or 2) each variant, one more
    for ``wrong``'s made-up answer."""
    return sum(per_agent + (variant == "wrong") for variant in setup.challenges)


def _unknown(setup: DebateSetup, most_personas: int | None) -> str | None:
    """Which component does not say its most calls, if one does not (the decider is asked last)."""
    if most_personas is None:
        names = sorted({generator.name for generator in setup.personas if generator.most_calls is None})
        return f"persona '{names[0]}' does not say its most calls"
    if setup.paradigm.most_steps(setup.agents) is None:
        return f"paradigm '{setup.paradigm.name}' does not say its most steps a turn"
    if setup.responder.most_calls is None:
        return f"responder '{setup.responder.name}' does not say its most calls a reply"
    return None
