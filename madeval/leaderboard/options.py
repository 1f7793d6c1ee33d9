"""Leaderboard options: which comparisons, which test, which correction, which interval.

They come from the ``leaderboard:`` mapping of a ``--config`` / sweep file and from the options of
``madeval leaderboard``; unknown keys or values are a one-line UsageError.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from ..errors import UsageError
from ..options import snake_keys

INTERVALS = {
    "population": "95% confidence intervals are about the population of questions the items were "
    "drawn from (Student t over per-item means; Wilson for 0/1 scores); no finite-population correction.",
    "benchmark": "95% confidence intervals are about this finite benchmark: the items are a sample of its "
    "N items, with the finite-population correction (two-stage: items, then debate randomness over repeats).",
}
CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no correction"}


@dataclass
class LeaderboardOptions:
    """How rows are compared and summarised."""

    reference: str | None = None  # label or id of the reference configuration; None: the first
    compare: str = "reference"  # "reference" or "all" (every pair)
    correction: str = "holm"  # "holm", "bh" or "none"
    test: str = "permutation"  # for non-binary scores: "permutation" or "bootstrap"
    interval: str = "population"  # "population" or "benchmark"
    alpha: float = 0.05
    resamples: int = 9999
    seed: int = 0
    title: str | None = None

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> LeaderboardOptions:
        """Options from a mapping, checked."""
        data = snake_keys(data or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise UsageError(f"unknown leaderboard option {', '.join(unknown)} (options: {', '.join(sorted(known))})")
        options = cls(**data)
        options.check()
        return options

    def check(self) -> None:
        """Reject values that cannot work."""
        for name, value, allowed in (
            ("compare", self.compare, ("reference", "all")),
            ("correction", self.correction, tuple(CORRECTION_NAMES)),
            ("test", self.test, ("permutation", "bootstrap")),
            ("interval", self.interval, tuple(INTERVALS)),
        ):
            if value not in allowed:
                raise UsageError(f"leaderboard {name} must be one of {', '.join(allowed)}, got '{value}'")
        try:
            self.alpha, self.resamples, self.seed = float(self.alpha), int(self.resamples), int(self.seed)
        except (TypeError, ValueError):
            raise UsageError("leaderboard alpha must be a number, resamples and seed integers") from None
        if not 0 < self.alpha < 1:
            raise UsageError(f"leaderboard alpha must be between 0 and 1, got {self.alpha}")
        if self.resamples < 99:
            raise UsageError(f"leaderboard resamples must be at least 99, got {self.resamples}")

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return asdict(self)

    def statement(self) -> str:
        """What the intervals and the significance marks mean, for every output."""
        other = "permutation" if self.test == "permutation" else "bootstrap"
        return (
            f"{INTERVALS[self.interval]} Paired tests on shared items: exact McNemar when both "
            f"configurations' per-item scores are all 0 or 1 (one repeat, or repeats that agree on every "
            f"item), otherwise the paired {other} test on per-item means; a macro group row (tasks "
            f"weighted equally) with unequal task sizes uses a stratified sign-flip test. Each comparison "
            f"names its test. Group rows combine their tasks as the group declares (micro: pooled items; "
            f"macro: mean of task scores, stratified interval; macro when nothing is declared). "
            f"{CORRECTION_NAMES[self.correction]} correction per task; * = significant at "
            f"alpha {self.alpha:g} after correction."
        )
