"""Leaderboard options: which comparisons, which test, which correction, which interval.

They come from the ``leaderboard:`` mapping of a ``--config`` / sweep file and from the options of
``madeval leaderboard``; unknown keys or values are a one-line UsageError.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, fields
from typing import Any

from madeval.core.options import at_least, declared_option, flag, inside, integer, number, option, snake_keys, text
from madeval.errors import UsageError

INTERVALS = {
    "population": "95% confidence intervals are about the population of questions the items were "
    "drawn from (Student t over per-item means; Wilson for 0/1 scores); no finite-population correction.",
    "benchmark": "95% confidence intervals are about this finite benchmark: the items are a sample of its "
    "N items, with the finite-population correction (two-stage: items, then debate randomness over repeats). "
    "That needs two repeats or more of every item: with one, the debates' randomness cannot be told from the "
    "items' spread, and such a row gets the wider population interval (its method says so).",
}
CORRECTION_NAMES = {"holm": "Holm", "bh": "Benjamini-Hochberg", "none": "no correction"}


@dataclass
class LeaderboardOptions:
    """How rows are compared and summarised: each option declared once, as for run options
    (:func:`madeval.core.options.option`); ``madeval leaderboard``'s flags are derived from them."""

    reference: str | None = option(None, help="Configuration (label or id) every other one is compared with.",
                                   convert=text, shown_default="the first")
    compare: str = option("reference", help="Compare with the reference or all pairs.", convert=text,
                          choices=("reference", "all"))
    correction: str = option("holm", help="Family-wise correction.", convert=text, choices=tuple(CORRECTION_NAMES))
    test: str = option("permutation", help="Paired test for scores that are not 0/1.", convert=text,
                       choices=("permutation", "bootstrap"))
    interval: str = option("population", help="Intervals about the population of questions, or this finite "
                           "benchmark (FPC).", convert=text, choices=tuple(INTERVALS))
    alpha: float = option(0.05, help="Significance level after correction.", convert=number, check=inside(0, 1))
    resamples: int = option(9999, help="Resamples of the permutation and bootstrap tests.", convert=integer,
                            check=at_least(99), cli=False)
    seed: int = option(0, help="Seed of the resamples.", convert=integer, cli=False)
    title: str | None = option(None, help="Title of the HTML page.", convert=text)
    merge_same: bool = option(False, help="Merge a configuration found in several runs of the same settings "
                              "(their records must agree) instead of refusing it; runs of another seed, model or "
                              "sampling are kept apart.", convert=flag)
    prices: str | None = option(None, help="Price file (YAML or JSON: per model, dollars per million input, output "
                                "and cached input tokens, and the batch discount): adds cost per item and per "
                                "configuration, at batch prices for the calls that went through --transport batch.",
                                convert=text)
    charts: bool = option(False, help="Draw the charts (charts/*.png and *.svg, also in the HTML page); off by "
                          "default because matplotlib takes 1.5 s or more to load and draw.", convert=flag)

    @classmethod
    def from_dict(cls, data: dict[str, Any] | None) -> LeaderboardOptions:
        """Options from a mapping, checked."""
        data = snake_keys(data or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            close = difflib.get_close_matches(unknown[0], sorted(known), n=1, cutoff=0.6)
            hint = f"; did you mean {close[0]}?" if close else ""
            raise UsageError(f"unknown leaderboard option {', '.join(unknown)} "
                             f"(options: {', '.join(sorted(known))}){hint}")
        options = cls(**data)
        options.check()
        return options

    def check(self) -> None:
        """Read every option by its declared rule; a value that cannot work is a one-line UsageError."""
        for spec in fields(self):
            try:
                setattr(self, spec.name, declared_option(spec).read(getattr(self, spec.name)))
            except ValueError as error:
                raise UsageError(f"leaderboard {spec.name} {error}") from None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return asdict(self)

    def statement(self, compared: bool = True) -> str:
        """How the intervals (and, when configurations are ``compared``, the tests, corrections and
        MDEs) were computed: said once, at the end of every output."""
        if not compared:  # one configuration: no test, no correction, no MDE to explain
            return INTERVALS[self.interval]
        other = "permutation" if self.test == "permutation" else "bootstrap"
        return (
            f"{INTERVALS[self.interval]} Paired tests on shared items: exact McNemar when both "
            f"configurations' per-item scores are all 0 or 1 (one repeat, or repeats that agree on every "
            f"item), otherwise the paired {other} test on per-item means; a macro group row (tasks "
            f"weighted equally) with unequal task sizes uses a stratified sign-flip test. Each comparison "
            f"names its test. Group rows combine their tasks as the group declares (micro: pooled items; "
            f"macro: mean of task scores, stratified interval; macro when nothing is declared). "
            f"{CORRECTION_NAMES[self.correction]} correction per task and metric, over its comparisons with the "
            f"reference (or all pairs) and of the best with the runner-up; * = significant at "
            f"alpha {self.alpha:g} after correction. 95% CI of a difference: the differences the comparison's "
            f"own test does not reject (exact McNemar: Fay-Lumbard's compatible interval; permutation: the sign "
            f"flips inverted; bootstrap: its percentile interval), so it leaves out 0 exactly when the p-value "
            f"before correction is below 0.05. MDE, for planning: the true difference the comparison's test "
            f"finds 4 times in 5 on these items, at the level below which a p-value is starred whatever the "
            f"family's other p-values ({self._mde_level()}), from the observed discordant pairs (0/1 scores: "
            f"exact McNemar power) or the SD of the paired differences (paired t); smaller differences are found "
            f"less often, not never; – when no difference would reach that power (too few discordant pairs)."
        )

    def _mde_level(self) -> str:
        """The level of the MDE as said in :meth:`statement` (see ``madeval.analysis.compare.mde_alpha``)."""
        if self.correction == "none":
            return f"alpha {self.alpha:g}"
        return f"alpha {self.alpha:g} divided by the family's number of comparisons"
