"""The deciders asked after every turn from a given turn on: the judge and the voting deciders."""

from __future__ import annotations

from madeval.core.components import Decider
from madeval.errors import UsageError


class FromTurnDecider(Decider):
    """Base of the deciders asked after every turn from turn ``start_turn`` on.

    Each time, the voting agents' final solutions are collected, then the decider makes its calls (the
    judge's verdict; the ballots, cast at once and re-asked when unreadable), at most
    :meth:`deciding_steps` one after another. Undecided (an empty verdict, a tie), the debate goes on.
    """

    transcript_only = True  # reads the transcript; replay can apply it to stored debates
    min_voters = 2
    #: The option that sets ``start_turn``, for the one-line error of a bad value.
    start_option = "after_turns"
    #: What the decider does from that turn on ("votes", "vote"), for the one-line error of a debate too short.
    acts = ("decides", "decide")

    def __init__(self, start_turn: int):
        if start_turn < 1:
            raise ValueError(f"{self.start_option} must be at least 1")
        self.start_turn = start_turn

    def validate(self, setup) -> None:
        """One line unless the debate reaches ``start_turn``."""
        super().validate(setup)
        if setup.max_turns < self.start_turn:
            acts, act = self.acts
            raise UsageError(
                f"decider '{self.name}' {acts} after {self.start_turn} turns, but max_turns is {setup.max_turns}: "
                f"it would never {act}"
            )

    def deciding_steps(self) -> int:
        """The most calls one after another the decider makes each time, after the final solutions."""
        return 1

    def least_chain(self, first_turn: int, turn: int, max_turns: int, final: int = 0) -> int:
        """The turns until the decider is first asked, the agents' final solutions, then its calls at once."""
        return first_turn + (self.start_turn - 1) * turn + final + 1

    def most_chain(self, first_turn: int, turn: int, max_turns: int, final: int) -> int:
        """Every turn, and after each from ``start_turn`` on (undecided, the debate goes on) the agents'
        final solutions, then the decider's calls (:meth:`deciding_steps`)."""
        asked = max_turns - self.start_turn + 1
        return first_turn + (max_turns - 1) * turn + asked * (final + self.deciding_steps())
