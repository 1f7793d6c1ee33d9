"""The simultaneous Society-of-Minds paradigm with MADC's allocation strategies.

Turn 1 is an independent answer by every agent; in every later turn all agents speak at once and
each sees the previous turn's messages: its own first, then its peers' in the order of the
``allocation`` strategy (:mod:`madeval_madc.allocation`), recomputed per receiving agent and turn
from that turn's answers. Each agent's order is recorded as an ``allocation`` event.
"""

from __future__ import annotations

from madeval import CollectiveRefinement, DebateState, Message, same_answer

from .allocation import ORACLES, STRATEGIES, order_fixed, order_madc, order_random, order_truth
from .randomness import substream


def is_gold_answer(answer: str, gold) -> bool:
    """True when ``answer`` equals the gold target (numbers as numbers; a list: any of them)."""
    targets = list(gold) if isinstance(gold, (list, tuple)) else [gold]
    return any(same_answer(answer, target) for target in targets)


class SocietyOfMindsParadigm(CollectiveRefinement):
    """Society of Minds: simultaneous turns; peers' solutions ordered by an allocation strategy.

    ``allocation``: ``fixed`` (agent order), ``random``, ``truth_first`` / ``truth_last`` (oracles:
    they read the gold answer and mark the run as an oracle run) or ``madc`` (the most-agreed
    answer last; MADC paper, Algorithm 1).
    """


    def __init__(self, allocation: str = "fixed", visible_turns_in_memory: int = 2):
        super().__init__(visible_turns_in_memory)
        if allocation not in STRATEGIES:
            raise ValueError(f"allocation must be one of {', '.join(STRATEGIES)}, got '{allocation}'")
        self.allocation = allocation

    @property
    def oracle(self) -> bool:
        """True for the strategies that read the gold answer."""
        return self.allocation in ORACLES

    def view(self, agent: int, state: DebateState) -> list[Message]:
        """The agent's own previous-turn message(s), then its peers' in allocation order."""
        previous = [m for m in state.transcript.messages if m.turn == state.turn - 1 and m.visible_to(agent)]
        own = [m for m in previous if m.agent == agent]
        peers = [m for m in previous if m.agent != agent]
        order = self.order([m.answer for m in peers], agent, state)
        shown = [peers[position] for position in order]
        self._record(state, agent, shown)
        return own + shown

    def order(self, answers: list[str | None], agent: int, state: DebateState) -> list[int]:
        """Positions of the peers (given by their answers, agent order) in the order shown."""
        if self.allocation == "fixed" or not answers:
            return order_fixed(answers)
        if self.allocation == "random":
            return order_random(answers, substream(state, "allocation", state.turn, agent))
        if self.allocation == "madc":
            return order_madc(answers)
        gold = state.oracle_gold()
        return order_truth(answers, lambda answer: is_gold_answer(answer, gold), first=self.allocation == "truth_first")

    def _record(self, state: DebateState, agent: int, shown: list[Message]) -> None:
        if not shown:
            return
        for event in reversed(state.transcript.events):
            if event.get("kind") == "allocation" and event["turn"] == state.turn and event["agent"] == agent:
                return
        state.transcript.events.append({
            "kind": "allocation",
            "strategy": self.allocation,
            "turn": state.turn,
            "agent": agent,
            "order": [m.agent for m in shown],
            "answers": [m.answer for m in shown],
        })
