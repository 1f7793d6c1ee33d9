"""The board's dynamics as shown: a Markdown section and an HTML section, "Did the debate beat its
first-turn vote?", one line per configuration, task and 0/1 metric (see :mod:`.board`)."""

from __future__ import annotations

import html
from typing import Any

from madeval.dynamics.board import SINGLE_AGENT
from madeval.util.shown_text import markdown_cell

TITLE = "Did the debate beat its first-turn vote?"
LEGEND = (
    "An agent's answer in a turn is the answer parsed from its last message of that turn (an agent that did not "
    "speak keeps its answer of the turn before); the vote of a turn is the most common parsed answer among the "
    "voting agents, ties going to the answer given first in message order, and a turn without a parsed answer "
    "votes wrong. Scores are on the metric's own scale (0 to 1). First-turn vote: the score of the vote of "
    "turn 1, which costs no debate; final: the score of the debate's decision (the board's score); "
    "final − vote: their difference, with the board's paired test on the same items (exact McNemar for 0/1 "
    "scores; not corrected across configurations; * = p below alpha) and its MDE. Vote by turn: the vote's "
    "score in each turn, a debate that stopped earlier carrying its last turn forward; unanimous: the share of "
    "items whose agents all hold the same parsed answer, in turn 1 and in the last turn; right→wrong and "
    "wrong→right: agents whose first-turn answer was right and last-turn answer wrong, and the reverse "
    "(unparsed is wrong; an agent that never spoke has none); drift: the share of items whose vote is right in "
    "some turn and wrong in a later one; recovered: drifted and right again in the last turn; oracle gap: some "
    "agent held the right answer in some turn but the decision is wrong; unparsed: agents' answers that could "
    "not be read. Shares average an item's repeats first. 0/1 metrics only."
)
COLUMNS = ("configuration", "task", "metric", "items", "first-turn vote", "final", "final − vote", "test, p",
           "MDE (80% power)", "vote by turn", "unanimous (first → last)", "right→wrong", "wrong→right", "drift",
           "recovered", "oracle gap", "unparsed")


def _score(value: float | None, sign: bool = False) -> str:
    """A score (or a difference of scores) on the metric's own 0-1 scale, as the board shows scores."""
    return "–" if value is None else f"{value:{'+' if sign else ''}.3f}"


def _share(value: float | None) -> str:
    """A share of items, in percent."""
    return "–" if value is None else f"{100 * value:.1f}%"


def _compared(versus: dict[str, Any] | None) -> list[str]:
    """The difference with its significance mark, the test with its p, and the MDE; dashes without a test."""
    if not versus:
        return ["–", "–", "–"]
    return [f"{_score(versus['delta'], sign=True)}{'*' if versus['significant'] else ''}",
            f"{_test(versus['test'])}, p={versus['p_value']:.3g}",
            "–" if versus["mde"] is None else f"±{versus['mde']:.3f}"]


def cells(entry: dict[str, Any]) -> list[str]:
    """One entry's cells in :data:`COLUMNS` order."""
    by_turn, unanimous = entry.get("vote_by_turn"), entry.get("unanimous_by_turn")
    moves = entry["agent_transitions"]
    return [
        entry["label"], entry["task"], entry["metric"], str(entry["items"]), _score(entry.get("first_turn_vote")),
        _score(entry["final"]), *_compared(entry.get("final_vs_first_turn_vote")),
        " / ".join(_score(v) for v in by_turn) if by_turn else "–",
        f"{_share(unanimous[0])} → {_share(unanimous[-1])}" if unanimous else "–",
        str(moves["correct_to_wrong"]), str(moves["wrong_to_correct"]), _share(entry["drift"]),
        _share(entry["recovered"]), _share(entry["oracle_gap"]), str(entry["unparsed"]),
    ]


def _test(test: str) -> str:
    return {"mcnemar": "McNemar"}.get(test, test)


def without(entries: list[dict[str, Any]]) -> list[str]:
    """One sentence per (task, metric, reason) of the entries without figures or without a vote."""
    reasons: dict[tuple[str, str, str], list[str]] = {}
    for entry in entries:
        if "reason" in entry:
            reasons.setdefault((entry["task"], entry["metric"], entry["reason"]), []).append(entry["label"])
    return [f"No {'vote comparison' if reason == SINGLE_AGENT else 'dynamics'} for {task}, {metric} "
            f"({', '.join(labels)}): {reason}." for (task, metric, reason), labels in reasons.items()]


def markdown(entries: list[dict[str, Any]]) -> str:
    """The section as Markdown ("" when the board has no dynamics at all)."""
    if not entries:
        return ""
    shown = [e for e in entries if "final" in e]
    text = f"{TITLE} {LEGEND}\n\n" if shown else f"{TITLE}\n\n"  # the legend explains a table
    if shown:
        text += "| " + " | ".join(COLUMNS) + " |\n|" + "---|" * 3 + "---:|" * (len(COLUMNS) - 3) + "\n"
        text += "".join("| " + " | ".join(markdown_cell(c) for c in cells(e)) + " |\n" for e in shown)
    notes = without(entries)
    if notes:  # labels are text: no pipe, line break or raw HTML of theirs changes the Markdown
        text += ("\n" if shown else "") + "".join(f"{markdown_cell(line)}\n" for line in notes)
    return text


def line(entry: dict[str, Any]) -> str:
    """One entry as one line of text: its configuration, task and every figure."""
    head = f"{entry['label']} on {entry['task']} ({entry['metric']}, {entry['items']} items)"
    moves = entry["agent_transitions"]
    tail = (f"agents right→wrong {moves['correct_to_wrong']}, wrong→right {moves['wrong_to_correct']}; "
            f"drift {_share(entry['drift'])}, recovered {_share(entry['recovered'])}; "
            f"oracle gap {_share(entry['oracle_gap'])}; {entry['unparsed']} unparsed answers.")
    versus = entry.get("final_vs_first_turn_vote")
    if not versus:
        return f"{head}: final {_score(entry['final'])}; no vote to compare (one agent); {tail}"
    delta, test, mde = _compared(versus)
    unanimous = entry["unanimous_by_turn"]
    return (f"{head}: first-turn vote {_score(entry['first_turn_vote'])} → final {_score(entry['final'])} "
            f"({delta}, {test.replace(',', '')}, MDE {mde}); vote by turn "
            f"{' / '.join(_score(v) for v in entry['vote_by_turn'])}; unanimous {_share(unanimous[0])} → "
            f"{_share(unanimous[-1])}; {tail}")


def html_section(entries: list[dict[str, Any]]) -> str:
    """The section as HTML, one line per configuration (every text escaped); "" without dynamics."""
    if not entries:
        return ""
    lines = [f"<li>{html.escape(line(e))}</li>" for e in entries if "final" in e]
    parts = [f"<h2>{html.escape(TITLE)}</h2>" + (f"<p class='note'>{html.escape(LEGEND)}</p>" if lines else "")]
    if lines:
        parts.append(f"<ul class='dynamics'>{''.join(lines)}</ul>")
    parts += [f"<p>{html.escape(text)}</p>" for text in without(entries)]
    return "\n".join(parts)
