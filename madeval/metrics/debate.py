"""Debate metrics: answer diversity (001 Table 1) and MADC's entropy and gold log-likelihood.

* **Answer diversity** ("Voting or Consensus?", Section 4.3, Table 1): the mean
  cosine similarity, over all pairs of voting agents, of the sentence embeddings (SBERT) of their
  final answers. Lower similarity means more diverse answers.
* **Answer entropy** (MADC, Key Decision-Makers in Multi-Agent Debates, Appendix, Eq. 5): in every
  turn, ``H = -sum_a p_a log2 p_a`` over the shares ``p_a`` of the agents' parsed answers (unparsed
  answers are left out, as in the authors' code). 10 agents answering A x8, B x1, C x1 give 0.9219 bits.
* **Gold log-likelihood** (MADC, Appendix, Eq. 4): ``log2 P(y = gold)`` in every turn, where
  ``P`` is the share of parsed answers equal to the gold answer (A x9, B x1 with gold A:
  log2 0.9 = -0.152); MADC also sums the values over turns. When no agent holds the gold answer,
  ``P = 0`` and the log is minus infinity; the paper describes no smoothing, and leaving such
  turns out would drop exactly the worst debates and bias the mean upward. madeval records the
  floor ``log2(1 / (2n))`` instead (n parsed answers in that turn): one bit below the lowest
  value a turn with a gold answer can have, ``log2(1 / n)`` (4 agents: -3 where one holder gives
  -2). It applies only at ``P = 0``; ``gold_share`` (P itself) is reported alongside.

Every debate reports the value of its last turn and MADC's sum over turns. With the option
``per_turn: true`` the value of every turn is reported too, as ``<name>_turn<k>`` (k from 1); a
debate that stopped earlier has no value for later turns.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from typing import Any, Callable

from madeval.metrics.base import DebateMetric
from madeval.metrics.models import embed
from madeval.metrics.view import DebateView


def entropy_bits(answers: list[str]) -> float:
    """Shannon entropy in bits of the distribution of ``answers``."""
    counts = Counter(answers)
    total = sum(counts.values())
    return -sum((c / total) * math.log2(c / total) for c in counts.values()) + 0.0


def gold_share(answers: list[str], is_gold: Callable[[str], bool]) -> float:
    """The share of ``answers`` that are the gold answer."""
    return sum(1 for a in answers if is_gold(a)) / len(answers)


def floored_log2(share: float, answers: int) -> float:
    """``log2 share``, or the floor ``log2(1 / (2 * answers))`` when ``share`` is 0 (module docstring)."""
    return math.log2(share) if share > 0 else -1.0 - math.log2(answers)


def mean_pairwise_cosine(vectors) -> float | None:
    """Mean cosine similarity over all pairs of rows (``None`` with fewer than two rows)."""
    rows = [list(map(float, v)) for v in vectors]
    pairs = list(itertools.combinations(rows, 2))
    if not pairs:
        return None

    def cosine(a, b):
        norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
        return sum(x * y for x, y in zip(a, b)) / norm if norm else 0.0

    return sum(cosine(a, b) for a, b in pairs) / len(pairs)


class AnswerDiversity(DebateMetric):
    """Mean pairwise cosine similarity of the agents' final answers (SBERT embeddings, 001 Table 1)."""

    higher_is_better = False  # a similarity: lower means more diverse answers

    def __init__(self, model: str = "", embedder: Callable[[list[str]], Any] | None = None):
        self.model = model
        self.embedder = embedder

    def score_debate(self, prediction, item, debate: DebateView) -> dict[str, float]:
        """``answer_cosine_similarity``; nothing with fewer than two agents."""
        texts = debate.final_texts()
        if len(texts) < 2:
            return {}
        if self.embedder is not None:
            vectors = self.embedder(texts)
        else:
            vectors = embed(texts, self.model or None)
        return {"answer_cosine_similarity": mean_pairwise_cosine(vectors)}


class AnswerEntropy(DebateMetric):
    """MADC's answer entropy in bits: at the end, summed over turns, and per turn (003 Eq. 5)."""

    higher_is_better = False

    def __init__(self, per_turn: bool = False):
        self.per_turn = per_turn

    def score_debate(self, prediction, item, debate: DebateView) -> dict[str, float]:
        """``answer_entropy`` (last turn), ``answer_entropy_sum`` and, per turn, ``answer_entropy_turn<k>``."""
        turns: dict[str, float] = {}
        for turn, answers in enumerate(debate.answer_rounds(), start=1):
            if answers:
                turns[f"answer_entropy_turn{turn}"] = entropy_bits(answers)
        values = list(turns.values())
        if not values:
            return {}
        scores = {"answer_entropy": values[-1], "answer_entropy_sum": sum(values)}
        return {**scores, **turns} if self.per_turn else scores


class GoldLikelihood(DebateMetric):
    """MADC's log2-likelihood of the gold answer and the gold share, per turn and at the end (003 Eq. 4)."""


    def __init__(self, per_turn: bool = False):
        self.per_turn = per_turn

    def score_debate(self, prediction, item, debate: DebateView) -> dict[str, float]:
        """``gold_share`` and ``gold_log2_likelihood`` (last turn; floored when no agent holds the
        gold answer), ``gold_log2_likelihood_sum`` over the turns (MADC's sum), and per-turn values."""
        shares: dict[int, float] = {}
        values: dict[int, float] = {}
        for turn, answers in enumerate(debate.answer_rounds(), start=1):
            if answers:
                shares[turn] = gold_share(answers, debate.is_gold)
                values[turn] = floored_log2(shares[turn], len(answers))
        if not shares:
            return {}
        last = max(shares)
        scores = {
            "gold_share": shares[last],
            "gold_log2_likelihood": values[last],
            "gold_log2_likelihood_sum": sum(values.values()),
        }
        if not self.per_turn:
            return scores
        for turn, share in shares.items():
            scores[f"gold_share_turn{turn}"] = share
            scores[f"gold_log2_likelihood_turn{turn}"] = values[turn]
        return scores
