"""The leaderboard's ``dynamics``: per configuration, task and 0/1 metric, what the debates did.

Each debate's facts come from :func:`madeval.analysis.debate_facts.debate_facts` (the definitions are
in that module's docstring). They are summed up as the board's scores are: a share is the mean
over items of the mean over the item's repeats. An entry holds:

* ``final``: the board's score of the row (the decisions); ``first_turn_vote``: the score of the
  vote of turn 1; ``vote_by_turn``: the score of the vote of each turn 1..T, T the longest
  debate of the configuration on the task; a debate that stopped earlier carries its last turn
  forward, here and in ``unanimous_by_turn`` (the share of items whose voters all hold the same
  parsed answer in that turn);
* ``agent_transitions``: over all debates and voters, the counts ``correct_to_correct``,
  ``correct_to_wrong``, ``wrong_to_correct``, ``wrong_to_wrong`` of each voter's first-turn
  answer against its last-turn answer (unparsed is wrong; a voter that never spoke has none);
* ``drift`` (the vote is right in some turn and wrong in a later one), ``recovered`` (drift and
  the last vote right), ``oracle_gap`` (some voter right in some turn, the decision wrong): shares
  of items; ``unparsed``: the (debate, turn, voter) answers without a parsed answer;
* ``final_vs_first_turn_vote``: the board's paired test of the decisions against the first-turn
  vote on the same items (exact McNemar when both are 0/1 per item: one repeat, or repeats that
  agree), with ``delta`` (final minus vote), ``p_value`` and ``mde``.

Only 0/1 metrics have dynamics (an answer is right or wrong); an entry for any other metric, or
one whose debates carry no transcript, has ``reason`` instead of figures. A single-agent
configuration has its transitions, drift and oracle gap, but no vote to compare: its vote and
unanimity keys are None and ``reason`` says why.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from madeval.analysis.answer_scoring import answer_scorer, why_no_scorer
from madeval.analysis.debate_facts import TRANSITIONS, DebateFacts, debate_facts
from madeval.errors import UsageError

if TYPE_CHECKING:
    from madeval.analysis.run_data import RunData
    from madeval.settings.board_options import LeaderboardOptions

NOT_BINARY = "its scores are not all 0 or 1, so an answer is not simply right or wrong"
NO_TRANSCRIPTS = "its records carry no transcripts (no agent answers to read)"
SINGLE_AGENT = "one agent: no vote of several agents to compare with the decision"


def board_dynamics(data: RunData, options: LeaderboardOptions) -> list[dict[str, Any]]:
    """One entry per (configuration, task, metric) of ``data`` in board order (see the module docstring)."""
    entries = []
    for task in data.tasks:
        records = [r for r in data.records if r["unit"]["task"] == task]
        for metric in _metrics(records):
            scored = [r for r in records if metric in r["metrics"]]
            reason = _metric_reason(scored, metric)
            by_config: dict[str, list[dict[str, Any]]] = {}
            for record in scored:
                by_config.setdefault(record["unit"]["config"], []).append(record)
            for config in data.configurations:
                mine = by_config.get(config, [])
                if not mine:
                    continue
                head = {"config": config, "label": data.configurations[config]["label"], "task": task,
                        "metric": metric, "items": len({r["unit"]["item"] for r in mine})}
                entries.append({**head, **(_dynamics(mine, metric, options) if reason is None
                                           else {"reason": reason})})
    return entries


def _metrics(records: list[dict[str, Any]]) -> list[str]:
    names: dict[str, None] = {}
    for record in records:
        names.update(dict.fromkeys(record["metrics"]))
    return list(names)


def _metric_reason(records: list[dict[str, Any]], metric: str) -> str | None:
    """Why ``metric`` has no dynamics on these records (None: it has)."""
    if any(float(r["metrics"][metric]) not in (0.0, 1.0) for r in records):
        return NOT_BINARY
    return why_no_scorer(metric)


def _dynamics(records: list[dict[str, Any]], metric: str, options: LeaderboardOptions) -> dict[str, Any]:
    """The figures of one configuration on one task and metric."""
    score = answer_scorer(metric)
    if not any(isinstance(r.get("transcript"), dict) or "turn_answers" in r for r in records):
        return {"reason": NO_TRANSCRIPTS}  # what the facts would find (no turns), without reading each debate
    try:
        facts = [debate_facts(r, metric, score) for r in records]
    except UsageError as error:
        return {"reason": str(error)}
    if not any(f.turns for f in facts):
        return {"reason": NO_TRANSCRIPTS}
    longest = max(f.turns for f in facts)
    means = _item_means(records, facts, longest)
    overall = means.values.mean(axis=0)
    transitions = dict.fromkeys(TRANSITIONS, 0)
    for found in facts:
        for key, count in found.transitions.items():
            transitions[key] += count
    entry: dict[str, Any] = {
        "final": float(overall[0]),
        "first_turn_vote": float(overall[1]),
        "vote_by_turn": [float(v) for v in overall[FIXED:FIXED + longest]],
        "unanimous_by_turn": [float(v) for v in overall[FIXED + longest:]],
        "turns": longest,
        "agent_transitions": transitions,
        "drift": float(overall[2]),
        "recovered": float(overall[3]),
        "oracle_gap": float(overall[4]),
        "unparsed": sum(f.unparsed for f in facts),
        "debates": len(facts),
    }
    if max(len(f.voters) for f in facts) <= 1:
        return {**entry, "first_turn_vote": None, "vote_by_turn": None, "unanimous_by_turn": None,
                "final_vs_first_turn_vote": None, "reason": SINGLE_AGENT}
    entry["final_vs_first_turn_vote"] = _versus(means.column(0), means.column(1), options)
    return entry


#: The per-debate values averaged before the turns: final, first-turn vote, drift, recovered, oracle gap.
FIXED = 5


class _ItemMeans:
    """Per item (``task/item``), the mean over its repeats of each per-debate value (one row per item)."""

    def __init__(self, items: list[str], values):
        self.items, self.values = items, values

    def column(self, index: int) -> dict[str, float]:
        return {item: float(value) for item, value in zip(self.items, self.values[:, index])}


def _item_means(records: list[dict[str, Any]], facts: list[DebateFacts], longest: int) -> _ItemMeans:
    """Each debate's values (:data:`FIXED`, then the vote's score and unanimity in each turn 1..longest,
    carried forward past the debate's end) averaged over the repeats of each item."""
    import numpy as np  # loaded with the board's statistics anyway; not on a run's start-up path

    items = [f"{r['unit']['task']}/{r['unit']['item']}" for r in records]
    order = list(dict.fromkeys(items))
    position = {item: index for index, item in enumerate(order)}
    rows = np.array([[f.final, f.first_turn_vote_right, f.drift, f.recovered, f.oracle_gap,
                      *(_carried(f.vote_right, t) for t in range(longest)),
                      *(_carried(f.unanimous, t) for t in range(longest))] for f in facts], dtype=float)
    which = np.array([position[item] for item in items])
    sums = np.zeros((len(order), rows.shape[1]))
    np.add.at(sums, which, rows)
    return _ItemMeans(order, sums / np.bincount(which, minlength=len(order))[:, None])


def _carried(values: list[bool], turn: int) -> bool:
    """``values`` at index ``turn``, the last one carried forward past the end (False when empty)."""
    return values[min(turn, len(values) - 1)] if values else False


def _versus(final: dict[str, float], vote: dict[str, float], options: LeaderboardOptions) -> dict[str, Any]:
    """The board's paired test of the decisions against the first-turn vote, with its MDE."""
    from madeval.analysis.compare import paired_test  # numpy, scipy and statsmodels behind them: only for a board
    from madeval.analysis.power import detectable

    result, shared = paired_test(final, vote, options)
    items = sorted(final)
    power = detectable([final[k] for k in items], [vote[k] for k in items], result.test, options.alpha)
    return {"test": result.test, "method": result.method, "delta": result.delta, "p_value": result.p_value,
            "significant": result.p_value < options.alpha, "mde": power.mde, "mde_method": power.method,
            "items": shared}
