"""The debate data model: personas, agents, messages, calls, decisions and the transcript.

Everything a debate produces lands in a :class:`Transcript`. It is plain data (dataclasses that
serialise to JSON with :meth:`Transcript.to_dict`), so stored debates can be re-read and
re-decided later without the objects that produced them.

Vocabulary
----------
turn
    One round of the debate, numbered from 1. A paradigm splits each turn into *steps*.
step
    A group of agents that speak at the same time: each sees only messages that existed before
    the step began. Sequential paradigms (Memory) use one agent per step; simultaneous ones
    (Collective Refinement, Society of Minds) put every agent in one step.
draft
    A message that proposes a solution. Agreeing messages *back* an earlier draft; the
    ``backs`` field holds the id of the draft a message supports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

#: The parse note of a reply that was asked for a stance and gave no readable [AGREE]/[DISAGREE].
NO_AGREEMENT_MARKER = "no agreement marker"
#: The parse note of a solution from which the task's extractor read no answer: ``"no answer: <why>"``
#: (the reason the task gives, e.g. "names several options (A, E)").
NO_ANSWER = "no answer"


@dataclass(frozen=True)
class Persona:
    """Who an agent is: a name, a description and the generator that made it."""

    name: str
    description: str = ""
    generator: str = "none"
    traits: dict[str, Any] | None = None


@dataclass
class Agent:
    """One debater: its position, persona and the model it talks to.

    ``neutral`` agents (moderators) speak but do not count towards agreement or votes.
    """

    index: int
    persona: Persona
    model: str
    endpoint: str
    neutral: bool = False


@dataclass
class Message:
    """One contribution to the debate, as every other component sees it.

    ``audience`` lists the agents allowed to see the message (``None``: everyone). ``solution``
    is the solution text the message proposes or carries; ``answer`` is the task-level answer
    extracted from it (for example ``"B"``), or ``None`` when nothing could be extracted.
    ``agreement`` is ``True``/``False`` for an explicit [AGREE]/[DISAGREE] and ``None`` when the
    stage asks for no agreement (first drafts, simultaneous refinement).
    """

    id: int
    turn: int
    step: int
    agent: int
    stage: str
    text: str
    solution: str | None
    answer: str | None
    agreement: bool | None
    backs: int | None = None
    confidence: float | None = None
    audience: tuple[int, ...] | None = None
    parse_notes: tuple[str, ...] = ()

    def visible_to(self, agent: int) -> bool:
        """True when ``agent`` may see this message."""
        return self.audience is None or agent in self.audience


@dataclass
class Call:
    """One LLM request as it was made: why, by whom, what it cost and how it went.

    ``depth`` is the call's position in the debate's dependency chain: 1 + the largest depth among
    the calls that had finished when it started. Calls started together (one simultaneous step,
    one round of votes) share a depth, so the transcript's largest depth is its critical path.

    ``cached_prompt_tokens``: of ``prompt_tokens``, those the provider served from its prompt cache
    (``None``: it did not say); ``transport``: what the call went through (``batch`` calls are
    priced at batch prices; ``None`` in records made before it was recorded).

    ``shared_from``: the unit key of the debate (another configuration's, of the same item and
    repeat) that made this identical request, when this call reused its reply instead of making it
    (:mod:`madeval.llm.shared`); its tokens and latency are the original call's. ``None`` (and left
    out of the stored transcript): the call was made for this debate.
    """

    purpose: str
    agent: int | None
    turn: int
    model: str
    endpoint: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    attempts: int = 1
    cached: bool = False
    errors: list[str] = field(default_factory=list)
    depth: int = 1
    cached_prompt_tokens: int | None = None
    transport: str | None = None
    shared_from: str | None = None


@dataclass
class Decision:
    """The outcome of a debate: the answer, whether the protocol reached it, and how.

    ``answer`` is a solution text (consensus, voting, judge) or an answer already extracted from
    one (``counting``); the record's ``prediction`` is the task's extractor chain applied to it,
    and ``None`` scores as wrong. ``success`` is False when the protocol reached no decision (the
    debate hit ``max_turns`` and the answer is a recorded fallback, or there was no answer).
    ``turn`` is the turn it was made in (turns count from 1), ``decider`` the decider's registered
    name, ``reason`` one word for how it was reached (``"plurality"``). ``details`` holds what the
    decider wants kept, as plain JSON data: tallies, ballots, abstentions, ties.
    """

    answer: str | None
    success: bool
    turn: int
    decider: str
    reason: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass
class Transcript:
    """The whole record of one debate: agents, messages, calls, decider events, decision."""

    agents: list[Agent] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    decision: Decision | None = None
    turns_used: int = 0
    oracle: bool = False

    def voters(self) -> list[Agent]:
        """The agents whose stance counts: every agent that is not neutral."""
        return [agent for agent in self.agents if not agent.neutral]

    def messages_in_turn(self, turn: int) -> list[Message]:
        """The messages of one turn, in the order they were made."""
        return [m for m in self.messages if m.turn == turn]

    def latest_by_agent(self, up_to_turn: int | None = None) -> dict[int, Message]:
        """Each agent's most recent message (optionally only counting turns <= up_to_turn)."""
        latest: dict[int, Message] = {}
        for message in self.messages:
            if up_to_turn is None or message.turn <= up_to_turn:
                latest[message.agent] = message
        return latest

    def held_by_agent(self, up_to_turn: int | None = None) -> dict[int, Message]:
        """Each agent's most recent message that carried a solution (its current position)."""
        held: dict[int, Message] = {}
        for message in self.messages:
            if message.solution is not None and (up_to_turn is None or message.turn <= up_to_turn):
                held[message.agent] = message
        return held

    def trajectory(self) -> list[list[str | None]]:
        """The answer each voting agent held at the end of every turn.

        Row ``k`` is turn ``k + 1``; column ``i`` is the i-th voting agent. An agent that did not
        speak in a turn keeps the answer it held before (``None`` before its first message).
        Free-MAD's score and MADC's metrics read the debate through this matrix.
        """
        voters = [agent.index for agent in self.voters()]
        held: dict[int, str | None] = {index: None for index in voters}
        rows: list[list[str | None]] = []
        for turn in range(1, self.turns_used + 1):
            for message in self.messages_in_turn(turn):
                if message.agent in held and message.solution is not None:
                    held[message.agent] = message.answer
            rows.append([held[index] for index in voters])
        return rows

    def parse_failures(self) -> dict[str, int]:
        """How many replies of this debate could not be read, by kind.

        * ``vote_abstentions``: ballots still unreadable after the re-asks (``vote`` events);
        * ``unreadable_agreements``: messages asked for a stance whose reply had no readable
          [AGREE]/[DISAGREE] (parse note :data:`NO_AGREEMENT_MARKER`), plus challenge replies with
          no readable AGREE/DISAGREE;
        * ``unparseable_solutions``: messages whose own solution the task's extractor read and got
          no answer from: a message proposing a solution of its own (with a responder that shares
          reasoning only, every message that proposes an argument), and an agreeing message that
          wrote a solution of its own which was read and failed (its ``"no answer: ..."`` note: an
          imported MALLM reply; a live agreeing message carries its draft's solution unread). So
          every unreadable solution counts once, as the dynamics' ``unparsed`` counts the answers
          agents held (the two agree when each voter speaks once a turn, as in MALLM's runs);
        * ``persona_fallbacks``: agents whose persona generation failed and fell back to
          "Participant N".
        """
        events = self.events
        return {
            "vote_abstentions": sum(
                ballot["abstained"] for e in events if e["kind"] == "vote" for ballot in e["ballots"]
            ),
            "unreadable_agreements": sum(NO_AGREEMENT_MARKER in m.parse_notes for m in self.messages)
            + sum(r["agrees"] is None for e in events if e["kind"] == "challenge" for r in e["results"]),
            "unparseable_solutions": sum(
                m.solution is not None and m.answer is None and (m.backs == m.id or _read_and_failed(m))
                for m in self.messages
            ),
            "persona_fallbacks": sum(bool((a.persona.traits or {}).get("fallback")) for a in self.agents),
        }

    def chain(self) -> int:
        """The longest chain of calls that had to happen one after another in this debate."""
        return max((call.depth for call in self.calls), default=0)

    def tokens(self) -> dict[str, int]:
        """Prompt and completion tokens summed over every call."""
        prompt = sum(call.prompt_tokens for call in self.calls)
        completion = sum(call.completion_tokens for call in self.calls)
        return {"prompt": prompt, "completion": completion, "total": prompt + completion}

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary of the transcript (what :meth:`from_dict` reads back)."""
        return {
            "agents": [{**vars(a), "persona": dict(vars(a.persona))} for a in self.agents],
            "messages": [dict(vars(m)) for m in self.messages],
            "calls": [_call_dict(c) for c in self.calls],
            "events": self.events,
            "decision": dict(vars(self.decision)) if self.decision else None,
            "turns_used": self.turns_used,
            "oracle": self.oracle,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Transcript:
        """Rebuild a transcript from :meth:`to_dict` output (for example a stored record)."""
        agents = [
            Agent(**{**a, "persona": Persona(**a["persona"])}) for a in data.get("agents", [])
        ]
        messages = [
            Message(
                **{
                    **m,
                    "audience": tuple(m["audience"]) if m.get("audience") is not None else None,
                    "parse_notes": tuple(m.get("parse_notes", ())),
                }
            )
            for m in data.get("messages", [])
        ]
        calls = [Call(**c) for c in data.get("calls", [])]
        decision = Decision(**data["decision"]) if data.get("decision") else None
        return cls(
            agents=agents,
            messages=messages,
            calls=calls,
            events=list(data.get("events", [])),
            decision=decision,
            turns_used=data.get("turns_used", 0),
            oracle=data.get("oracle", False),
        )


def _read_and_failed(message: Message) -> bool:
    """True when ``message``'s own solution was read and gave no answer (its ``no answer`` note)."""
    return any(note.startswith(f"{NO_ANSWER}:") for note in message.parse_notes)


def _call_dict(call: Call) -> dict[str, Any]:
    """A call as the stored transcript holds it: ``shared_from`` only when it reused a reply."""
    stored = dict(vars(call))
    if stored["shared_from"] is None:
        del stored["shared_from"]
    return stored
