"""Regression check: is any configuration significantly worse than in a stored baseline?

The baseline is a ``leaderboard.json`` (committed under ``leaderboards/``). Each of its task rows is
matched to the run's row for the same configuration (by id, else by label), task and metric, and
the two are compared on the items both scored: a one-sided paired test (exact McNemar for 0/1
scores, else the paired permutation or bootstrap test) of "run < baseline", corrected across all
rows together (Holm by default). A row regresses when its adjusted p-value is below alpha; a
baseline row the run lacks is reported as missing. Either fails the check.

What the check can see (:func:`detectable`): with the exact tests, a row whose items only move down
has p = 2^-k for k items that score lower, so it is flagged once k reaches the smallest k with
``m 2^-k < alpha`` (m rows under Holm or BH, 1 without correction). The smallest detectable drop
of a row with n items and R repeats is then ``k / (R n)`` (k items, each lower in one repeat) to
``k / n`` (k items lower in every repeat); items that also move up need larger drops.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from madeval.analysis.compare import paired_test
from madeval.analysis.stats import adjust
from madeval.leaderboard.render import points
from madeval.settings.board_options import CORRECTION_NAMES, LeaderboardOptions


@dataclass
class Check:
    """The outcome of a regression check: one entry per baseline row, and the verdict."""

    deltas: list[dict[str, Any]]

    @property
    def failed(self) -> bool:
        """True when a row regressed or is missing."""
        return any(d["status"] in ("regressed", "missing") for d in self.deltas)


def check(run: dict[str, Any], baseline: dict[str, Any], options: LeaderboardOptions) -> Check:
    """Compare the ``run`` leaderboard with the ``baseline`` leaderboard."""
    deltas = []
    for row in (r for r in baseline["rows"] if r["scope"] == "task"):
        config = _match(run, baseline, row["config"])
        entry = {"label": row["label"], "task": row["task"], "metric": row["metric"], "repeats": row.get("repeats"),
                 "baseline": row["score"], "run": None, "delta": None, "items": 0, "test": None,
                 "p_value": None, "p_adjusted": None, "status": "missing", "bounded": row.get("bounded", True)}
        before = baseline["item_scores"].get(row["task"], {}).get(row["metric"], {}).get(row["config"])
        after = run["item_scores"].get(row["task"], {}).get(row["metric"], {}).get(config) if config else None
        if before and after and set(before) & set(after):
            result, shared = paired_test(after, before, options, alternative="less")
            keys = set(before) & set(after)
            entry.update(run=sum(after[k] for k in keys) / len(keys),
                         baseline=sum(before[k] for k in keys) / len(keys),
                         delta=result.delta, items=shared, test=result.test, p_value=result.p_value)
        deltas.append(entry)
    tested = [d for d in deltas if d["p_value"] is not None]
    for entry, adjusted in zip(tested, adjust([d["p_value"] for d in tested], options.correction)):
        entry["p_adjusted"] = adjusted
        entry["status"] = "regressed" if adjusted < options.alpha else "ok"
    return Check(deltas)


def _match(run: dict[str, Any], baseline: dict[str, Any], config: str) -> str | None:
    """The run's configuration id for a baseline configuration: the same id, else the same label."""
    if config in run["configurations"]:
        return config
    label = baseline["configurations"].get(config, {}).get("label")
    return next((cid for cid, c in run["configurations"].items() if c.get("label") == label), None)


def markdown(result: Check, options: LeaderboardOptions) -> str:
    """The table of deltas and the verdict."""
    lines = [
        "| configuration | task | metric | baseline | run | Δ | items | test | p (one-sided) | p adjusted | status |",
        "|---|---|---|---:|---:|---:|---:|---|---:|---:|---|",
    ]
    for d in result.deltas:
        run = "–" if d["run"] is None else points(d, d["run"])
        delta = "–" if d["delta"] is None else points(d, d["delta"], sign=True)
        p = "–" if d["p_value"] is None else f"{d['p_value']:.3g}"
        adjusted = "–" if d["p_adjusted"] is None else f"{d['p_adjusted']:.3g}"
        lines.append(f"| {d['label']} | {d['task']} | {d['metric']} | {points(d, d['baseline'])} | {run} | {delta} "
                     f"| {d['items']} | {d['test'] or '–'} | {p} | {adjusted} | {d['status']} |")
    detect = detectable(result, options)
    regressed = sum(d["status"] == "regressed" for d in result.deltas)
    missing = sum(d["status"] == "missing" for d in result.deltas)
    verdict = (f"FAIL: {regressed} regressed, {missing} missing" if result.failed
               else "PASS: no configuration is significantly worse than the baseline")
    return "\n".join(lines) + (
        f"\n\nOne-sided paired tests of run < baseline on shared items, "
        f"{CORRECTION_NAMES[options.correction]} correction across all rows, "
        f"alpha {options.alpha:g}.\n{detect}{verdict}\n"
    )


def items_needed(rows: int, alpha: float, correction: str) -> int:
    """The fewest items that must all score lower (none higher) for an exact test to flag a row."""
    m = 1 if correction == "none" else max(rows, 1)
    k = 1
    while m * 0.5**k >= alpha:
        k += 1
    return k


def detectable(result: Check, options: LeaderboardOptions) -> str:
    """One line per (items, repeats) of the tested rows: the smallest drop the check can flag."""
    tested = [d for d in result.deltas if d["p_value"] is not None]
    if not tested:
        return ""
    k = items_needed(len(tested), options.alpha, options.correction)
    lines = []
    for items, repeats in sorted({(d["items"], d.get("repeats") or 1) for d in tested}):
        whole = f"{k / items:.3f}"  # on the 0-1 scale of the board's scores (see render)
        if repeats > 1:
            whole = (f"{k / (repeats * items):.3f} (each lower in one of {repeats} repeats) "
                     f"to {whole} (lower in every repeat)")
        lines.append(
            f"Detectable drop ({items} items, {repeats} repeat{'s' if repeats > 1 else ''}, exact tests): a row is "
            f"flagged only when at least {k} items score lower and none higher, a drop of at least {whole}; "
            "items that also move up need a larger drop.\n"
        )
    return "".join(lines)


def github_markdown(result: Check, options: LeaderboardOptions, commit: str | None = None) -> str:
    """The check as a GitHub Actions job summary: a verdict heading, then :func:`markdown`'s table
    and notes (GitHub renders Markdown tables in ``$GITHUB_STEP_SUMMARY``)."""
    verdict = "❌ FAIL" if result.failed else "✅ PASS"
    at = f" at `{commit[:10]}`" if commit else ""
    return f"## madeval leaderboard check{at}: {verdict}\n\n" + markdown(result, options) + "\n"
