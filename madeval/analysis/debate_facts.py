"""What one debate did, turn by turn: each agent's answer, each turn's vote, and how they moved.

:func:`debate_facts` reads one record (a line of ``records.jsonl`` or ``rescored.jsonl``, or an
imported run's record) and scores the agents' answers with the same metric as the decision. The
definitions, which the leaderboard's ``dynamics`` (:mod:`madeval.dynamics.board`) aggregates:

* **voters**: the agents that are not neutral (moderators draft but do not vote), in agent order;
* an agent's **answer in turn t**: the parsed answer (``Message.answer``, the task's extractor
  chain applied to the solution) of its last message of that turn; ``None`` (unparsed) when that
  message has no parsed answer. An agent that did not speak in turn t (a debate decided in the
  middle of a turn) keeps its answer of the turn before (``None`` before its first message);
* the **vote of a turn**: the most common parsed answer among the voters' answers of that turn,
  ties going to the answer given first in message order, as ``collections.Counter.most_common``
  counts them (the answers are counted in the order of the messages they were read from). Answers
  are compared as the parsed text (``"B"``, ``"42"``). A turn with no parsed answer has no vote,
  and its vote is wrong;
* a turn is **unanimous** when every voter holds a parsed answer in it and all are equal;
* **final**: the record's score of the debate's decision for the metric (what the board averages);
  right when it is 1;
* **drift**: the vote is right in some turn and wrong in a later one; **recovered**: the debate
  drifts and its last turn's vote is right;
* **oracle gap**: some voter's answer was right in some turn, but the final decision is wrong;
* **transitions**: each voter's first-turn answer against its last-turn answer, right or wrong
  (unparsed is wrong): ``correct_to_correct``, ``correct_to_wrong``, ``wrong_to_correct``,
  ``wrong_to_wrong``; a voter that never spoke (a debate decided before its turn) has none;
* **unparsed**: the (turn, voter) answers read from a message without a parsed answer (a voter
  that has not spoken yet holds no answer, which is not counted here).

A score is 0/1 here: an answer is right when the metric scores it 1. The metric is only asked
about answers that parsed, once per distinct answer of a debate, and not about the decision's
own answer (``record["prediction"]``), whose score the record holds.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from madeval.analysis.answer_scoring import answer_scorer
from madeval.errors import UsageError

#: Scores one parsed answer against a record's gold target (``record["target"]``): 1 right, 0 wrong.
AnswerScore = Callable[[str, Any], float]

TRANSITIONS = ("correct_to_correct", "correct_to_wrong", "wrong_to_correct", "wrong_to_wrong")
#: Turns read at most: a stored turn count is input like any other, and one debate must not cost
#: unbounded memory (madeval's own debates stop at ``max_turns``; MALLM's at 7 by default).
MAX_TURNS = 1_000


@dataclass(frozen=True)
class TurnAnswers:
    """The answers a debate's voters held, per turn, read from its transcript (no scores yet).

    ``turns[t - 1]`` lists turn t's ``(agent, answer)`` pairs in message order (the order of the
    messages the answers were read from); a voter without any message up to turn t is left out.
    It is small (no message text), so the leaderboard keeps it when it drops a record's transcript.
    """

    voters: tuple[int, ...]
    turns: tuple[tuple[tuple[int, str | None], ...], ...]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: ``{"voters": [...], "turns": [[[agent, answer], ...], ...]}``."""
        return {"voters": list(self.voters), "turns": [[list(pair) for pair in turn] for turn in self.turns]}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TurnAnswers:
        """Read back :meth:`to_dict`."""
        return cls(tuple(data["voters"]), tuple(tuple((int(a), s) for a, s in turn) for turn in data["turns"]))


def turn_answers(record: Mapping[str, Any]) -> TurnAnswers:
    """The answers each voter held in each turn of the record's debate (see the module docstring).

    Reads ``record["transcript"]`` (agents, messages, turns_used); a record whose transcript was
    dropped by the leaderboard carries the same as ``record["turn_answers"]``. The debate's turns
    are 1..``turns_used`` (without it, up to its last voter's message), at most :data:`MAX_TURNS`.
    """
    if "turn_answers" in record and "transcript" not in record:
        return TurnAnswers.from_dict(record["turn_answers"])
    transcript = record.get("transcript")
    transcript = transcript if isinstance(transcript, dict) else {}
    voters = tuple(int(a.get("index", position)) for position, a in enumerate(transcript.get("agents") or [])
                   if not a.get("neutral"))
    messages = transcript.get("messages") or []
    last_turn = _turn({"turn": transcript.get("turns_used")}) or max(
        (_turn(m) for m in messages if m.get("agent") in voters), default=0)
    last_turn = min(last_turn, MAX_TURNS)
    held: dict[int, tuple[int, str | None]] = {}  # agent -> (position of the message, answer)
    by_turn: dict[int, list[tuple[int, Mapping[str, Any]]]] = {}
    for position, message in enumerate(messages):
        if message.get("agent") in voters:
            by_turn.setdefault(_turn(message), []).append((position, message))
    turns = []
    for turn in range(1, last_turn + 1):
        for position, message in by_turn.get(turn, []):  # an agent's last message of the turn wins
            held[int(message["agent"])] = (position, _answer(message))
        ordered = sorted(held.items(), key=lambda entry: entry[1][0])
        turns.append(tuple((agent, answer) for agent, (_, answer) in ordered))
    return TurnAnswers(voters, tuple(turns))


def _turn(message: Mapping[str, Any]) -> int:
    try:
        return int(message.get("turn") or 0)
    except (TypeError, ValueError):
        return 0


def _answer(message: Mapping[str, Any]) -> str | None:
    answer = message.get("answer")
    if answer is None:
        return None
    text = str(answer)
    return text if text.strip() else None


def turn_vote(answers: tuple[tuple[int, str | None], ...] | list[tuple[int, str | None]]) -> str | None:
    """The vote of one turn: the most common parsed answer, ties to the first in message order."""
    counted = Counter(answer for _, answer in answers if answer is not None)
    return counted.most_common(1)[0][0] if counted else None


@dataclass
class DebateFacts:
    """What one debate did (see the module docstring for each definition).

    Lists indexed by turn hold turn 1 first; ``answers[t][i]`` is voter ``voters[i]``'s answer in
    turn ``t + 1`` and ``answer_right[t][i]`` whether it is right.
    """

    metric: str
    voters: list[int]
    answers: list[list[str | None]]
    answer_right: list[list[bool]]
    votes: list[str | None]
    vote_right: list[bool]
    unanimous: list[bool]
    final: float
    final_right: bool
    first_turn_vote_right: bool
    drift: bool
    recovered: bool
    oracle_gap: bool
    unparsed: int
    transitions: dict[str, int]
    #: per turn, whether each voter has spoken by then (False: its ``None`` is no answer, not unparsed)
    spoken: list[list[bool]]

    @property
    def turns(self) -> int:
        """How many turns the debate had."""
        return len(self.votes)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready (for a viewer or an export's sample metadata): each field (lists copied, as
        ``dataclasses.asdict`` would) and ``turns``. Written out because ``asdict``'s generic deep
        copy was half of the viewer's time per debate."""
        return {
            "metric": self.metric, "voters": list(self.voters), "answers": [list(row) for row in self.answers],
            "answer_right": [list(row) for row in self.answer_right], "votes": list(self.votes),
            "vote_right": list(self.vote_right), "unanimous": list(self.unanimous), "final": self.final,
            "final_right": self.final_right, "first_turn_vote_right": self.first_turn_vote_right,
            "drift": self.drift, "recovered": self.recovered, "oracle_gap": self.oracle_gap,
            "unparsed": self.unparsed, "transitions": dict(self.transitions),
            "spoken": [list(row) for row in self.spoken], "turns": self.turns,
        }


def answer_judge(record: Mapping[str, Any], metric: str, score: AnswerScore) -> Callable[[str | None], bool]:
    """``answer -> right?`` for the answers of ``record``'s debate: an answer is right when ``score``
    gives it 1 against ``record["target"]``; None (unparsed) is wrong. Each distinct answer is scored
    once, and the decision's own answer (``record["prediction"]``) not at all: the record holds its
    score for ``metric`` (a check costs 5 ms for math). Raises :class:`madeval.errors.UsageError`
    when the record has no score for ``metric``."""
    target = record.get("target")
    scored: dict[str, bool] = {}
    if isinstance(record.get("prediction"), str):
        scored[record["prediction"]] = _final(record, metric) == 1.0

    def right(answer: str | None) -> bool:
        if answer is None:
            return False
        if answer not in scored:
            scored[answer] = float(score(answer, target)) == 1.0
        return scored[answer]

    return right


def debate_facts(record: Mapping[str, Any], metric: str = "accuracy", score: AnswerScore | None = None,
                 right: Callable[[str | None], bool] | None = None) -> DebateFacts:
    """The per-debate dynamics of one record, scored with ``metric``.

    ``record`` is a record as madeval stores it (with its ``transcript``, or with the compact
    ``turn_answers`` the leaderboard keeps); ``metric`` names the score of the decision in
    ``record["metrics"]`` (``final``); ``score`` scores each parsed answer against
    ``record["target"]`` with that metric, 1 right and 0 wrong (default: the registered metric of
    that name, :func:`madeval.analysis.answer_scoring.answer_scorer`). A record that lacks the metric, or a
    metric that cannot score an answer alone, raises :class:`madeval.errors.UsageError`. ``right``,
    instead of ``score``, is the debate's :func:`answer_judge`, for a caller that judges more of
    the debate's answers with the same memory (the viewer marks every message).
    """
    final = _final(record, metric)
    if right is None:
        right = answer_judge(record, metric, score or answer_scorer(metric))
    held = turn_answers(record)
    by_agent = [dict(turn) for turn in held.turns]
    answers = [[turn.get(agent) for agent in held.voters] for turn in by_agent]
    spoken = [[agent in turn for agent in held.voters] for turn in by_agent]
    answer_right = [[right(a) for a in row] for row in answers]
    votes = [turn_vote(turn) for turn in held.turns]
    vote_right = [right(v) for v in votes]
    unanimous = [bool(row) and None not in row and len(set(row)) == 1 for row in answers]
    final_right = final == 1.0
    drift = any(vote_right[i] and not all(vote_right[i + 1:]) for i in range(len(vote_right)))
    transitions = dict.fromkeys(TRANSITIONS, 0)
    if answers:
        for first, last, spoke in zip(answer_right[0], answer_right[-1], spoken[-1]):
            if not spoke:
                continue
            transitions[f"{'correct' if first else 'wrong'}_to_{'correct' if last else 'wrong'}"] += 1
    return DebateFacts(
        metric=metric, voters=list(held.voters), answers=answers, answer_right=answer_right, votes=votes,
        vote_right=vote_right, unanimous=unanimous, final=final, final_right=final_right,
        first_turn_vote_right=bool(vote_right) and vote_right[0],
        drift=drift, recovered=drift and vote_right[-1],
        oracle_gap=not final_right and any(any(row) for row in answer_right),
        unparsed=sum(a is None and said for row, said_row in zip(answers, spoken) for a, said in zip(row, said_row)),
        transitions=transitions, spoken=spoken,
    )


def _final(record: Mapping[str, Any], metric: str) -> float:
    value = (record.get("metrics") or {}).get(metric)
    if value is None:
        unit = record.get("unit") or {}
        raise UsageError(f"record {unit.get('key', '?')} has no score for metric {metric}")
    return float(value)
