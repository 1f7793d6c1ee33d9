"""Voting deciders (Voting or Consensus?, Section 3.2 and Appendix C; prompts from the MALLM
paper, Figures 26-29).

Rules shared by every voting decider:

* Votes are held after every turn from turn ``vote_after_turns`` on (default 3, after Du et al.).
* Each voting agent's final solution is collected (see :mod:`madeval.builtins.finals`) and listed as
  "Solution 1..N" in agent order; every voting agent then casts a ballot, all in parallel.
* A ballot that cannot be read is re-asked up to ``max_reasks`` times (default 2) with the problem
  stated; if it still cannot be read, the agent abstains. Every raw reply, the parsed ballot, a
  note on how it was read (e.g. a shifted 0-based ranking) and abstentions are recorded in a
  ``vote`` event.
* Numbers in a ballot are whole numbers (see :func:`numbers_in`): "Solution 2." is 2, "2.5" is
  no solution number, and list markers ("1. Solution 3") are not votes.
* Solutions that give the same answer (same extracted answer, or the same text) are one answer:
  their totals are added up, and the answer with the highest sum wins, returned as its first
  solution on the ballot. So two agents who split their points between two solutions with
  answer B outvote one agent who gives all of them to answer C. A tie between different
  answers (or no readable ballot) means one more turn and a new vote.
  At ``max_turns`` without a winner the first agent's solution is returned with
  ``success = False``.

Totals: simple voting counts one vote per ballot; approval voting one per approved solution;
ranked voting gives Borda points, ``N - position`` for each listed solution (N solutions, first
place = position 0; unlisted solutions get 0); cumulative voting adds the points given (``points``
to distribute, default 10 as in the prompt of Figure 28, although the paper's text says 25;
a ballot may give fewer points but not more). Consensus voting lists the distinct solutions
(merged by extracted answer) and counts one vote per ballot, from turn 1 by default.

With structured answers a ballot is asked in its voting rule's schema (:attr:`Voting.ballot_kind`:
a number, a list of numbers or points per number); the field is read by the same ballot reader
as a text ballot, and a reply without it is read as text.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any

from madeval.builtins.finals import final_solutions
from madeval.builtins.from_turn import FromTurnDecider
from madeval.builtins.personas import parse_json_object
from madeval.core.components import DebateLLM, DebateState
from madeval.core.hookspecs import hookimpl
from madeval.core.transcript import Decision
from madeval.debate.prompts import madeval as own
from madeval.debate.prompts import mallm
from madeval.llm.structured import NUMBER, NUMBERS, POINTS, ReplySchema, as_text, reply_in, structured_fields

# A whole number: not part of a decimal ("2.5"), but a full stop after it ends a sentence ("2.").
INTEGER = re.compile(r"(?<![\d.])-?\d+(?!\d|\.\d)")
LEADING_NUMBER = re.compile(r"\s*\**\s*(?:solution\s*)?#?(\d+)(?!\d|\.\d)", re.IGNORECASE)
# A list marker ("1. ", "2) ", "**3.** ") at the start of a line that goes on to name a number.
ENUMERATOR = re.compile(r"^[ \t]*\**\d+[.)]\**[ \t]+(?=[^\n]*\d)", re.MULTILINE)
NO_SOLUTION = "(no solution)"
ZERO_BASED = "0-based ranking shifted by one"


def numbers_in(reply: str) -> list[int]:
    """The whole numbers in a ballot reply, in order, without list markers and decimals.

    A full stop after a number ends the sentence ("Solution 2." is 2); a decimal ("2.5") is no
    solution number; a line that starts with "1." or "2)" and names another number further on
    is a list item, and its marker is dropped ("1. Solution 3" is 3).
    """
    return [int(n) for n in INTEGER.findall(ENUMERATOR.sub("", reply))]


class Voting(FromTurnDecider):
    """Base of the voting deciders: collect solutions, collect ballots, tally, record."""

    template = mallm.VOTE_SIMPLE
    #: A ballot's JSON schema with structured answers: its one field after the reasoning.
    ballot_kind = ReplySchema.of("vote", vote=NUMBER)
    start_option = "vote_after_turns"
    acts = ("votes", "vote")

    def __init__(self, vote_after_turns: int = 3, max_reasks: int = 2):
        super().__init__(vote_after_turns)
        if max_reasks < 0:
            raise ValueError("max_reasks must be >= 0")
        self.max_reasks = max_reasks

    def read_ballot(self, reply: str, count: int) -> tuple[Any, str | None]:
        """``(ballot, note)`` read from ``reply`` for ``count`` solutions.

        ``note`` says how the reply was interpreted when that is worth recording (else ``None``);
        a ValueError says what is wrong with an unreadable reply.
        """
        leading = LEADING_NUMBER.match(ENUMERATOR.sub("", reply))
        if leading and 1 <= int(leading.group(1)) <= count:
            return int(leading.group(1)), None
        valid = list(dict.fromkeys(n for n in numbers_in(reply) if 1 <= n <= count))
        if len(valid) != 1:
            raise ValueError(f"expected one solution number between 1 and {count}")
        return valid[0], None

    def scores(self, ballot: Any, count: int) -> dict[int, float]:
        """What one ballot adds to each solution (numbered from 1)."""
        return {ballot: 1.0}

    def prompt_fields(self) -> dict[str, Any]:
        """Extra fields of the vote prompt."""
        return {}

    async def candidates(self, state: DebateState, llm: DebateLLM, voters: list[int]) -> list[tuple[list[int], str]]:
        """The solutions on the ballot: (agents who proposed it, text), numbered from 1."""
        finals = await final_solutions(state, llm, voters)
        return [([agent], finals[agent] or NO_SOLUTION) for agent in voters]

    def deciding_steps(self) -> int:
        """One round of ballots (cast at once), re-asked up to ``max_reasks`` times."""
        return 1 + self.max_reasks

    async def after_turn(self, state: DebateState, llm: DebateLLM) -> Decision | None:
        if state.turn < self.start_turn:
            return None
        voters = [a.index for a in state.agents if not a.neutral]
        candidates = await self.candidates(state, llm, voters)
        solutions = [text for _, text in candidates]
        ballots = await asyncio.gather(*(self._ballot(state, llm, voter, solutions) for voter in voters))
        totals = {number: 0.0 for number in range(1, len(solutions) + 1)}
        for ballot in ballots:
            if not ballot["abstained"]:
                for number, points in self.scores(ballot["ballot"], len(solutions)).items():
                    totals[number] += points
        by_answer: dict[str, float] = {}
        first_of: dict[str, int] = {}
        for number, total in totals.items():
            key = self._answer_key(state, solutions[number - 1])
            by_answer[key] = by_answer.get(key, 0.0) + total
            first_of.setdefault(key, number)
        best = max(by_answer.values())
        leaders = [key for key, total in by_answer.items() if total == best]
        winner = first_of[leaders[0]] if best > 0 and len(leaders) == 1 else None
        state.transcript.events.append({
            "kind": "vote",
            "decider": self.name,
            "turn": state.turn,
            "solutions": [{"number": i, "agents": agents,
                           "text": text} for i, (agents, text) in enumerate(candidates, 1)],
            "ballots": ballots,
            "totals": {str(k): v for k, v in totals.items()},
            "answer_totals": by_answer,
            "winner": winner,
            "tie": winner is None and best > 0,
        })
        if winner is None:
            return None
        return Decision(
            answer=solutions[winner - 1],
            success=True,
            turn=state.turn,
            decider=self.name,
            reason="vote",
            details={"winner": winner, "agents": candidates[winner - 1][0], "totals": totals},
        )

    @staticmethod
    def _answer_key(state: DebateState, solution: str) -> str:
        """What makes two solutions the same answer: the extracted answer, else the text."""
        return state.extract(solution) or " ".join(solution.lower().split())

    def _ballot_text(self, state: DebateState, reply: str) -> str:
        """The ballot to read: the reply's structured ballot field as text, else the reply."""
        (field, _), = self.ballot_kind.fields
        fields = structured_fields(reply, self.ballot_kind, state)
        return as_text(fields[field]) if field in fields else reply

    async def _ballot(self, state: DebateState, llm: DebateLLM, voter: int, solutions: list[str]) -> dict[str, Any]:
        persona = state.agents[voter].persona
        role = f"{persona.name} ({persona.description})" if persona.description else persona.name
        user = mallm.fill(
            self.template,
            instruction=state.task.instruction,
            input=state.task.input,
            solutions=mallm.solution_lines(solutions),
            **self.prompt_fields(),
        )
        messages = [{"role": "system", "content": mallm.ROLE_SYSTEM.format(persona=role)},
                    {"role": "user", "content": user}]
        replies, problems = [], []
        asked = reply_in(self.ballot_kind, state)
        for attempt in range(self.max_reasks + 1):
            reply = await llm.chat(voter, messages, purpose="vote", nonce=attempt, **asked)
            replies.append(reply)
            try:
                ballot, note = self.read_ballot(self._ballot_text(state, reply), len(solutions))
            except ValueError as problem:
                problems.append(str(problem))
                messages = [*messages, {"role": "assistant", "content": reply},
                            {"role": "user", "content": own.VOTE_REASK.format(problem=problem)}]
                continue
            return {"agent": voter, "replies": replies, "ballot": ballot, "abstained": False, "problems": problems,
                    "note": note}
        return {"agent": voter, "replies": replies, "ballot": None, "abstained": True, "problems": problems,
                "note": None}


class SimpleVoting(Voting):
    """Simple voting (Figure 26): each ballot names one solution, which gets 1 point; most points wins.

    A reply that starts with a valid solution number votes for it; otherwise the reply must name
    exactly one distinct valid number.
    """


class ApprovalVoting(Voting):
    """Approval voting (Figure 27): each approved solution gets 1 point; most points wins.

    Every distinct number 1..N in the reply is an approval; other numbers are ignored.
    """

    template = mallm.VOTE_APPROVAL
    ballot_kind = ReplySchema.of("approval", approved=NUMBERS)

    def read_ballot(self, reply: str, count: int) -> tuple[list[int], None]:
        approved = list(dict.fromkeys(n for n in numbers_in(reply) if 1 <= n <= count))
        if not approved:
            raise ValueError(f"expected solution numbers between 1 and {count}, separated by commas")
        return approved, None

    def scores(self, ballot: list[int], count: int) -> dict[int, float]:
        return {number: 1.0 for number in ballot}


class RankedVoting(Voting):
    """Ranked voting (Figure 29): the solution at position p (0 = first) of a ranking gets N - p
    points (Borda); unlisted solutions get 0; most points wins.

    The prompt's verbatim example is 0-based ("'0 2 1' if you prefer Solution 0 the most") while
    the solutions are listed from 1. A ballot that copies that style is shifted by one and the
    ballot's ``note`` says so: its distinct numbers include 0, all lie in 0..N-1 and there are at
    least min(N, 5) of them (a complete ranking, or the 5 the prompt asks for at most). Otherwise
    numbers outside 1..N are ignored. At most the first 5 distinct solutions of a ranking count.
    """

    template = mallm.VOTE_RANKED
    ballot_kind = ReplySchema.of("ranking", ranking=NUMBERS)

    def read_ballot(self, reply: str, count: int) -> tuple[list[int], str | None]:
        distinct = list(dict.fromkeys(numbers_in(reply)))
        size = min(5, count)
        if 0 in distinct and len(distinct) >= size and all(0 <= n < count for n in distinct):
            return [n + 1 for n in distinct][:size], ZERO_BASED
        ranking = [n for n in distinct if 1 <= n <= count]
        if not ranking:
            raise ValueError(f"expected a ranking of solution numbers between 1 and {count}")
        return ranking[:size], None

    def scores(self, ballot: list[int], count: int) -> dict[int, float]:
        return {number: float(count - position) for position, number in enumerate(ballot)}


class CumulativeVoting(Voting):
    """Cumulative voting (Figure 28): each ballot gives points to solutions; most points wins.

    A ballot is a JSON object of solution numbers (1..N) to non-negative points adding up to more
    than 0 and at most ``points`` (default 10, the prompt's budget; the paper's text says 25).
    """

    template = mallm.VOTE_CUMULATIVE
    ballot_kind = ReplySchema.of("points", points=POINTS)

    def __init__(self, vote_after_turns: int = 3, max_reasks: int = 2, points: int = 10):
        super().__init__(vote_after_turns, max_reasks)
        if points < 1:
            raise ValueError("points must be at least 1")
        self.points = points

    def prompt_fields(self) -> dict[str, Any]:
        return {"points": self.points}

    def read_ballot(self, reply: str, count: int) -> tuple[dict[int, float], None]:
        try:
            data = parse_json_object(reply)
        except ValueError:
            raise ValueError("expected a JSON dictionary of solution numbers to points") from None
        allocation: dict[int, float] = {}
        for key, value in data.items():
            try:
                number, points = int(str(key).strip()), float(value)
            except (TypeError, ValueError):
                raise ValueError(f"'{key}: {value}' is not a solution number and points") from None
            if not 1 <= number <= count:
                raise ValueError(f"solution {number} does not exist")
            if points < 0:
                raise ValueError("points cannot be negative")
            allocation[number] = allocation.get(number, 0.0) + points
        total = sum(allocation.values())
        if total <= 0 or total > self.points:
            raise ValueError(f"the points must add up to at most {self.points} (got {total:g})")
        return allocation, None

    def scores(self, ballot: dict[int, float], count: int) -> dict[int, float]:
        return dict(ballot)


class ConsensusVoting(Voting):
    """Consensus voting: a simple vote among the distinct solutions (merged by answer), from turn 1.

    Agents whose solutions give the same answer share one entry on the ballot; each ballot names
    one entry, which gets 1 point; most points wins.
    """


    def __init__(self, vote_after_turns: int = 1, max_reasks: int = 2):
        super().__init__(vote_after_turns, max_reasks)

    async def candidates(self, state: DebateState, llm: DebateLLM, voters: list[int]) -> list[tuple[list[int], str]]:
        finals = await final_solutions(state, llm, voters)
        merged: dict[str, tuple[list[int], str]] = {}
        for agent in voters:
            text = finals[agent] or NO_SOLUTION
            key = self._answer_key(state, text)
            merged.setdefault(key, ([], text))[0].append(agent)
        return list(merged.values())


@hookimpl
def register_deciders(register):
    """The voting deciders."""
    register("simple_voting", SimpleVoting, aliases=("voting", "simple"))
    register("approval_voting", ApprovalVoting, aliases=("approval",))
    register("ranked_voting", RankedVoting, aliases=("ranked",))
    register("cumulative_voting", CumulativeVoting, aliases=("cumulative",))
    register("consensus_voting", ConsensusVoting)
