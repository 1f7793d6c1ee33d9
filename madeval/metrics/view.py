"""What a debate metric reads: the finished debate plus the task's answer rules (:class:`DebateView`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from madeval.core.transcript import Transcript
from madeval.metrics.answers import answers_match, canonical_answer
from madeval.metrics.checker import known_undecidable


@dataclass
class DebateView:
    """A finished debate as debate metrics read it: the transcript plus the task's answer rules."""

    transcript: Transcript
    answer_type: str
    target: Any

    def final_texts(self) -> list[str]:
        """Each voting agent's final solution text (an agreeing message carries the draft it backs)."""
        messages = self.transcript.messages
        latest = self.transcript.latest_by_agent()
        texts = []
        for agent in self.transcript.voters():
            message = latest.get(agent.index)
            if message is None:
                continue
            text = message.solution
            if not text and message.backs is not None and 0 <= message.backs < len(messages):
                text = messages[message.backs].solution
            texts.append(text or message.text)
        return texts

    def answer_rounds(self) -> list[list[str]]:
        """Per turn, the canonical answers the voting agents held (unparsed answers left out).

        Math answers are grouped by equivalence (math-verify, within its deadline): each answer
        is replaced by the first answer of the debate it equals, so ``0.5`` and ``\\frac12`` count
        as one answer. Each answer is first checked against the gold answer (which the gold
        metrics need anyway); one that could not be decided there is grouped by its text only,
        so a hostile answer costs the checker's deadline once, not once per other answer."""
        rounds = [
            [canonical_answer(self.answer_type, a) for a in row if a is not None]
            for row in self.transcript.trajectory()
        ]
        if self.answer_type != "math":
            return rounds
        for answer in dict.fromkeys(a for row in rounds for a in row):
            self.is_gold(answer)
        firsts: list[str] = []

        def first_equal(answer: str) -> str:
            if known_undecidable(answer):
                return answer
            found = next((f for f in firsts if f == answer or (
                not known_undecidable(f) and answers_match("math", answer, f))), None)
            if found is None:
                firsts.append(answer)
            return found or answer

        return [[first_equal(a) for a in row] for row in rounds]

    def is_gold(self, answer: str) -> bool:
        """True when ``answer`` (canonical) counts as the gold answer."""
        return answers_match(self.answer_type, answer, self.target)
