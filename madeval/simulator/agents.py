"""Synthetic agents: what the simulator answers to each kind of prompt.

Each simulated agent holds a *private answer* per question: correct with probability
``accuracy``, otherwise a uniformly chosen wrong answer. When a prompt shows peers' answers, the
agent adopts their most common answer with probability ``conformity`` (ties go to the current
solution); otherwise it keeps its private answer. Randomness comes from a hash of the request's
``seed`` (madeval derives one per agent, item and repeat), the question and the prompt, so the
simulator is deterministic: the same request always gets the same reply, and agents with
different seeds answer independently.

The request kind is recognised from the wording of madeval's own prompts (imported from
:mod:`madeval.prompts`, so the two cannot drift apart): persona generation, debate turns with
[AGREE]/[DISAGREE], final-answer extraction, simple / approval / cumulative / ranked votes and the
judge. Replies state answers as ``Final Solution: X``.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from .truth import Gold, GoldIndex

LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
UNKNOWN = Gold("choice", "", 4)
FINAL = re.compile(r"final solution\s*:\s*([^\n]*)", re.IGNORECASE)
SOLUTION_LINE = re.compile(r"^Solution (\d+):\s*(.*)$", re.MULTILINE)
POINTS = re.compile(r"distributing (\d+) points")
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class AgentProfile:
    """How a synthetic agent behaves: its accuracy and its conformity to peers."""

    accuracy: float = 0.6
    conformity: float = 0.0


@dataclass
class BehaviourStats:
    """Requests answered per kind, and questions the simulator did not know."""

    kinds: Counter = field(default_factory=Counter)
    unknown_questions: int = 0


class SyntheticAgents:
    """The behaviour callback of the simulator server: request JSON -> (text, tokens in, out)."""

    def __init__(
        self,
        truth: GoldIndex,
        *,
        default: AgentProfile | None = None,
        profiles: dict[str, AgentProfile] | None = None,
        seed: int = 0,
    ):
        self.truth = truth
        self.default = default or AgentProfile()
        self.profiles = profiles or {}
        self.seed = seed
        self.stats = BehaviourStats()

    def __call__(self, request: dict[str, Any]) -> tuple[str, int, int]:
        messages = request.get("messages")
        if not isinstance(messages, list) or not messages:
            raise ValueError("messages must be a non-empty list")
        contents = [str(m.get("content") or "") for m in messages if isinstance(m, dict)]
        prompt = "\n".join(contents)
        user = contents[-1]
        profile = self.profiles.get(str(request.get("model")), self.default)
        gold = self.truth.lookup(prompt)
        if gold is None:
            self.stats.unknown_questions += 1
            gold = UNKNOWN
        draw = _Draws(self.seed, request.get("seed"), gold.input, prompt)
        private = self._private_answer(gold, profile, draw)
        kind, text = self._reply(user, prompt, gold, profile, private, draw)
        self.stats.kinds[kind] += 1
        return text, max(1, len(prompt) // 4), max(1, len(text) // 4)

    def _private_answer(self, gold: Gold, profile: AgentProfile, draw: _Draws) -> str:
        rng = draw.rng("private")
        if gold.answer and rng.random() < profile.accuracy:
            return gold.answer
        return _wrong_answer(gold, rng)

    def _belief(self, private: str, peers: list[str], anchor: str | None, profile: AgentProfile, draw: _Draws) -> str:
        """The private answer, or with probability ``conformity`` the peers' most common one."""
        if not peers or draw.rng("conform").random() >= profile.conformity:
            return private
        counts = Counter(peers)
        best = max(counts.values())
        leaders = [a for a in counts if counts[a] == best]
        return anchor if anchor in leaders else leaders[0]

    def _reply(self, user: str, prompt: str, gold: Gold, profile: AgentProfile, private: str, draw: _Draws) -> tuple[str, str]:
        lowered = user.lower()
        if "generate a participant" in lowered:
            return "persona", _persona(draw)
        if "extract the final solution" in lowered:
            answers = _answers_in(user, gold)
            return "extraction", _say(answers[-1] if answers else private, gold)
        solutions = [(int(n), _answer_of(text, gold)) for n, text in SOLUTION_LINE.findall(user)]
        if solutions:
            listed = [a for _, a in solutions if a is not None]
            belief = self._belief(private, listed, None, profile, draw)
            return _ballot(lowered, solutions, belief, gold)
        anchor, peers = _debate_answers(prompt, gold)
        belief = self._belief(private, peers, anchor, profile, draw)
        if anchor is None:
            return "draft", f"Here is my solution. Final Solution: {_say(belief, gold)}"
        if belief == anchor:
            return "agree", f"[AGREE] The current solution is right. Final Solution: {_say(belief, gold)}"
        return "disagree", f"[DISAGREE] The current solution is wrong. Final Solution: {_say(belief, gold)}"


class _Draws:
    """Deterministic random streams for one request."""

    def __init__(self, seed: int, request_seed: Any, question: str, prompt: str):
        self.base = f"{seed}\x1f{request_seed}\x1f{question}"
        self.prompt_digest = hashlib.sha256(prompt.encode()).hexdigest()[:16]

    def rng(self, stream: str) -> random.Random:
        extra = self.prompt_digest if stream != "private" else ""
        digest = hashlib.sha256(f"{self.base}\x1f{stream}\x1f{extra}".encode()).digest()
        return random.Random(int.from_bytes(digest[:8], "big"))


def _wrong_answer(gold: Gold, rng: random.Random) -> str:
    if gold.kind == "choice":
        options = [l for l in LETTERS[: gold.options or 4] if l != gold.answer]
        return rng.choice(options)
    if gold.kind == "yes_no":
        return "no" if gold.answer == "yes" else "yes"
    if gold.kind == "number":
        try:
            value = float(gold.answer)
        except ValueError:
            value = 0.0
        wrong = value + rng.choice([-1, 1]) * rng.randint(1, 9)
        return str(int(wrong)) if wrong == int(wrong) else str(wrong)
    return rng.choice(["[UNKNOWN]", "I am not sure.", "None of the above."])


def _say(answer: str, gold: Gold) -> str:
    """An answer as an agent writes it."""
    if gold.kind == "yes_no":
        return answer.capitalize()
    return answer


def _answer_of(text: str, gold: Gold) -> str | None:
    """Read an answer of ``gold``'s kind from a short piece of text."""
    finals = FINAL.findall(text)
    text = (finals[-1] if finals else text).strip()
    if gold.kind == "choice":
        match = re.match(r"\(?([A-Z])\)?(?![A-Za-z])", text)
        return match.group(1) if match else None
    if gold.kind == "yes_no":
        match = re.search(r"\b(yes|no)\b", text, re.IGNORECASE)
        return match.group(1).lower() if match else None
    if gold.kind == "number":
        numbers = NUMBER.findall(text)
        return numbers[0] if numbers else None
    return text or None


def _answers_in(text: str, gold: Gold) -> list[str]:
    found = [_answer_of(f, gold) for f in FINAL.findall(text)]
    return [a for a in found if a is not None]


def _debate_answers(prompt: str, gold: Gold) -> tuple[str | None, list[str]]:
    """The current solution's answer and every answer in the discussion shown in a debate prompt."""
    current, _, discussion = prompt.partition("Current Solution:")
    if not discussion:
        return None, []
    solution, _, memory = discussion.partition("Discussion so far:")
    anchor = _answers_in(solution, gold)
    peers = _answers_in(memory, gold)
    if not anchor and not peers:
        return None, []
    return (anchor[-1] if anchor else None), peers or anchor


def _ballot(lowered: str, solutions: list[tuple[int, str | None]], belief: str, gold: Gold) -> tuple[str, str]:
    """A vote, approval list, point allocation or ranking that favours ``belief``; or a judgment."""
    numbers = [n for n, _ in solutions]
    matching = [n for n, a in solutions if a == belief] or numbers[:1]
    others = [n for n in numbers if n not in matching]
    if "please provide a decision" in lowered:
        return "judge", f"Final Solution: {_say(belief, gold)}"
    if "approving" in lowered:
        return "approval", ", ".join(str(n) for n in matching)
    if "points" in lowered:
        match = POINTS.search(lowered)
        budget = int(match.group(1)) if match else 10
        share, rest = divmod(budget, len(matching))
        allocation = {str(n): share + (1 if i < rest else 0) for i, n in enumerate(matching)}
        return "cumulative", json.dumps(allocation)
    if "ranking" in lowered:
        return "ranked", " ".join(str(n) for n in matching + others)
    return "vote", str(matching[0])


def _persona(draw: _Draws) -> str:
    rng = draw.rng("persona")
    field_name = rng.choice(["Mathematician", "Logician", "Teacher", "Engineer", "Analyst", "Historian"])
    return json.dumps({"role": field_name, "description": f"A careful {field_name.lower()} who checks every step."})
