"""Base classes and contexts for the four debate components (metrics: :mod:`madeval.metrics.base`).

A configuration is one choice of each component (:class:`DebateSetup`). The debate loop in
:mod:`madeval.debate.loop` drives them:

1. each agent's :class:`PersonaGenerator` makes its persona;
2. every turn, the :class:`Paradigm` yields steps of :class:`Speaker` s; each speaker's
   :class:`Responder` writes a message from a :class:`SpeakContext` (the messages the paradigm lets
   that agent see);
3. after every step and every turn the :class:`Decider` returns a decision or ``None``
   (continue); at ``max_turns`` it supplies the recorded fallback.

Components make LLM calls only through the :class:`DebateLLM` they are given, so every call is
cached, retried, counted and recorded with its purpose.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Protocol

from madeval.core.transcript import Agent, Decision, Message, Persona, Transcript
from madeval.errors import UsageError
from madeval.llm.structured import ReplySchema, reply_in, structured_fields


class DebateLLM(Protocol):
    """LLM access inside one debate. ``agent=None`` means the configuration's judge model."""

    async def chat(
        self,
        agent: int | None,
        messages: list[dict[str, str]],
        *,
        purpose: str,
        nonce: int = 0,
        max_tokens: int | None = None,
        reply: ReplySchema | None = None,
    ) -> str:
        """Send ``messages`` as ``agent`` and return the reply text; the call is recorded.

        ``reply`` asks for the reply in that JSON schema (structured answers); the endpoint may
        refuse it, so the text returned may be plain text all the same."""
        ...


@dataclass(frozen=True)
class TaskPrompt:
    """What the agents are told about one item: the instruction, the input and any context."""

    instruction: str
    input: str
    context: str | None = None
    #: The answers allowed when the task fixes them (a choice item's letters); with structured
    #: answers the solution field is one of them. Never shown in a prompt.
    options: tuple[str, ...] = ()


@dataclass
class Contribution:
    """A parsed reply: the text, the solution it proposes, its agreement flag and confidence.

    ``agreement`` is ``True`` for [AGREE], ``False`` for [DISAGREE] and ``None`` when the reply
    takes no stance. ``solution`` is ``None`` when the reply proposes nothing of its own (an
    agreeing reply then carries the draft it agrees with).
    """

    text: str
    solution: str | None
    agreement: bool | None = None
    confidence: float | None = None
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Speaker:
    """One agent speaking in a step: at which stage, and who will see its message.

    ``stage`` is ``"draft"`` (propose a solution), ``"improve"`` (improve the current draft,
    agree or disagree), ``"feedback"`` (comment on the draft without a solution) or ``"refine"``
    (rewrite one's own answer given the others', as in simultaneous paradigms).
    ``audience`` is the set of agents that will see the message (``None``: everyone).
    """

    agent: int
    stage: str = "improve"
    audience: tuple[int, ...] | None = None


@dataclass
class DebateState:
    """The live state of one debate, as components see it."""

    agents: list[Agent]
    task: TaskPrompt
    transcript: Transcript
    max_turns: int
    rng: random.Random
    extract: Callable[[str], str | None]
    item_id: str = ""
    #: The task's one reading of a solution: a :class:`madeval.task.definition.Reading`, its answer or why it
    #: has none (the message's parse note), the extractor chain run once (:meth:`Task.read
    #: <madeval.task.definition.Task.read>`); None: ``extract`` reads the answer and no reason is said.
    read: Callable[[str], Any] | None = None
    turn: int = 0
    responder: Any = None
    paradigm: Any = None
    extract_mode: str = "task"
    #: Replies are asked for in their reply kind's JSON schema (``--structured-answers``).
    structured_answers: bool = False
    _gold: Any = None

    def reading(self, solution: str) -> tuple[Any, str | None]:
        """The answer in ``solution`` and, when it has none, why (``None`` when not said)."""
        if self.read is None:
            return self.extract(solution), None
        reading = self.read(solution)
        return reading.answer, reading.note

    def current_draft(self, agent: int | None = None) -> Message | None:
        """The draft behind the most recent solution-carrying message (visible to ``agent`` if given).

        An agreeing message carries the draft it backs, so in Relay the next agent learns the
        draft from the agreement even though it cannot see the draft's own message.
        """
        messages = self.transcript.messages
        for message in reversed(messages):
            if message.backs is not None and (agent is None or message.visible_to(agent)):
                return messages[message.backs]
        return None

    def stances(self) -> dict[int, int | None]:
        """For each voting agent that has spoken, the id of the draft its latest message backs."""
        latest = self.transcript.latest_by_agent()
        return {a.index: latest[a.index].backs for a in self.agents if not a.neutral and a.index in latest}

    def own_last(self, agent: int) -> Message | None:
        """The agent's own most recent message."""
        for message in reversed(self.transcript.messages):
            if message.agent == agent:
                return message
        return None

    def oracle_gold(self) -> Any:
        """The gold answer, for oracle components only; marks the transcript as an oracle run."""
        self.transcript.oracle = True
        return self._gold


@dataclass
class SpeakContext:
    """Everything a responder may use to write one agent's message."""

    agent: Agent
    stage: str
    turn: int
    task: TaskPrompt
    view: list[Message]
    current_draft: Message | None
    own_last: Message | None
    agents: list[Agent]
    state: DebateState

    def persona_line(self) -> str:
        """``"<name> (<description>)"`` for the prompts' "Your role:" line."""
        persona = self.agent.persona
        return f"{persona.name} ({persona.description})" if persona.description else persona.name


@dataclass
class DebateSetup:
    """One configuration's components, built and ready to debate."""

    personas: list[Any]
    responder: Responder
    paradigm: Paradigm
    decider: Decider
    agents: int
    max_turns: int
    neutral: list[bool] = field(default_factory=list)
    all_agents_draft_first: bool = False
    extract: str = "task"
    challenges: tuple[str, ...] = ()
    structured_answers: bool = False

    def voters(self) -> int:
        """The number of voting (non-neutral) agents."""
        return self.agents - sum(self.neutral)

    def validate(self) -> None:
        """Fail with one clear line if the components cannot work together."""
        if self.agents < 1:
            raise UsageError("a debate needs at least one agent")
        if self.max_turns < 1:
            raise UsageError("max_turns must be at least 1")
        if self.voters() < 1:
            raise UsageError(
                f"all {self.agents} agents are neutral: at least one agent must solve the task"
            )
        for component in (self.responder, self.paradigm, self.decider, *self.personas):
            component.validate(self)


class Component:
    """Shared behaviour: a name and a compatibility check."""

    #: The name it is registered under, set by :meth:`madeval.core.registry.Registry.create`.
    name: str

    def validate(self, setup: DebateSetup) -> None:
        """Raise :class:`UsageError` with one clear line if ``setup`` cannot work with this."""


class PersonaGenerator(Component):
    """Makes one persona per call. ``sequential`` generators see the personas made before."""

    sequential = True
    #: The fewest and the most calls one after another that :meth:`generate` makes for one agent (the
    #: bounds of a batch run's round trips; ``most_calls`` None: not known, as for a generator that
    #: does not say).
    least_calls: int = 0
    most_calls: int | None = None

    async def generate(
        self, agent: int, task: TaskPrompt, existing: list[Persona], llm: DebateLLM
    ) -> Persona:
        """Return the persona of agent ``agent`` (0-based), given those made so far."""
        raise NotImplementedError


class Responder(Component):
    """Writes one agent's message. Override :meth:`prompt` and :meth:`parse`, or :meth:`respond`."""

    #: True when replies carry an [AGREE]/[DISAGREE] stance that consensus can count.
    gives_agreement = True
    #: False when messages carry reasoning only; deciders then ask :meth:`final_solution`.
    shares_solutions = True

    def prompt(self, ctx: SpeakContext) -> list[dict[str, str]]:
        """The chat messages to send for this speaking turn."""
        raise NotImplementedError

    def parse(self, text: str, ctx: SpeakContext) -> Contribution:
        """Turn the model's reply into a contribution."""
        raise NotImplementedError

    def reply_kind(self, stage: str) -> ReplySchema | None:
        """The JSON schema a reply at ``stage`` is asked in with structured answers (``None``: text)."""
        return None

    @property
    def most_calls(self) -> int | None:
        """The most calls one after another that one :meth:`respond` makes (the bounds of a batch
        run's round trips): 1 for the default :meth:`respond`; None (not known) for a responder that
        overrides it without saying. :meth:`final_solution` is taken to make one call."""
        return 1 if type(self).respond is Responder.respond else None

    def structured(self, text: str, ctx: SpeakContext) -> dict[str, Any]:
        """The readable fields of ``text`` in :meth:`reply_kind`'s schema (none when structured
        answers are off or the reply is not structured: then the text is read as usual)."""
        return structured_fields(text, self.reply_kind(ctx.stage), ctx.state)

    async def respond(self, ctx: SpeakContext, llm: DebateLLM) -> Contribution:
        """Make the call(s) for one speaking turn; the default is one call, then :meth:`parse`."""
        asked = reply_in(self.reply_kind(ctx.stage), ctx.state)
        text = await llm.chat(ctx.agent.index, self.prompt(ctx), purpose=ctx.stage, **asked)
        return self.parse(text, ctx)

    async def final_solution(self, ctx: SpeakContext, llm: DebateLLM) -> str | None:
        """The agent's own final solution when messages do not carry one (``shares_solutions``
        is False); ``ctx`` is the agent's view at the end of the debate."""
        return None


class Paradigm(Component):
    """Turn order and visibility.

    :meth:`turn` yields the steps of one turn lazily, so a step may depend on what earlier steps
    said. :meth:`view` decides which messages an agent sees and in what order; the default shows
    the messages whose audience includes the agent from the last ``visible_turns`` turns (plus the
    current one), oldest first.
    """

    #: True when agents speak in order and can agree with a shared draft (consensus needs it).
    supports_agreement = True

    def __init__(self, visible_turns_in_memory: int = 2):
        if visible_turns_in_memory < 0:
            raise ValueError("visible_turns_in_memory must be >= 0")
        self.visible_turns = visible_turns_in_memory

    def turn(self, state: DebateState) -> Iterator[list[Speaker]]:
        """Yield the steps of turn ``state.turn``."""
        raise NotImplementedError

    def least_steps(self, agents: int) -> int:
        """The fewest steps one after another in a turn of ``agents`` agents (each step waits for
        the one before): a lower bound of the batch round trips a turn takes (the long-run note of
        ``--transport batch``). 1 unless a paradigm knows better."""
        return 1

    def most_steps(self, agents: int) -> int | None:
        """The most steps one after another in a turn of ``agents`` agents: with the responders'
        calls, an upper bound of the batch round trips a turn takes. None (not known) unless a
        paradigm says."""
        return None

    def view(self, agent: int, state: DebateState) -> list[Message]:
        """The messages ``agent`` sees now."""
        oldest = state.turn - self.visible_turns
        return [
            m for m in state.transcript.messages if m.turn >= oldest and m.visible_to(agent)
        ]

    def stage_for(self, agent: int, state: DebateState) -> str:
        """``"draft"`` for neutral agents and when the agent sees no draft yet, else ``"improve"``."""
        if state.agents[agent].neutral or state.current_draft(agent) is None:
            return "draft"
        return "improve"


class Decider(Component):
    """When to stop and what the answer is. Return ``None`` to continue."""

    #: True when the decider counts [AGREE]/[DISAGREE] stances (consensus).
    needs_agreement = False
    #: True when the decider only reads the finished transcript (replayable on stored debates).
    transcript_only = False
    #: The fewest non-neutral agents it needs: 2 for deciders that weigh several agents' positions
    #: (consensus, voting, the judge); 1 for those that also read a lone agent's answer
    #: (``counting``, as the single-model baselines do).
    min_voters = 1

    async def after_step(self, state: DebateState, llm: DebateLLM) -> Decision | None:
        """Called after every speaking step (after every message in sequential paradigms)."""
        return None

    async def after_turn(self, state: DebateState, llm: DebateLLM) -> Decision | None:
        """Called after every complete turn."""
        return None

    async def at_max_turns(self, state: DebateState, llm: DebateLLM) -> Decision:
        """The recorded fallback at ``max_turns``: the first agent's solution, not a success."""
        return fallback_first_agent(state, self.name)

    def least_chain(self, first_turn: int, turn: int, max_turns: int, final: int = 0) -> int:
        """The fewest calls one after another in a debate whose first turn takes at least
        ``first_turn`` steps and each later one ``turn`` (of ``max_turns``), when an agent's final
        solution takes ``final`` calls (0 or 1): a lower bound of the batch round trips the debate
        needs. A decider that may end a debate after any step (:meth:`after_step`) gives 1; one that
        decides only after a turn, the first turn."""
        return 1 if type(self).after_step is not Decider.after_step else first_turn

    def most_chain(self, first_turn: int, turn: int, max_turns: int, final: int) -> int | None:
        """The most calls one after another in a debate whose first turn takes at most ``first_turn``
        calls one after another and each later one ``turn`` (of ``max_turns``), when an agent's final
        solution takes ``final`` calls (0 or 1): an upper bound of the batch round trips the debate
        needs (calls sent again after a failure aside). None (not known) unless a decider says."""
        return None

    def validate(self, setup: DebateSetup) -> None:
        if self.needs_agreement and not (
            setup.paradigm.supports_agreement and setup.responder.gives_agreement
        ):
            raise UsageError(
                f"decider '{self.name}' counts agreement, but paradigm '{setup.paradigm.name}' with "
                f"responder '{setup.responder.name}' gives no [AGREE]/[DISAGREE] stance to count"
            )
        if setup.voters() < self.min_voters:
            raise UsageError(
                f"decider '{self.name}' decides between several agents, but only {setup.voters()} "
                f"agent votes (neutral agents do not): use at least {self.min_voters} non-neutral agents"
            )


class AnswerDecider(Decider):
    """Base of deciders that read nothing but the answers in the agents' messages, with no LLM
    call (``counting``, Free-MAD's score): they decide after turn ``after_turns`` (0: at
    ``max_turns``) by :meth:`decide`, and refuse responders that share no solutions."""

    transcript_only = True

    def __init__(self, after_turns: int = 0):
        if after_turns < 0:
            raise ValueError("after_turns must be >= 0 (0 = at max_turns)")
        self.after_turns = after_turns

    def validate(self, setup: DebateSetup) -> None:
        super().validate(setup)
        if not setup.responder.shares_solutions:
            raise UsageError(
                f"decider '{self.name}' reads the answers in messages, but responder "
                f"'{setup.responder.name}' shares no solutions"
            )

    async def after_turn(self, state: DebateState, llm: DebateLLM) -> Decision | None:
        last = self.after_turns or state.max_turns
        return self.decide(state) if state.turn >= last else None

    async def at_max_turns(self, state: DebateState, llm: DebateLLM) -> Decision:
        return self.decide(state)

    def least_chain(self, first_turn: int, turn: int, max_turns: int, final: int = 0) -> int:
        """The turns until it decides (no call of its own)."""
        return first_turn + (self._deciding_turn(max_turns) - 1) * turn

    def most_chain(self, first_turn: int, turn: int, max_turns: int, final: int) -> int:
        """The turns until it decides, at most (no call of its own): always the same turn."""
        return first_turn + (self._deciding_turn(max_turns) - 1) * turn

    def _deciding_turn(self, max_turns: int) -> int:
        """The turn it decides after: ``after_turns``, or ``max_turns`` when that comes first."""
        return min(self.after_turns or max_turns, max_turns)

    def decide(self, state: DebateState) -> Decision:
        """The decision on the answers in ``state`` now."""
        raise NotImplementedError


def fallback_first_agent(state: DebateState, decider: str) -> Decision:
    """The max-turns fallback of the Voting-or-Consensus paper: the first agent's solution."""
    voters = [a.index for a in state.agents if not a.neutral]
    held = state.transcript.held_by_agent()
    first = held.get(voters[0]) if voters else None
    answer = first.solution if first is not None else None
    return Decision(
        answer=answer,
        success=False,
        turn=state.turn,
        decider=decider,
        reason="max_turns_fallback_first_agent",
        details={"agent": voters[0] if voters else None},
    )
