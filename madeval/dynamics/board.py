"""The leaderboard's ``dynamics``: per configuration, task and 0/1 metric, what the debates did.

Each debate's facts come from :func:`madeval.dynamics.debate.debate_facts` (the definitions are
in that module's docstring). They are summed up as the board's scores are: a share is the mean
over items of the mean over the item's repeats. An entry holds:

* ``final``: the board's score of the row (the decisions); ``first_turn_vote``: the score of the
  vote of turn 1; ``vote_by_turn``: the score of the vote of each turn 1..T, T the longest
  debate of the configuration on the task; a debate that stopped earlier carries its last turn
  forward, here and in ``unanimous_by_turn`` (the share of items whose voters all hold the same
  parsed answer in that turn);
* ``agent_transitions``: over all debates and voters, the counts ``correct_to_correct``,
  ``correct_to_wrong``, ``wrong_to_correct``, ``wrong_to_wrong`` of each voter's first-turn
  answer against its last-turn answer (unparsed is wrong);
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

import statistics
from collections import defaultdict
from typing import TYPE_CHECKING, Any, Iterable

from ..errors import UsageError
from .debate import TRANSITIONS, DebateFacts, debate_facts
from .scoring import answer_scorer

if TYPE_CHECKING:
    from ..leaderboard.data import RunData
    from ..leaderboard.options import LeaderboardOptions

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
            for config in data.configurations:
                mine = [r for r in scored if r["unit"]["config"] == config]
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
    try:
        answer_scorer(metric)
    except UsageError as error:
        return str(error)
    return None


def _dynamics(records: list[dict[str, Any]], metric: str, options: LeaderboardOptions) -> dict[str, Any]:
    """The figures of one configuration on one task and metric."""
    score = answer_scorer(metric)
    try:
        facts = [(f"{r['unit']['task']}/{r['unit']['item']}", debate_facts(r, metric, score)) for r in records]
    except UsageError as error:
        return {"reason": str(error)}
    if not any(f.turns for _, f in facts):
        return {"reason": NO_TRANSCRIPTS}
    longest = max(f.turns for _, f in facts)
    by_item: dict[str, list[DebateFacts]] = defaultdict(list)
    for item, found in facts:
        by_item[item].append(found)

    def share(value) -> dict[str, float]:
        """Per item: the mean over its repeats of ``value(facts)`` (a bool or a number)."""
        return {item: statistics.fmean(float(value(f)) for f in found) for item, found in by_item.items()}

    def mean(value) -> float:
        return statistics.fmean(share(value).values())

    transitions = dict.fromkeys(TRANSITIONS, 0)
    for _, found in facts:
        for key, count in found.transitions.items():
            transitions[key] += count
    entry: dict[str, Any] = {
        "final": mean(lambda f: f.final),
        "first_turn_vote": mean(lambda f: f.first_turn_vote_right),
        "vote_by_turn": [mean(lambda f, t=t: _carried(f.vote_right, t)) for t in range(longest)],
        "unanimous_by_turn": [mean(lambda f, t=t: _carried(f.unanimous, t)) for t in range(longest)],
        "turns": longest,
        "agent_transitions": transitions,
        "drift": mean(lambda f: f.drift),
        "recovered": mean(lambda f: f.recovered),
        "oracle_gap": mean(lambda f: f.oracle_gap),
        "unparsed": sum(f.unparsed for _, f in facts),
        "debates": len(facts),
    }
    if max(len(f.voters) for _, f in facts) <= 1:
        return {**entry, "first_turn_vote": None, "vote_by_turn": None, "unanimous_by_turn": None,
                "final_vs_first_turn_vote": None, "reason": SINGLE_AGENT}
    entry["final_vs_first_turn_vote"] = _versus(share(lambda f: f.final), share(lambda f: f.first_turn_vote_right),
                                                options)
    return entry


def _carried(values: list[bool], turn: int) -> bool:
    """``values`` at index ``turn``, the last one carried forward past the end (False when empty)."""
    return values[min(turn, len(values) - 1)] if values else False


def _versus(final: dict[str, float], vote: dict[str, float], options: LeaderboardOptions) -> dict[str, Any]:
    """The board's paired test of the decisions against the first-turn vote, with its MDE."""
    from ..leaderboard.compare import paired_test
    from ..leaderboard.power import detectable

    result, shared = paired_test(final, vote, options)
    items = sorted(final)
    power = detectable([final[k] for k in items], [vote[k] for k in items], result.test, options.alpha)
    return {"test": result.test, "method": result.method, "delta": result.delta, "p_value": result.p_value,
            "significant": result.p_value < options.alpha, "mde": power.mde, "mde_method": power.method,
            "items": shared}


def entries_with_figures(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entries that have figures (no ``reason``, or one agent's transitions)."""
    return [e for e in entries if "final" in e]
