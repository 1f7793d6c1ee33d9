"""Free-MAD's token cost (Free-MAD paper, Section 5.2, Eq. 6) as a debate metric.

``TC = sum over rounds k and agents i of (prompt tokens + completion tokens of agent i in round
k)``, i.e. every call an agent made, summed (methods.md 1.4, [INF]: the formula itself was lost in
the PDF extraction; the paper's sentence under it speaks of "output tokens", which is
``token_cost_completion``). Calls made for the judge model (``agent`` None, e.g. a fallback
judge) are not an agent's and are left out.
"""

from __future__ import annotations

from collections import defaultdict

from madeval import DebateMetric, Transcript


def token_cost(transcript: Transcript) -> dict[str, float]:
    """``token_cost`` (prompt + completion), its two parts, and ``token_cost_turn<k>`` per turn."""
    prompt = completion = 0
    per_turn: dict[int, int] = defaultdict(int)
    for call in transcript.calls:
        if call.agent is None:
            continue
        prompt += call.prompt_tokens
        completion += call.completion_tokens
        per_turn[call.turn] += call.prompt_tokens + call.completion_tokens
    scores: dict[str, float] = {
        "token_cost": float(prompt + completion),
        "token_cost_prompt": float(prompt),
        "token_cost_completion": float(completion),
    }
    for turn in sorted(per_turn):
        scores[f"token_cost_turn{turn}"] = float(per_turn[turn])
    return scores


class TokenCost(DebateMetric):
    """Free-MAD's token cost (Eq. 6): agents' prompt and completion tokens summed over agents and rounds."""

    higher_is_better = False

    def score_debate(self, prediction, item, debate) -> dict[str, float]:
        """The token cost of the debate (see :func:`token_cost`)."""
        return token_cost(debate.transcript)
