"""Free-MAD's score over the whole answer trajectory (Free-MAD paper, Section 4.3, Algorithm 1).

The answer matrix has one row per round (round 0: the independent answers; rounds 1..R: the
debate) and one column per agent. With weights ``W = (w1, w2, w3, w4)`` and a round factor
``f(k)``, every agent ``i`` in round ``k`` updates the score dictionary ``S``:

* round 0: ``S[a] += w1 * f(0)`` (initial answer);
* a later round, answer changed from ``b`` to ``a``: ``S[b] -= w2 * f(k)`` (abandoned answer) and
  ``S[a] += w3 * f(k)`` (newly adopted answer);
* a later round, answer kept: ``S[a] += w4 * f(k)``.

The answer with the highest score wins; a tie is broken at random. Defaults: ``W = (20, 25, 30,
20)`` and ``f(k) = 1 / (k + 1)``, both from Free-MAD's public re-implementation
(jonathansantilli/freemad; methods.md 1.1, labelled [3P]: the paper's PDF text lost the
formulas), hence both configurable.

Unparsed answers (madeval's rule; the paper has none): an agent without a parsed answer in a round
contributes nothing that round; its next parsed answer is compared with the last answer it did
have (an agent that never had one *adopts* its first answer, ``+w3 * f(k)``).

Worked example (methods.md 1.1): round 0 answers A, A, B give ``S = {A: 40, B: 20}``; in round 1
(f = 1/2) agent 2 switches A -> C while agents 1 and 3 keep theirs, so ``S[A] = 40 - 12.5 + 10 =
37.5``, ``S[B] = 20 + 10 = 30``, ``S[C] = 15``, and A wins.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

#: Named round factors ``f(k)`` (``k`` = 0 for the independent answers).
FACTORS: dict[str, Callable[[int], float]] = {
    "inverse": lambda k: 1.0 / (k + 1),
    "constant": lambda k: 1.0,
    "halving": lambda k: 0.5**k,
}
DEFAULT_WEIGHTS = (20.0, 25.0, 30.0, 20.0)


def parse_weights(value: Any) -> tuple[float, float, float, float]:
    """``W`` from a sequence or a string ``"20;25;30;20"`` (commas work too); four numbers >= 0."""
    parts = _parts(value)
    try:
        numbers = tuple(float(p) for p in parts)
    except (TypeError, ValueError):
        raise ValueError(f"weights must be four numbers (w1;w2;w3;w4), got {value!r}") from None
    if len(numbers) != 4 or any(not math.isfinite(n) or n < 0 for n in numbers):
        raise ValueError(f"weights must be four numbers >= 0 (w1;w2;w3;w4), got {value!r}")
    return numbers  # type: ignore[return-value]


def parse_factor(value: Any) -> Callable[[int], float]:
    """``f(k)`` from a name (``inverse``, ``constant``, ``halving``) or per-round values
    ``"1;0.5;0.25"`` (the last value repeats for later rounds)."""
    if isinstance(value, str) and value.strip() in FACTORS:
        return FACTORS[value.strip()]
    parts = _parts(value)
    try:
        values = [float(p) for p in parts]
    except (TypeError, ValueError):
        values = []
    if not values or any(not math.isfinite(v) or v < 0 for v in values):
        names = ", ".join(FACTORS)
        raise ValueError(f"factor must be one of {names} or per-round numbers like 1;0.5, got {value!r}")
    return lambda k: values[min(k, len(values) - 1)]


def _parts(value: Any) -> list[Any]:
    if isinstance(value, str):
        return [p.strip() for p in value.replace(",", ";").split(";") if p.strip()]
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


@dataclass
class Scoring:
    """The result of scoring one trajectory: scores in order of first appearance, and every update."""

    scores: dict[str, float] = field(default_factory=dict)
    updates: list[dict[str, Any]] = field(default_factory=list)
    factors: list[float] = field(default_factory=list)

    def leaders(self) -> list[str]:
        """The answers with the highest score (several on a tie), in order of first appearance."""
        if not self.scores:
            return []
        best = max(self.scores.values())
        return [a for a, s in self.scores.items() if math.isclose(s, best, rel_tol=1e-12, abs_tol=1e-9)]


def score_trajectory(
    rows: Sequence[Sequence[str | None]],
    weights: Sequence[float] = DEFAULT_WEIGHTS,
    factor: Callable[[int], float] = FACTORS["inverse"],
) -> Scoring:
    """Score the answer matrix ``rows`` (row k = round k, column i = agent i) by Algorithm 1."""
    w1, w2, w3, w4 = weights
    result = Scoring()

    def add(answer: str, amount: float, agent: int, round_: int, why: str) -> None:
        result.scores[answer] = result.scores.get(answer, 0.0) + amount
        result.updates.append({"round": round_, "agent": agent, "answer": answer, "delta": amount, "rule": why})

    held: dict[int, str] = {}
    for k, row in enumerate(rows):
        f = factor(k)
        result.factors.append(f)
        for agent, answer in enumerate(row):
            if answer is None:
                continue
            before = held.get(agent)
            if k == 0:
                add(answer, w1 * f, agent, k, "initial")
            elif before is None:
                add(answer, w3 * f, agent, k, "adopted")
            elif answer != before:
                add(before, -w2 * f, agent, k, "abandoned")
                add(answer, w3 * f, agent, k, "adopted")
            else:
                add(answer, w4 * f, agent, k, "kept")
            held[agent] = answer
    return result
