"""Which items of a task a run uses: all, a seeded random N, or Cochran's size with FPC.

``--sample all`` uses every item; ``--sample N`` draws N items; ``--sample fpc`` draws Cochran's
sample size with finite-population correction, as in "Voting or Consensus?"
(Appendix B.1)::

    n0 = z^2 * p * (1 - p) / e^2            (z from --confidence, e = --margin, p = 0.5)
    n  = n0 / (1 + (n0 - 1) / N)            (N = the task's number of items)

Both n0 and n are rounded up to whole items. Rounding n0 up first (384.15 -> 385) is the usual
reading of Cochran's procedure and reproduces every row of 001 Table 3 that follows from the
formula (MMLU 14,042 -> 375, MMLU-Pro 12,032 -> 374, StrategyQA 2,289 -> 330, MuSR 250 -> 152,
SQuAD 2.0 11,873 -> 373).

The draw is a pure function of (run seed, task name, item id): every item gets a rank from a
hash of the three and the lowest-ranked items are taken, returned in dataset order. So every
configuration of a run sees the same items (comparisons are paired), a larger sample contains a
smaller one, and the choice does not depend on dataset order.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any, Sequence, TypeVar

from madeval.core.options import sample_size
from madeval.errors import UsageError

T = TypeVar("T")

SAMPLE_ALL = "all"
SAMPLE_FPC = "fpc"
DEFAULT_CONFIDENCE = 0.95
DEFAULT_MARGIN = 0.05


def z_score(confidence: float) -> float:
    """The two-sided standard normal quantile for ``confidence`` (1.95996... for 0.95)."""
    if not 0 < confidence < 1:
        raise UsageError(f"confidence must be between 0 and 1 (exclusive), got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def cochran_n0(confidence: float = DEFAULT_CONFIDENCE, margin: float = DEFAULT_MARGIN, p: float = 0.5) -> int:
    """Cochran's sample size for an infinite population, rounded up (385 for 95% and 5%)."""
    if not 0 < margin < 1:
        raise UsageError(f"margin must be between 0 and 1 (exclusive), got {margin}")
    if not 0 < p < 1:
        raise UsageError(f"p must be between 0 and 1 (exclusive), got {p}")
    return math.ceil(z_score(confidence) ** 2 * p * (1 - p) / margin**2 - 1e-9)


def cochran_sample_size(
    population: int, confidence: float = DEFAULT_CONFIDENCE, margin: float = DEFAULT_MARGIN, p: float = 0.5
) -> int:
    """Cochran's sample size with finite-population correction for ``population`` items.

    ``n = n0 / (1 + (n0 - 1) / N)`` rounded up, never more than ``N``.
    """
    return finite_population_size(cochran_n0(confidence, margin, p), population)


def finite_population_size(n0: int, population: int) -> int:
    """An infinite-population sample size ``n0`` corrected for ``population`` items:
    ``n = n0 / (1 + (n0 - 1) / N)`` rounded up, never more than ``N``."""
    if population < 1:
        raise UsageError(f"population size must be at least 1, got {population}")
    corrected = n0 / (1 + (n0 - 1) / population)
    return min(population, math.ceil(corrected - 1e-9))


@dataclass(frozen=True)
class SampleSpec:
    """A parsed ``--sample`` value: ``all``, a count, or ``fpc`` with its confidence and margin."""

    method: str
    count: int | None = None
    confidence: float = DEFAULT_CONFIDENCE
    margin: float = DEFAULT_MARGIN

    def size(self, population: int) -> int:
        """How many of ``population`` items this specification takes."""
        if self.method == SAMPLE_ALL:
            return population
        if self.method == SAMPLE_FPC:
            return cochran_sample_size(population, self.confidence, self.margin)
        return min(int(self.count or 0), population)

    def describe(self) -> dict[str, Any]:
        """The specification as stored in run.json."""
        data: dict[str, Any] = {"method": self.method}
        if self.method == "count":
            data["count"] = self.count
        if self.method == SAMPLE_FPC:
            data.update(confidence=self.confidence, margin=self.margin, n0=cochran_n0(self.confidence, self.margin))
        return data


def parse_sample(
    value: Any, confidence: float = DEFAULT_CONFIDENCE, margin: float = DEFAULT_MARGIN
) -> SampleSpec:
    """``"all"``, ``"fpc"`` or a positive integer (as int or text); anything else is a UsageError."""
    z_score(confidence)
    cochran_n0(confidence, margin)
    if value is None:
        return SampleSpec(SAMPLE_ALL, confidence=confidence, margin=margin)
    problem = sample_size(str(value))  # the --sample option's own check: one rule for both
    if problem is not None:
        raise UsageError(f"sample {problem}")
    text = str(value).strip().lower()
    if text in (SAMPLE_ALL, SAMPLE_FPC):
        return SampleSpec(text, confidence=confidence, margin=margin)
    return SampleSpec("count", int(text), confidence, margin)


def item_rank(seed: int, task: str, item_id: str) -> bytes:
    """The sort key that decides which items a draw takes (lowest first)."""
    return hashlib.sha256(f"{seed}\x1f{task}\x1f{item_id}".encode()).digest()


def draw(items: Sequence[T], size: int, *, seed: int, task: str, key=lambda item: item.id) -> list[T]:
    """``size`` items chosen by :func:`item_rank`, in their original order."""
    if size >= len(items):
        return list(items)
    ranked = sorted(range(len(items)), key=lambda i: item_rank(seed, task, str(key(items[i]))))
    chosen = sorted(ranked[:size])
    return [items[i] for i in chosen]
