"""The debate loop: personas, then turns of speaking steps, with the decider after each step.

This is the one place where a debate happens, and :func:`decide` the one place where a decider
decides: a live debate and a replayed transcript (:mod:`madeval.debate.replay`) both go through it. See
:mod:`madeval.core.components` for the contracts of the components it drives and
:mod:`madeval.core.transcript` for what it records.
"""

from __future__ import annotations

import asyncio
import random
from typing import Any, Awaitable, Callable, Iterable

from madeval.core.components import Contribution, DebateLLM, DebateSetup, DebateState, SpeakContext, Speaker, TaskPrompt
from madeval.core.transcript import NO_ANSWER, Agent, Decision, Message, Persona, Transcript
from madeval.debate.challenge import run_challenges

#: Neutral agents (MALLM's moderators) get this persona and no generated one.
MODERATOR = Persona(
    name="Moderator",
    description="A neutral moderator who drafts solutions from the discussion and does not vote.",
    generator="neutral",
)


async def run_debate(
    setup: DebateSetup,
    task: TaskPrompt,
    llm: DebateLLM,
    *,
    agents: list[Agent],
    extract: Callable[[str], str | None],
    rng: random.Random,
    item_id: str = "",
    gold: Any = None,
    transcript: Transcript | None = None,
    read: Callable[[str], Any] | None = None,
) -> Transcript:
    """Run one debate to a decision and return its transcript.

    ``agents`` carry each agent's model and endpoint; their personas are filled in here.
    ``extract`` turns solution text into the task's answer (for example ``"B"``); ``gold`` is only
    reachable through :meth:`DebateState.oracle_gold`, which marks the transcript as an oracle.
    ``read`` reads a solution once for its answer and, when it has none, why (:meth:`Task.read
    <madeval.task.definition.Task.read>`); the reason becomes the message's parse note
    (:data:`madeval.core.transcript.NO_ANSWER`). Without it ``extract`` reads solutions and no reason
    is noted; deciders and challenges read answers with ``extract`` either way.
    """
    transcript = transcript if transcript is not None else Transcript()
    transcript.agents = agents
    state = debate_state(setup, task, transcript, rng=rng, extract=extract, item_id=item_id, gold=gold,
                         read=read)
    await _make_personas(setup, state, llm)
    await decide(setup, state, llm)
    if setup.challenges:
        await run_challenges(setup.challenges, state, llm)
    return transcript


def debate_state(
    setup: DebateSetup,
    task: TaskPrompt,
    transcript: Transcript,
    *,
    rng: random.Random,
    extract: Callable[[str], str | None],
    item_id: str = "",
    gold: Any = None,
    read: Callable[[str], Any] | None = None,
) -> DebateState:
    """The state of a debate of ``setup`` about to start: turn 0, the agents of ``transcript``."""
    return DebateState(
        agents=transcript.agents, task=task, transcript=transcript, max_turns=setup.max_turns, rng=rng,
        extract=extract, read=read, item_id=item_id, responder=setup.responder, paradigm=setup.paradigm,
        extract_mode=setup.extract, structured_answers=setup.structured_answers, _gold=gold,
    )


#: Adds one step's messages to the transcript: the agents speak (live) or are read back (replay).
Speak = Callable[[DebateSetup, DebateState, DebateLLM, list[Speaker]], Awaitable[None]]
#: The steps of the current turn (``state.turn``), lazily: a step may depend on the ones before.
Steps = Callable[[DebateSetup, DebateState], Iterable[list[Speaker]]]


async def decide(
    setup: DebateSetup, state: DebateState, llm: DebateLLM, *, speak: Speak | None = None, steps: Steps | None = None
) -> Decision:
    """The decide loop: turns of steps, ``setup.decider`` asked after every step and every turn.

    Each turn sets ``state.turn`` and the transcript's ``turns_used``; each step is spoken
    (``speak``, by default the agents answer: :func:`speak_step`) and the decider's
    ``after_step`` is asked; when no step decided, ``after_turn`` is. The first decision ends
    the debate; none by ``max_turns`` gives ``at_max_turns``'s fallback. The decision is stored
    in the transcript and returned. A replayed debate goes through this same loop with the
    recorded messages spoken (:mod:`madeval.debate.replay`).
    """
    speak = speak or speak_step
    steps = steps or steps_for
    decision: Decision | None = None
    for turn in range(1, setup.max_turns + 1):
        state.turn = turn
        state.transcript.turns_used = turn
        for step in steps(setup, state):
            await speak(setup, state, llm, step)
            decision = await setup.decider.after_step(state, llm)
            if decision is not None:
                break
        if decision is None:
            decision = await setup.decider.after_turn(state, llm)
        if decision is not None:
            break
    if decision is None:
        decision = await setup.decider.at_max_turns(state, llm)
    state.transcript.decision = decision
    return decision


def steps_for(setup: DebateSetup, state: DebateState) -> Iterable[list[Speaker]]:
    """The paradigm's steps; with All-Agents Drafting, turn 1 is one step of independent drafts."""
    if setup.all_agents_draft_first and state.turn == 1:
        return [[Speaker(agent.index, "draft") for agent in state.agents if not agent.neutral]]
    return setup.paradigm.turn(state)


async def _make_personas(setup: DebateSetup, state: DebateState, llm: DebateLLM) -> None:
    """Fill in each agent's persona; sequential generators see the personas made before."""
    made: list[Any] = [None] * len(state.agents)
    independent = []
    for index, generator in enumerate(setup.personas):
        if state.agents[index].neutral:
            made[index] = MODERATOR
        elif generator.sequential:
            existing = [p for p in made if p is not None]
            made[index] = await generator.generate(index, state.task, existing, llm)
        else:
            independent.append(index)
    if independent:
        results = await asyncio.gather(
            *(setup.personas[i].generate(i, state.task, [], llm) for i in independent)
        )
        for index, persona in zip(independent, results):
            made[index] = persona
    for agent, persona in zip(state.agents, made):
        agent.persona = persona


async def speak_step(
    setup: DebateSetup, state: DebateState, llm: DebateLLM, step: list[Speaker]
) -> None:
    """Let every speaker of one step talk at once; each sees only what existed before the step."""
    contexts = [_context(setup, state, speaker) for speaker in step]
    replies = await asyncio.gather(*(setup.responder.respond(ctx, llm) for ctx in contexts))
    step_index = len({(m.turn, m.step) for m in state.transcript.messages if m.turn == state.turn})
    for speaker, ctx, reply in zip(step, contexts, replies):
        state.transcript.messages.append(_message(state, speaker, ctx, reply, step_index))


def _context(setup: DebateSetup, state: DebateState, speaker: Speaker) -> SpeakContext:
    agent = state.agents[speaker.agent]
    return SpeakContext(
        agent=agent,
        stage=speaker.stage,
        turn=state.turn,
        task=state.task,
        view=setup.paradigm.view(agent.index, state),
        current_draft=state.current_draft(agent.index),
        own_last=state.own_last(agent.index),
        agents=state.agents,
        state=state,
    )


def _message(
    state: DebateState, speaker: Speaker, ctx: SpeakContext, reply: Contribution, step: int
) -> Message:
    """Record a reply; an agreeing reply backs (and carries) the draft the agent saw."""
    message_id = len(state.transcript.messages)
    draft = ctx.current_draft
    notes = reply.notes
    if reply.agreement is True and draft is not None:
        solution, answer, backs = draft.solution, draft.answer, draft.id
    elif reply.solution is not None:
        solution, backs = reply.solution, message_id
        answer, why = state.reading(solution)
        if answer is None and why is not None:
            notes = (*notes, f"{NO_ANSWER}: {why}")
    else:
        solution, answer, backs = None, None, None
    return Message(
        id=message_id, turn=state.turn, step=step, agent=speaker.agent, stage=speaker.stage, text=reply.text,
        solution=solution, answer=answer, agreement=reply.agreement, backs=backs, confidence=reply.confidence,
        audience=speaker.audience, parse_notes=notes,
    )
