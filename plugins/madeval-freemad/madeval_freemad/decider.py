"""The ``freemad_score`` decider: Free-MAD's trajectory score as a madeval decider.

Round ``k`` of the paper is madeval turn ``k + 1``; the answer matrix is
:meth:`madeval.core.transcript.Transcript.trajectory` (the answer each voting agent held at the end of
every turn). The decider reads nothing but the transcript, so ``madeval rescore`` can apply it to
stored debates.
"""

from __future__ import annotations

from typing import Any

from madeval import AnswerDecider, DebateState, Decision, Transcript
from madeval_madc.randomness import substream

from .score import DEFAULT_WEIGHTS, parse_factor, parse_weights, score_trajectory


class FreeMadScore(AnswerDecider):
    """Free-MAD's score over the whole answer trajectory (Free-MAD paper, Algorithm 1).

    Initial answers gain ``w1*f``, an abandoned answer loses ``w2*f``, a newly adopted answer gains
    ``w3*f`` and a kept answer ``w4*f``, with ``f = f(k)`` the factor of round ``k`` (turn k+1).
    The highest score wins; ties are broken at random from the debate's seeded generator (run
    seed, item, repeat). Options: ``weights`` (default 20;25;30;20), ``factor`` (``inverse`` =
    1/(k+1), default; ``constant``; ``halving``; or per-round values such as ``1;0.5``) and
    ``after_turns`` (decide after that turn; 0 = at ``max_turns``). Every decision records a
    ``freemad_score`` event with the trajectory, the factors and the scores.
    """


    def __init__(self, weights: Any = DEFAULT_WEIGHTS, factor: Any = "inverse", after_turns: int = 0):
        super().__init__(after_turns)
        self.weights = parse_weights(weights)
        self.factor = parse_factor(factor)

    def decide(self, state: DebateState) -> Decision:
        """Score the trajectory so far and pick the winner (a seeded draw among tied leaders)."""
        transcript = state.transcript
        rows = transcript.trajectory()
        scoring = score_trajectory(rows, self.weights, self.factor)
        leaders = scoring.leaders()
        tie = len(leaders) > 1
        winner = substream(state, "freemad-tie", state.turn).choice(leaders) if tie else (leaders or [None])[0]
        transcript.events.append({
            "kind": "freemad_score",
            "turn": state.turn,
            "weights": list(self.weights),
            "factors": scoring.factors,
            "trajectory": rows,
            "scores": scoring.scores,
            "leaders": leaders,
            "tie": tie,
            "winner": winner,
        })
        if winner is None:
            return Decision(None, False, state.turn, self.name, "no_answers", {"scores": {}})
        return Decision(
            answer=representative_solution(transcript, winner),
            success=True,
            turn=state.turn,
            decider=self.name,
            reason="trajectory_score",
            details={"winner": winner, "scores": scoring.scores, "tie": tie, "leaders": leaders},
        )


def representative_solution(transcript: Transcript, answer: str) -> str:
    """The solution text of the latest voting message whose answer is ``answer`` (else ``answer``)."""
    voters = {agent.index for agent in transcript.voters()}
    for message in reversed(transcript.messages):
        if message.agent in voters and message.answer == answer and message.solution:
            return message.solution
    return answer
