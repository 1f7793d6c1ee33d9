"""Consensus deciders: stop when enough agents back the same draft.

Counting rule (checked after every step, i.e. after every message in sequential paradigms):

* the *current draft* is the most recent message that proposed a solution;
* an agent *backs* it when its latest message is that draft (the drafter backs its own draft) or
  an [AGREE] reply given while that draft was the current one; an agent that disagreed, proposed
  another solution or has not spoken yet does not back it;
* ``share = backers / voting agents`` (neutral agents are not counted);
* the debate stops when the share reaches the threshold: majority ``> 1/2``, supermajority
  ``>= 2/3``, unanimity ``= 1``; hybrid (MALLM's default) needs ``>= 3/4``, but unanimity while
  fewer than 5 turns have been played or there are at most 3 voting agents.

The decided answer is the current draft's solution; with ``extract: llm``, or a responder that
shares reasoning only, the draft's author is asked for its final solution. Every check is
recorded as a ``consensus_check`` event.

So in a three-agent Memory debate where agents 2 and 3 agree with agent 1's first draft, majority
decides after the second message and unanimity after the third, both in turn 1. At ``max_turns``
without consensus the current draft is returned with ``success = False``.
"""

from __future__ import annotations

from fractions import Fraction

from madeval.builtins.finals import final_solution
from madeval.core.components import DebateState, Decider
from madeval.core.hookspecs import hookimpl
from madeval.core.transcript import Decision


class Consensus(Decider):
    """Stop when the share of agents backing the current draft reaches a threshold."""

    needs_agreement = True
    transcript_only = True  # reads the transcript; replay can apply it to stored debates
    min_voters = 2
    threshold = Fraction(1, 2)
    strict = True  # True: share must exceed the threshold; False: reach it

    def required(self, state: DebateState, voters: int) -> tuple[Fraction, bool]:
        """``(threshold, strict)`` for the current turn."""
        return self.threshold, self.strict

    def least_chain(self, first_turn: int, turn: int, max_turns: int, final: int = 0) -> int:
        """Two steps (every threshold needs two backers, a debate having at least two voters, and an
        agreement backs a draft of an earlier step), then the draft's final solution; or every step
        of every turn, when that is fewer (at ``max_turns`` no final solution is asked)."""
        return min(2 + final, first_turn + (max_turns - 1) * turn)

    def most_chain(self, first_turn: int, turn: int, max_turns: int, final: int) -> int:
        """Every step of every turn, then the deciding draft's final solution (none at ``max_turns``)."""
        return first_turn + (max_turns - 1) * turn + final

    async def after_step(self, state: DebateState, llm) -> Decision | None:
        draft = state.current_draft()
        voters = [a for a in state.agents if not a.neutral]
        if draft is None or not voters:
            return None
        backers = sorted(agent for agent, backs in state.stances().items() if backs == draft.id)
        share = Fraction(len(backers), len(voters))
        threshold, strict = self.required(state, len(voters))
        reached = share > threshold or (not strict and share >= threshold)
        state.transcript.events.append(
            {"kind": "consensus_check", "turn": state.turn, "message": len(state.transcript.messages) - 1,
             "draft": draft.id, "share": float(share), "reached": reached}
        )
        if reached:
            answer = draft.solution
            if state.extract_mode == "llm" or not state.responder.shares_solutions:
                answer = await final_solution(state, llm, draft.agent)
            return Decision(
                answer=answer,
                success=True,
                turn=state.turn,
                decider=self.name,
                reason="consensus",
                details=_details(draft.id, backers, share, threshold, strict),
            )
        return None

    async def at_max_turns(self, state: DebateState, llm) -> Decision:
        draft = state.current_draft()
        return Decision(
            answer=draft.solution if draft is not None else None,
            success=False,
            turn=state.turn,
            decider=self.name,
            reason="max_turns_fallback_current_draft",
            details={"draft": draft.id if draft is not None else None},
        )


def _details(draft: int, backers: list[int], share: Fraction, threshold: Fraction, strict: bool) -> dict:
    return {
        "draft": draft,
        "backers": backers,
        "share": float(share),
        "threshold": float(threshold),
        "rule": ">" if strict else ">=",
    }


class MajorityConsensus(Consensus):
    """Majority consensus: more than half of the agents back the current draft."""


class SupermajorityConsensus(Consensus):
    """Supermajority consensus: at least two thirds of the agents back the current draft."""

    threshold = Fraction(2, 3)
    strict = False


class UnanimityConsensus(Consensus):
    """Unanimity consensus: every agent backs the current draft."""

    threshold = Fraction(1)
    strict = False


class HybridConsensus(Consensus):
    """MALLM's default: 3/4 of the agents, but unanimity while turn < 5 or at most 3 agents."""

    strict = False

    def required(self, state: DebateState, voters: int) -> tuple[Fraction, bool]:
        if state.turn < 5 or voters <= 3:
            return Fraction(1), False
        return Fraction(3, 4), False


@hookimpl
def register_deciders(register):
    """The consensus deciders."""
    register("majority_consensus", MajorityConsensus, aliases=("majority",))
    register("supermajority_consensus", SupermajorityConsensus, aliases=("supermajority",))
    register("unanimity_consensus", UnanimityConsensus, aliases=("unanimity",))
    register("hybrid_consensus", HybridConsensus, aliases=("hybrid",))
