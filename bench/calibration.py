"""``python -m bench calibration``: are the board's statistics calibrated? Measured by simulation.

A change to the tests, intervals or MDEs is measured here before it lands. Each check simulates
boards with the board's own functions (:func:`madeval.analysis.compare.compare_family` for the paired
tests, their intervals, Holm's correction and the MDEs; :func:`madeval.analysis.stats.mean_interval`
for a row's interval, fed as the board feeds it), on items of varying difficulty: each item's chance
of being answered right is drawn from Beta(2, 1.2) (mean 0.625), and every debate of an item is right
with that chance, independently. Each figure is printed with its 95% binomial (Wilson) interval:

* **A/A**: four configurations that behave the same, all pairs compared on 1 repeat (exact McNemar)
  and on 3 repeats (the permutation test): the share of comparisons with p < 0.05 (at most 0.05),
  starred after Holm, boards with any star (the family-wise rate, at most 0.05), and comparisons
  whose interval of the difference and p-value disagree (0 expected).
* **row interval coverage**: the population interval covering the population's expected score, and
  with ``--interval benchmark`` (the FPC) covering the expected score of a benchmark of 250 items of
  which 152 are drawn (one repeat: the population interval, now; three repeats: two-stage FPC);
  without the FPC about that benchmark for comparison. 0.95 is the target (at least).
* **difference interval coverage**: a configuration better by a logit shift of 0.4 (varying with the
  item), each comparison's 95% interval covering the true expected difference.
* **power at the MDE**: the difference each comparison states as its MDE, found by simulation (a
  shift whose true difference equals the median stated MDE), starred 0.80 of the time as stated.

    python -m bench calibration [--full] [--seed N] [--json FILE]

The default run takes a minute or two on two cores; ``--full`` simulates five times as many boards.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from dataclasses import asdict, dataclass
from functools import lru_cache

import numpy as np

from madeval.analysis.compare import compare_family, pairs
from madeval.analysis.stats import mean_interval, wilson
from madeval.settings.board_options import LeaderboardOptions

#: Items' chance of being right: Beta(A, B), mean A / (A + B).
DIFFICULTY = (2.0, 1.2)
BENCHMARK, DRAWN = 250, 152
SHIFT = 0.4


@dataclass
class Figure:
    """A measured share with its 95% Wilson interval and what it should be."""

    check: str
    hits: int
    trials: int
    target: str

    def __post_init__(self) -> None:
        self.hits, self.trials = int(self.hits), int(self.trials)  # numpy's counts, as JSON can write them

    @property
    def rate(self) -> float:
        return self.hits / self.trials if self.trials else float("nan")

    def interval(self) -> tuple[float, float]:
        return wilson(self.rate, self.trials) if self.trials else (float("nan"), float("nan"))

    def line(self, width: int) -> str:
        low, high = self.interval()
        return (f"{self.check.ljust(width)}  {self.rate:6.3f}  [{low:.3f}, {high:.3f}]  "
                f"{self.hits:>5} of {self.trials:<5}  target {self.target}")


def expit(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def shifted(chance: np.ndarray, shift: float) -> np.ndarray:
    """Each item's chance after a logit shift: a better configuration gains most on middling items."""
    if shift == 0:
        return chance
    clipped = np.clip(chance, 1e-12, 1 - 1e-12)
    return expit(np.log(clipped / (1 - clipped)) + shift)


@lru_cache(maxsize=1)
def _population() -> np.ndarray:
    """Two million items' chances: the population the expected differences are taken over."""
    return np.random.default_rng(99).beta(*DIFFICULTY, 2_000_000)


def true_difference(shift: float) -> float:
    """The population's expected difference of a configuration shifted by ``shift``."""
    chance = _population()
    return float(np.mean(shifted(chance, shift) - chance))


def outcomes(rng: np.random.Generator, chance: np.ndarray, repeats: int) -> np.ndarray:
    """One 0/1 score per (item, repeat)."""
    return (rng.uniform(size=(len(chance), repeats)) < chance[:, None]).astype(float)


def item_means(table: np.ndarray) -> dict[str, float]:
    return {f"t/{index}": float(value) for index, value in enumerate(table.mean(axis=1))}


def family(rng: np.random.Generator, chances: dict[str, np.ndarray], repeats: int,
           options: LeaderboardOptions) -> list[dict]:
    """One board's family of comparisons, as the board computes it."""
    scores = {cid: item_means(outcomes(rng, chance, repeats)) for cid, chance in chances.items()}
    return compare_family(scores, pairs(list(scores), next(iter(scores)), options.compare), options)


def a_a(rng: np.random.Generator, boards: int, items: int, repeats: int) -> list[Figure]:
    options = LeaderboardOptions(compare="all", resamples=1999)
    compared = raw = starred = any_star = disagree = 0
    for _ in range(boards):
        chance = rng.beta(*DIFFICULTY, items)
        found = family(rng, {c: chance for c in "abcd"}, repeats, options)
        compared += len(found)
        raw += sum(c["p_value"] < 0.05 for c in found)
        starred += sum(c["significant"] for c in found)
        any_star += any(c["significant"] for c in found)
        disagree += sum((c["delta_ci_low"] <= 0 <= c["delta_ci_high"]) != (c["p_value"] >= 0.05) for c in found)
    test = "McNemar" if repeats == 1 else "permutation"
    where = f"A/A, {items} items, {repeats} repeat{'s' * (repeats > 1)} ({test})"
    return [Figure(f"{where}: p < 0.05", raw, compared, "<= 0.05"),
            Figure(f"{where}: starred after Holm", starred, compared, "<= 0.05"),
            Figure(f"{where}: boards with a star", any_star, boards, "<= 0.05 (family-wise)"),
            Figure(f"{where}: interval and p disagree", disagree, compared, "0")]


def row_coverage(rng: np.random.Generator, runs: int, repeats: int) -> list[Figure]:
    """The row interval about the population and, with the FPC, about a benchmark of 250 items."""
    population_mean = DIFFICULTY[0] / sum(DIFFICULTY)
    population = benchmark = plain = 0
    for _ in range(runs):
        drawn = rng.beta(*DIFFICULTY, DRAWN)
        table = outcomes(rng, drawn, repeats)
        interval = mean_interval(table.mean(axis=1))
        population += interval.low <= population_mean <= interval.high
        bench = rng.beta(*DIFFICULTY, BENCHMARK)
        picked = rng.choice(BENCHMARK, DRAWN, replace=False)
        table = outcomes(rng, bench[picked], repeats)
        within = [float(np.var(row, ddof=1)) if repeats > 1 else None for row in table]
        finite = mean_interval(table.mean(axis=1), population=BENCHMARK, within=within, repeats=[repeats] * DRAWN)
        wide = mean_interval(table.mean(axis=1))
        expected = bench.mean()
        benchmark += finite.low <= expected <= finite.high
        plain += wide.low <= expected <= wide.high
    times = f"{repeats} repeat{'s' * (repeats > 1)}"
    return [Figure(f"row interval, population, {DRAWN} items, {times}", population, runs, ">= 0.95"),
            Figure(f"row interval, benchmark (FPC), {DRAWN} of {BENCHMARK}, {times}", benchmark, runs, ">= 0.95"),
            Figure(f"row interval, no FPC, about that benchmark, {times}", plain, runs, ">= 0.95 (wider)")]


def difference_coverage(rng: np.random.Generator, boards: int, items: int, repeats: int) -> Figure:
    options = LeaderboardOptions(resamples=1999)
    truth = true_difference(SHIFT)
    covered = 0
    for _ in range(boards):
        chance = rng.beta(*DIFFICULTY, items)
        found = family(rng, {"base": chance, "better": shifted(chance, SHIFT)}, repeats, options)[0]
        expected = truth if found["a"] == "better" else -truth
        covered += bool(found["delta_ci_low"] <= expected <= found["delta_ci_high"])
    times = f"{repeats} repeat{'s' * (repeats > 1)}"
    return Figure(f"difference interval, {items} items, {times}, true +{truth:.3f}", covered, boards, ">= 0.95")


def power_at_mde(rng: np.random.Generator, pilots: int, boards: int, items: int, repeats: int) -> Figure:
    """Find the shift whose true difference equals the median MDE the boards state, then count stars."""
    options = LeaderboardOptions(resamples=1999)
    shift = SHIFT
    for _ in range(2):  # the stated MDE depends a little on the shift (through the discordance): settle it
        stated = []
        for _ in range(pilots):
            chance = rng.beta(*DIFFICULTY, items)
            found = family(rng, {"base": chance, "better": shifted(chance, shift)}, repeats, options)[0]
            if found["mde"] is not None:
                stated.append(found["mde"])
        mde = statistics.median(stated)
        shift = _shift_for(mde, shift)
    hits = 0
    for _ in range(boards):
        chance = rng.beta(*DIFFICULTY, items)
        hits += family(rng, {"base": chance, "better": shifted(chance, shift)}, repeats, options)[0]["significant"]
    times = f"{repeats} repeat{'s' * (repeats > 1)}"
    return Figure(f"power at the stated MDE {mde:.3f}, {items} items, {times}", hits, boards, "0.80")


def _shift_for(difference: float, guess: float) -> float:
    """The logit shift whose true difference is ``difference`` (bisection, bracketed from ``guess``)."""
    low, high = 0.0, max(guess, 0.05)
    while true_difference(high) < difference:
        high *= 2
    for _ in range(30):
        middle = (low + high) / 2
        low, high = (middle, high) if true_difference(middle) < difference else (low, middle)
    return (low + high) / 2


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench calibration", description=__doc__.splitlines()[0])
    parser.add_argument("--full", action="store_true", help="five times as many boards (about ten minutes)")
    parser.add_argument("--seed", type=int, default=20260501)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args(argv)
    scale = 5 if args.full else 1
    rng = np.random.default_rng(args.seed)
    started = time.perf_counter()
    figures: list[Figure] = []
    figures += a_a(rng, 150 * scale, 120, repeats=1)
    figures += a_a(rng, 90 * scale, 120, repeats=3)
    for repeats in (1, 3):
        figures += row_coverage(rng, 1000 * scale, repeats)
    for repeats in (1, 3):
        figures.append(difference_coverage(rng, 400 * scale, 120, repeats))
    for repeats in (1, 3):
        figures.append(power_at_mde(rng, 60 * scale, 400 * scale, 120, repeats))
    width = max(len(f.check) for f in figures)
    print(f"{'check'.ljust(width)}  {'share':>6}  95% interval     {'hits':>5}    {'':5}  target")
    for figure in figures:
        print(figure.line(width))
    print(f"{time.perf_counter() - started:.0f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump([{**asdict(f), "rate": f.rate, "interval": f.interval()} for f in figures], handle, indent=2)


if __name__ == "__main__":
    main()
