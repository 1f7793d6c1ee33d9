"""Solution counting: the most frequent extracted answer, with no LLM call.

The Voting-or-Consensus paper's baseline (Appendix D) and the final step of Society of
Minds. It reads only the transcript, so it can be re-applied to stored debates.
"""

from __future__ import annotations

from collections import Counter

from madeval.core.components import AnswerDecider, DebateState
from madeval.core.hookspecs import hookimpl
from madeval.core.transcript import Decision


def plurality(answers: list[str | None]) -> tuple[str | None, dict[str, int], bool]:
    """``(winner, tally, tied)`` over non-empty answers; ties go to the earliest agent's answer."""
    tally = Counter(a for a in answers if a is not None)
    if not tally:
        return None, {}, False
    best = max(tally.values())
    leaders = [a for a in answers if a is not None and tally[a] == best]
    return leaders[0], dict(tally), len(set(leaders)) > 1


class Counting(AnswerDecider):
    """The most frequent extracted answer among the agents' latest messages.

    It decides after turn ``after_turns`` (default: at ``max_turns``). A tie goes to the answer of
    the earliest agent among the tied ones and is recorded; with no extractable answer at all the
    decision fails.
    """


    def decide(self, state: DebateState) -> Decision:
        """Count the voting agents' current answers."""
        held = state.transcript.held_by_agent()
        answers = [held[a.index].answer if a.index in held else None for a in state.agents if not a.neutral]
        winner, tally, tied = plurality(answers)
        return Decision(
            answer=winner,
            success=winner is not None,
            turn=state.turn,
            decider=self.name,
            reason="plurality" if winner is not None else "no_answers",
            details={"answers": answers, "tally": tally, "tie": tied},
        )


@hookimpl
def register_deciders(register):
    """The counting decider."""
    register("counting", Counting, aliases=("solution_counting",))
