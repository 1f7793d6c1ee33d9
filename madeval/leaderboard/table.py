"""The leaderboard itself: one row per (configuration, task or group, metric), with comparisons.

Scores are averaged over an item's repeats first, then over items. The interval follows the
options (population of questions, or this finite benchmark with the FPC); the standard deviation
is across repeats (the spread of per-repeat means, as MALLM reports). A group row combines its
tasks as the group declares (:mod:`.groups`): micro (pooled items) or macro (mean of task scores),
with its interval and tests to match. Costs and times are per item: the mean over items of the
mean over the item's repeats, i.e. of one debate.
"""

from __future__ import annotations

import statistics
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from madeval.analysis.compare import compare_family, pairs
from madeval.analysis.run_data import (
    RunData,
    cache_share,
    item_scores,
    item_spread,
    llm_seconds,
    metric_names,
    paid_share,
    strata_of,
    unit_scores,
)
from madeval.analysis.stats import Interval, enclose, mean_interval, stratified_interval
from madeval.dynamics.board import board_dynamics
from madeval.errors import UsageError
from madeval.leaderboard.cost import COSTS, MONEY, mark_fronts
from madeval.leaderboard.money import imported, load_prices, prices_entry, row_money
from madeval.leaderboard.render import shared_statement
from madeval.leaderboard.sentences import conclusions
from madeval.settings.board_options import LeaderboardOptions
from madeval.task.groups import is_declared, rule
from madeval.task.groups import name as aggregation_name

FORMAT = "madeval-leaderboard/1"
#: What the board's statement adds when it has rescored rows.
RESCORED_FAMILY = (" Rescored configurations (madeval rescore) are compared in a family of their own, corrected "
                   "apart from the run's configurations, so a rescore leaves the run's p-values as they were.")
#: Row keys that depend on timing, not on the debates (left out when comparing two runs).
TIMING_KEYS = ("wall_s_per_item", "llm_s_per_item")


def build(data: RunData, options: LeaderboardOptions) -> dict[str, Any]:
    """The leaderboard of a run as a JSON-ready dictionary (see ``FORMAT``)."""
    order = list(data.configurations)
    reference = resolve_reference(data, options.reference)
    prices = load_prices(options.prices)
    fronts = (*MONEY, *COSTS) if prices is not None else tuple(COSTS)
    scopes = [("task", task, [task]) for task in data.tasks]
    scopes += [("group", name, members) for name, members in data.groups.items()]
    rows, comparisons, per_item = [], [], {}
    for scope, name, members in scopes:
        wanted = set(members)
        records = [r for r in data.records if r["unit"]["task"] in wanted]
        by_config: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for record in records:
            by_config[record["unit"]["config"]].append(record)
        for metric in _shared_metrics(records, members):
            macro = scope == "group" and not rule(data.aggregations, name, metric).weight_by_size
            scores: dict[str, dict[str, float]] = {}
            units: dict[str, dict[tuple[str, int], float]] = {}
            family_rows = []
            for config in order:
                mine = by_config.get(config, [])
                if not mine:
                    continue
                found = item_scores(mine, metric)
                if not found:  # a metric only some configurations score (DebateConfig.metrics): no row
                    continue
                scores[config] = found
                if data.runs:  # merged runs pair on shared units (see compare_family)
                    units[config] = unit_scores(mine, metric)
                benchmark = options.interval == "benchmark"
                row = _row(data, config, scope, name, metric, mine, scores[config], benchmark, macro)
                row.update(row_money(mine, prices, row["costs_recorded"]))
                group = scope == "group"
                row["aggregation"] = aggregation_name(rule(data.aggregations, name, metric)) if group else None
                row["aggregation_declared"] = is_declared(data.aggregations, name, metric) if group else None
                family_rows.append(row)
            strata = strata_of(records) if macro else None
            family = compared(data, scores, family_rows, reference, options, strata, units if data.runs else None)
            _mark(family_rows, family, reference)
            mark_fronts(family_rows, fronts)
            for comparison in family:
                comparison.update(scope=scope, task=name, metric=metric,
                                  label_a=data.configurations[comparison["a"]]["label"],
                                  label_b=data.configurations[comparison["b"]]["label"])
            rows += family_rows
            comparisons += family
            if scope == "task":
                per_item.setdefault(name, {})[metric] = scores
    several = len(data.configurations) > 1
    apart = RESCORED_FAMILY if any(c["family"] == "rescored" for c in comparisons) else ""
    paid = paid_share(data.records)
    return {
        "format": FORMAT,
        "title": options.title or f"madeval leaderboard: {_name(data)}",
        "run": ", ".join(data.runs) if data.runs else str(data.folder),
        "fingerprint": data.run.get("fingerprint"),
        "statement": options.statement(several) + apart + "".join(
            f" {task}: {note}." for task, note in sorted((data.run.get("task_notes") or {}).items()))
        + shared_statement(paid),
        "options": {**options.to_dict(), "reference": reference},
        "configurations": data.configurations,
        "rows": rows,
        "comparisons": comparisons,
        "conclusions": conclusions(rows, comparisons, options.correction),
        "item_scores": per_item,
        "dynamics": board_dynamics(data, options),
        "records_read": {**data.reading.to_dict(), "summary": data.reading.summary()},
        "cached_calls": cache_share(data.records),
        "paid": paid,
        "prices": prices_entry(options.prices, prices, data.records) if prices is not None else None,
        **({"merged": {"runs": data.runs, "notes": data.notes}} if data.runs else {}),
    }


def compared(data: RunData, scores: dict[str, dict[str, float]], rows: list[dict[str, Any]], reference: str | None,
             options: LeaderboardOptions, strata: dict[str, str] | None,
             units: dict[str, dict[tuple[str, int], float]] | None) -> list[dict[str, Any]]:
    """The comparisons of one task (or group) and metric, in two families corrected apart.

    The run's own configurations (``family`` "run") are compared as if nothing had been rescored:
    the wanted pairs among them and their best against their runner-up, so a rescore never changes
    the p-values the board gave before it. Every comparison a rescored configuration takes part in
    is the "rescored" family, with the best of all rows against the runner-up when either of the two
    is rescored. Each comparison says its family and how many comparisons its adjusted p-value is
    adjusted over (``adjusted_over``); ``top_two`` marks the best of all rows against the runner-up.
    """
    rescored = {cid for cid in scores if data.configurations[cid].get("source") == "rescored"}
    wanted = pairs(list(scores), reference, options.compare)
    top = top_two(rows)
    found = []
    for family, best in (("run", top_two([r for r in rows if r["config"] not in rescored])), ("rescored", top)):
        mine = [pair for pair in wanted if (family == "rescored") == bool(set(pair) & rescored)]
        if best and (family == "rescored") == bool(set(best) & rescored) and best not in mine \
                and best[::-1] not in mine:  # is the best better? always asked
            mine.append(best)
        tested = compare_family(scores, mine, options, strata, units)
        for comparison in tested:
            comparison.update(family=family, adjusted_over=len(tested),
                              top_two=top is not None and {comparison["a"], comparison["b"]} == set(top))
        found += tested
    return found


def _name(data: RunData) -> str:
    """The board's name: the run folder's, or the merged folders' (``a + b``)."""
    return " + ".join(Path(run).name for run in data.runs) if data.runs else data.folder.name


def resolve_reference(data: RunData, wanted: str | None) -> str | None:
    """The reference configuration's id from a label or id; default: the run's first configuration.

    On a merged board a label or id as its own run had it (``label_in_run``, ``id_in_run``: see
    :mod:`madeval.leaderboard.merge`) names the configuration too, unless it names several: that is a
    one-line UsageError listing them, never the first taken silently."""
    if wanted is None:
        return next((cid for cid, c in data.configurations.items() if c.get("source") == "run"), None)
    exact = [cid for cid, c in data.configurations.items() if wanted in (cid, c.get("label"))]
    found = exact or [cid for cid, c in data.configurations.items()
                      if wanted in (c.get("id_in_run"), c.get("label_in_run"))]
    if len(found) == 1:
        return found[0]
    if found:
        named = ", ".join(f"{data.configurations[cid]['label']} ({cid})" for cid in found)
        raise UsageError(f"reference configuration '{wanted}' names {len(found)} configurations of the merged runs: "
                         f"{named}; pass one of these labels or ids")
    labels = ", ".join(c["label"] for c in data.configurations.values())
    raise UsageError(f"unknown reference configuration '{wanted}' (configurations: {labels})")


def _shared_metrics(records: list[dict[str, Any]], members: list[str]) -> list[str]:
    """Metrics every member task reports (a group mixing metrics only gets the shared ones)."""
    names = metric_names(records)
    for task in members:
        own = set(metric_names([r for r in records if r["unit"]["task"] == task]))
        names = [n for n in names if n in own]
    return names


def _population(data: RunData, members: list[str]) -> int | None:
    sizes = [data.task_size(task) for task in members]
    return sum(sizes) if sizes and all(sizes) else None


def _by_task(records: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        grouped[record["unit"]["task"]].append(record)
    return grouped


def _score_and_interval(data: RunData, records: list[dict[str, Any]], metric: str, scores: dict[str, float],
                        benchmark: bool, macro: bool) -> tuple[float, Interval, int | None]:
    """The row's score, its interval and the benchmark size used (macro: per task, then averaged)."""
    if not macro:
        tasks = sorted({r["unit"]["task"] for r in records})
        population = _population(data, tasks) if benchmark else None
        within, repeats = item_spread(records, metric)
        interval = mean_interval(list(scores.values()), population=population, within=within, repeats=repeats)
        return statistics.fmean(scores.values()), interval, population
    tasks = _by_task(records)
    strata = [list(item_scores(mine, metric).values()) for mine in tasks.values()]
    spreads = [item_spread(mine, metric) for mine in tasks.values()]
    sizes = [data.task_size(task) for task in tasks] if benchmark else []
    populations = sizes if sizes and all(sizes) else None
    interval = stratified_interval(strata, populations=populations, within=[w for w, _ in spreads],
                                   repeats=[k for _, k in spreads])
    score = statistics.fmean(statistics.fmean(s) for s in strata)
    return score, interval, sum(populations) if populations else None


def _repeat_scores(records: list[dict[str, Any]], metric: str, macro: bool) -> list[float]:
    """One score per repeat (pooled, or the mean of the tasks' scores for a macro row)."""
    by_repeat: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for record in records:
        if metric in record["metrics"]:
            by_repeat[record["unit"]["repeat"]].append(record)
    found = []
    for mine in by_repeat.values():
        groups = list(_by_task(mine).values()) if macro else [mine]
        found.append(statistics.fmean(
            statistics.fmean(float(r["metrics"][metric]) for r in group) for group in groups))
    return found


def _row(data: RunData, config: str, scope: str, name: str, metric: str, records: list[dict[str, Any]],
         scores: dict[str, float], benchmark: bool, macro: bool) -> dict[str, Any]:
    described = data.configurations[config]
    values = list(scores.values())
    score, interval, population = _score_and_interval(data, records, metric, scores, benchmark, macro)
    bounded = all(0.0 <= v <= 1.0 for v in values)
    # The row's score and interval must agree to the last bit: charts draw score - ci_low as an error bar.
    ci_low, ci_high = enclose(score, interval.low, interval.high, bounded)
    method = interval.method
    if benchmark and population is None:
        method += " (benchmark size not recorded: about the population)"
    _, repeats = item_spread(records, metric)
    repeat_scores = _repeat_scores(records, metric, macro)
    timed = [r for r in records if r.get("wall_s") is not None]
    # an imported configuration (MALLM, lm-eval output) recorded no calls, tokens or times: not 0 of each
    recorded = not imported(described)
    decided = Counter(r["turns"] for r in records if r["decision_success"])
    return {
        "config": config,
        "label": described["label"],
        "source": described.get("source", "run"),
        "replay_of": described.get("replay_of"),
        "scope": scope,
        "task": name,
        "metric": metric,
        "score": score,
        "bounded": bounded,
        "ci_low": ci_low,
        "ci_high": ci_high,
        "ci_method": method,
        "population": population,
        "std_repeats": statistics.stdev(repeat_scores) if len(repeat_scores) > 1 else 0.0,
        "items": len(values),
        "units": len(records),
        "repeats": max(repeats) if repeats else 0,
        "parse_failure_rate": _rate(records, "parse_failure"),
        "decision_success_rate": _rate(records, "decision_success"),
        "mean_turns": statistics.fmean(r["turns"] for r in records),
        "costs_recorded": recorded,
        "calls_per_item": per_item(records, lambda r: r["calls"]) if recorded else None,
        "tokens_per_item": per_item(records, lambda r: r["tokens"]["total"]) if recorded else None,
        "llm_s_per_item": per_item(records, llm_seconds) if recorded else None,
        "wall_s_per_item": per_item(timed, lambda r: r["wall_s"]) if timed and recorded else None,
        "oracle": any(r.get("oracle") for r in records),
        "turns_histogram": {str(k): v for k, v in sorted(Counter(r["turns"] for r in records).items())},
        "turns_decided": {str(k): v for k, v in sorted(decided.items())},
    }


def _rate(records: list[dict[str, Any]], key: str) -> float:
    return sum(bool(r[key]) for r in records) / len(records)


def per_item(records: list[dict[str, Any]], value) -> float:
    """Mean over items of the mean over the item's repeats (the cost of one debate on an item)."""
    by_item: dict[tuple[str, str], list[float]] = defaultdict(list)
    for record in records:
        by_item[(record["unit"]["task"], record["unit"]["item"])].append(float(value(record)))
    return statistics.fmean([statistics.fmean(v) for v in by_item.values()])  # a list: fmean's fast path


def top_two(rows: list[dict[str, Any]]) -> tuple[str, str] | None:
    """The (best, runner-up) configuration ids of a family by score (the first in run order on a tie);
    None with fewer than two rows."""
    ranked = sorted(range(len(rows)), key=lambda i: (-rows[i]["score"], i))
    return (rows[ranked[0]]["config"], rows[ranked[1]]["config"]) if len(rows) > 1 else None


def _mark(rows: list[dict[str, Any]], family: list[dict[str, Any]], reference: str | None) -> None:
    """Put each row's comparison with the reference on the row (this row minus the reference),
    whichever way round the family tested it (``--compare all`` pairs in run order)."""
    against = {c["a"]: c for c in family if c["b"] == reference}
    against.update({c["b"]: {**c, "delta": -c["delta"]} for c in family if c["a"] == reference})
    for row in rows:
        row["reference"] = row["config"] == reference
        found = against.get(row["config"])
        row["delta"] = found["delta"] if found else None
        row["p_value"] = found["p_value"] if found else None
        row["p_adjusted"] = found["p_adjusted"] if found else None
        row["significant"] = found["significant"] if found else None
        row["test"] = found["test"] if found else None
        row["mde"] = found["mde"] if found else None
