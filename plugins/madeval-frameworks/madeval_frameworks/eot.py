"""Exchange-of-Thought (Yin et al. 2023; yinzhangyue/EoT, ``code/eot.py`` and ``code/prompt.py``).

Protocol (methods.md 4.2):

* three agents, Kitty, Ben and Peter, with the personas of ``code/prompt.py`` as system prompts;
* turn 1: every agent solves the problem alone (EoT used precomputed chain-of-thought answers;
  madeval asks with the default query of ``construct_prompt``);
* every later turn ("communication round") all agents speak at once; who receives whose latest
  solution depends on the communication mode:

  ========  ==================  ============  ============
  mode      Kitty (0) receives  Ben (1)       Peter (2)
  ========  ==================  ============  ============
  memory    Ben, Peter          Kitty, Peter  Kitty, Ben
  report    Ben, Peter          Kitty         Kitty
  relay     Ben                 Peter         Kitty
  debate    Ben, Peter          Peter         Ben
  ========  ==================  ============  ============

  (with more agents: memory = everyone else; report = agent 0 is the hub; relay = agent i hears
  agent i+1; debate = agent 0 hears everyone, the others hear each other);
* from communication round 2 on, each friend's solution comes with its confidence: the share of
  the friend's answer history taken by its most frequent answer (computed once the history holds
  two answers);
* the debate stops when all agents give the same answer, also right after turn 1; otherwise after
  ``max_round`` = 5 communication rounds (``max_turns`` 6); the final answer is the most frequent
  non-empty answer.

The variant that stops when the agents' answers are alike (``eot_consistency`` with ``similarity``)
follows the MAD-frameworks appendix's description: "The EoT process terminates when the semantic
similarity between Kitty's and Peter's answers exceeds a predefined threshold (e.g., 0.85) [...]
Semantic similarity is computed using Python's *difflib.SequenceMatcher*, which calculates the
ratio of matching characters in the lowercase text of the answers." In that description every
round has the agents "independently generate solutions, critique each other's outputs, and refine
their answers", so the check comes after an exchange: madeval compares the lower-cased extracted
answers (``compare=answers``) from the first communication round on (``min_exchanges=1``). Its code
was not found (methods.md 4.2, [INF]): madeval compares every pair of voting agents (methods.md's
reading; the MAD-frameworks appendix names Kitty and Peter, with Ben as a synthesizer madeval does not reproduce), and
``compare=responses`` compares whole replies instead. The MAD-frameworks appendix's rule that an agent exits once its
answers stay alike across rounds is not reproduced.
"""

from __future__ import annotations

import difflib
import itertools
from collections import Counter

from madeval import (
    CollectiveRefinement,
    Contribution,
    DebateState,
    Decider,
    Decision,
    Message,
    Persona,
    PersonaGenerator,
    Responder,
    SpeakContext,
    plurality,
)

from .common import by_turn, flat

# --- verbatim prompts (code/prompt.py, code/eot.py) -------------------------------------------------
PERSONAS = {
    "Kitty": (
        "You are Kitty, a high school student admired for your attentiveness and detail-oriented nature. "
        "Your friends often rely on you to catch details they might have missed in their work. "
        "Your task is to carefully analyze the presented math problem, apply your attentive skills, "
        "and piece together a detailed solution. "
        "Afterward, you'll have the opportunity to review the solutions provided by your friends, "
        "offering insights and suggestions. "
        "Your careful revisions will help all of you to enhance your understanding and arrive at the most accurate "
        "solutions possible."
    ),
    "Ben": (
        "You are Ben, a high school student with a track record of excellent grades, particularly in mathematics. "
        "Your friends admire your diligence and often seek your guidance in their studies. "
        "Your role is to scrutinize the problem at hand with your usual attention to detail, "
        "drawing from your vast knowledge of math principles. "
        "After considering your friends' approaches, carefully construct your answer, "
        "ensuring to clarify each step of your process. "
        "Your clear and logical explanations are valuable, "
        "as they will serve as a benchmark for your friends to compare and refine their own solutions."
    ),
    "Peter": (
        "You are Peter, a high school student recognized for your unique problem-solving abilities. "
        "Your peers often turn to you for assistance when they encounter challenging tasks, "
        "as they appreciate your knack for devising creative solutions. "
        "Today, your challenge is to dissect the given math problem, "
        "leveraging your unique problem-solving strategies. "
        "Once you've crafted your solution, share it with your friends, Ben and Kitty, "
        "so they can see a different perspective. "
        "Your innovative approach will not only provide an answer but also inspire Ben and Kitty to think outside the "
        "box and possibly revise their own solutions."
    ),
}
#: The code's communicator order (dict order of System_Prompt).
ORDER = ("Kitty", "Ben", "Peter")

# ``construct_prompt``: the code's triple-quoted strings, without the source indentation.
QUERY = "Please consider the example provided and think it step by step. \nQuestion: {question}"
HEAD = (
    "Please consider the example provided and think it step by step.\nQuestion: {question}\n"
    "Your Solution: {mine}\nHere is a solution process from your friend:\n"
)
FRIEND = "{name}'s Solution: {text}\n"
FRIEND_CONFIDENCE = "{name}'s confidence in this solution is: {confidence}\n"
TAIL = (
    "Based on your friend's solution, carefully re-examine your previous answer.{confidence_note} "
    "Utilize your talent and critical thinking to provide a new step-by-step solution process.\n"
    "Provide the new solution directly, refrain from commenting on your friend's approach, and "
    "conclude by stating, \"the answer is{hint}.\"\n"
)
CONFIDENCE_NOTE = (
    " If your friend's confidence level is below 0.5, it suggests a high probability that the "
    "solution might be incorrect. Remember, solutions with high confidence can also be wrong."
)

MODES = ("memory", "report", "relay", "debate")


def sources(mode: str, agent: int, count: int) -> list[int]:
    """Whose latest solution ``agent`` receives in ``mode`` among ``count`` agents (in order)."""
    others = [i for i in range(count) if i != agent]
    if mode == "memory":
        return others
    if mode == "report":
        return others if agent == 0 else [0]
    if mode == "relay":
        return [(agent + 1) % count] if count > 1 else []
    return others if agent == 0 else [i for i in others if i != 0]


def confidence(history: list[str | None]) -> float | None:
    """EoT's confidence: the most frequent answer's share of the history (needs two answers)."""
    if len(history) < 2:
        return None
    return max(Counter(history).values()) / len(history)


class EotPersonas(PersonaGenerator):
    """EoT's three students (code/prompt.py): Kitty (detail-oriented), Ben (math), Peter (creative)."""

    sequential = False

    async def generate(self, agent: int, task, existing, llm) -> Persona:
        name = ORDER[agent % len(ORDER)]
        return Persona(name=name, description=PERSONAS[name], generator=self.name)


class EotParadigm(CollectiveRefinement):
    """EoT's communication: simultaneous rounds; who hears whom by ``mode`` (memory, report, relay, debate)."""


    def __init__(self, mode: str = "memory", visible_turns_in_memory: int = 2):
        super().__init__(visible_turns_in_memory)
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got '{mode}'")
        self.mode = mode

    def view(self, agent: int, state: DebateState) -> list[Message]:
        """The previous turn's messages of the agent's sources, in the code's order."""
        latest = {m.agent: m for m in state.transcript.messages if m.turn == state.turn - 1}
        return [latest[i] for i in sources(self.mode, agent, len(state.agents)) if i in latest]


class EotResponder(Responder):
    """EoT's prompts (code/eot.py ``construct_prompt``, verbatim): your solution, your friends' and
    (from communication round 2) their confidence. ``format_hint``: EoT's " (A/B/C/D/E)" etc."""

    gives_agreement = False

    def __init__(self, format_hint: str = ""):
        self.format_hint = format_hint

    def prompt(self, ctx: SpeakContext) -> list[dict[str, str]]:
        persona = ctx.agent.persona
        system = persona.description or persona.name
        question = f"{ctx.task.instruction}\n{ctx.task.input}"
        if ctx.task.context:
            question += f"\n{ctx.task.context}"
        if ctx.own_last is None or not ctx.view:
            user = QUERY.format(question=question)
        else:
            with_confidence = ctx.turn >= 3  # communication round 2 = turn 3
            user = HEAD.format(question=question, mine=flat(ctx.own_last.text))
            for friend in ctx.view:
                name = ctx.agents[friend.agent].persona.name
                user += FRIEND.format(name=name, text=flat(friend.text))
                if with_confidence:
                    history = [m.answer for _, m in sorted(by_turn(ctx.state.transcript, friend.agent).items())
                               if m.turn < ctx.turn]
                    value = confidence(history)
                    if value is not None:
                        user += FRIEND_CONFIDENCE.format(name=name, confidence=value)
            user += TAIL.format(confidence_note=CONFIDENCE_NOTE if with_confidence else "", hint=self.format_hint)
        return [{"role": "system", "content": system}, {"role": "user", "content": user}]

    def parse(self, text: str, ctx: SpeakContext) -> Contribution:
        return Contribution(text, text.strip() or None)


class EotConsistency(Decider):
    """EoT's stop: all agents give the same answer (checked from turn 1); else the most frequent answer.

    With ``similarity`` > 0 it stops instead when every pair of agents' texts has a
    ``difflib.SequenceMatcher`` ratio >= ``similarity`` (the variant of the MAD-frameworks appendix uses 0.85);
    ``compare`` chooses the texts, lower-cased: ``answers`` (the extracted answers, the MAD-frameworks appendix's
    "lowercase text of the answers", the default) or ``responses`` (whole replies).
    ``min_exchanges``: communication rounds before the first check; by default 0 for EoT's own
    rule (its code stops right after the independent answers) and 1 with ``similarity`` (seed
    004's rounds include an exchange). The decided answer is the most frequent non-empty answer of
    the latest turn (ties: the earliest agent's). At ``max_turns`` the same rule gives the
    recorded fallback.
    """

    transcript_only = True

    def __init__(self, similarity: float = 0.0, compare: str = "answers", min_exchanges: int | None = None):
        if not 0 <= similarity <= 1:
            raise ValueError(f"similarity must be between 0 and 1, got {similarity}")
        if compare not in ("responses", "answers"):
            raise ValueError(f"compare must be 'responses' or 'answers', got '{compare}'")
        if min_exchanges is None or min_exchanges == "":
            min_exchanges = 1 if similarity > 0 else 0
        try:
            min_exchanges = int(min_exchanges)
        except ValueError:
            raise ValueError(f"min_exchanges must be a whole number, got {min_exchanges!r}") from None
        if min_exchanges < 0:
            raise ValueError(f"min_exchanges must be >= 0, got {min_exchanges}")
        self.similarity = similarity
        self.compare = compare
        self.min_exchanges = min_exchanges

    @staticmethod
    def _latest(state: DebateState) -> list[Message]:
        latest = state.transcript.latest_by_agent()
        return [latest[a.index] for a in state.agents if not a.neutral and a.index in latest]

    def agreed(self, messages: list[Message]) -> tuple[bool, list[float]]:
        """Whether the agents agree, and the pairwise ratios when comparing by similarity."""
        if not messages:
            return False, []
        if self.similarity <= 0:
            answers = [m.answer for m in messages]
            return answers[0] is not None and len(set(answers)) == 1, []
        texts = [(m.text if self.compare == "responses" else (m.answer or "")).lower() for m in messages]
        ratios = [difflib.SequenceMatcher(None, a, b).ratio() for a, b in itertools.combinations(texts, 2)]
        return all(r >= self.similarity for r in ratios), ratios

    async def after_turn(self, state: DebateState, llm) -> Decision | None:
        if state.turn - 1 < self.min_exchanges:  # turn 1 is the independent answers
            return None
        messages = self._latest(state)
        agreed, ratios = self.agreed(messages)
        state.transcript.events.append({"kind": "eot_check", "turn": state.turn, "agreed": agreed,
                                        "answers": [m.answer for m in messages], "ratios": ratios})
        return self._decide(state, messages, True, "consistency") if agreed else None

    async def at_max_turns(self, state: DebateState, llm) -> Decision:
        return self._decide(state, self._latest(state), False, "max_turns_most_frequent")

    def _decide(self, state: DebateState, messages: list[Message], success: bool, reason: str) -> Decision:
        winner, tally, tie = plurality([m.answer for m in messages])
        text = next((m.solution for m in messages if m.answer == winner and m.solution), winner)
        return Decision(text, success and winner is not None, state.turn, self.name, reason,
                        {"answer": winner, "tally": tally, "tie": tie})
