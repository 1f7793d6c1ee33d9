"""Replaying a decider on a stored debate: a new decision, no new discussion.

A decider that only reads the transcript (``Decider.transcript_only``: counting, voting after a
fixed number of turns, Free-MAD's score) decides the same way whether it ran live or is applied
later to the recorded messages, because deciders do not change what agents say. :func:`replay`
re-runs the debate loop of :mod:`madeval.debate` with the recorded messages in place of the
agents: the configuration's paradigm yields each step, the step's recorded messages are added,
and the decider is asked after every step and turn exactly as live. The decider may make its own
calls (votes, extraction, judge) through the :class:`madeval.components.DebateLLM` it receives;
no persona or speaking call is ever made.

A recorded debate that stopped (at its own decider's decision) before the replayed decider
decides cannot be continued: :class:`ReplayIncomplete`. Run the debates with a decider that never
stops early (e.g. ``counting`` at ``max_turns``) to replay any decider that decides within them.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any, Callable

from .components import DebateLLM, DebateSetup, DebateState, TaskPrompt
from .debate import steps_for as paradigm_steps
from .errors import MadevalError
from .transcript import Agent, Call, Message, Transcript

#: Call purposes that belong to the discussion besides the speaking stages (kept in the costs).
DISCUSSION_PURPOSES = ("persona", "agreement")


class ReplayIncomplete(MadevalError):
    """The stored debate ended before the replayed decider decided."""


class ReplayMismatch(MadevalError):
    """The stored messages do not follow the configuration's paradigm."""


async def replay(
    setup: DebateSetup,
    recorded: Transcript,
    task: TaskPrompt,
    llm_for: Callable[[Transcript], DebateLLM],
    *,
    extract: Callable[[str], str | None],
    rng: random.Random,
    item_id: str = "",
    gold: Any = None,
) -> Transcript:
    """Apply ``setup.decider`` to the debate in ``recorded``; return the replayed transcript.

    ``llm_for(transcript)`` gives the LLM access the decider's own calls go through, recording
    them in the new transcript. The result holds the messages up to the decision, the recorded
    discussion calls up to the decision turn followed by the decider's new calls, the decider's
    events and the new decision.
    """
    transcript = Transcript(agents=[Agent(**vars(a)) for a in recorded.agents], oracle=recorded.oracle)
    llm = llm_for(transcript)
    state = DebateState(
        agents=transcript.agents, task=task, transcript=transcript, max_turns=setup.max_turns, rng=rng,
        extract=extract, item_id=item_id, responder=setup.responder, paradigm=setup.paradigm,
        extract_mode=setup.extract, _gold=gold,
    )
    steps = _recorded_steps(recorded.messages)
    decision = None
    for turn in range(1, setup.max_turns + 1):
        state.turn = turn
        transcript.turns_used = turn
        stored = steps.get(turn, [])
        played = 0
        for step in paradigm_steps(setup, state):
            if played == len(stored):
                raise ReplayIncomplete(f"the stored debate ended in turn {turn}, before '{setup.decider.name}' decided")
            messages = stored[played]
            played += 1
            if [m.agent for m in messages] != [s.agent for s in step]:
                raise ReplayMismatch(f"turn {turn} step {played}: stored speakers differ from the paradigm's")
            transcript.messages.extend(messages)
            decision = await setup.decider.after_step(state, llm)
            if decision is not None:
                break
        if decision is None:
            if played < len(stored):
                raise ReplayMismatch(f"turn {turn} has more stored steps than the paradigm yields")
            decision = await setup.decider.after_turn(state, llm)
        if decision is not None:
            break
    if decision is None:
        decision = await setup.decider.at_max_turns(state, llm)
    transcript.decision = decision
    transcript.calls[:0] = discussion_calls(recorded, transcript.turns_used)
    return transcript


def _recorded_steps(messages: list[Message]) -> dict[int, list[list[Message]]]:
    """Recorded messages grouped by turn, then by step, in recorded order."""
    grouped: dict[tuple[int, int], list[Message]] = defaultdict(list)
    for message in messages:
        grouped[(message.turn, message.step)].append(message)
    steps: dict[int, list[list[Message]]] = defaultdict(list)
    for (turn, _step), group in sorted(grouped.items()):
        steps[turn].append(group)
    return steps


def discussion_calls(recorded: Transcript, up_to_turn: int) -> list[Call]:
    """The recorded persona and speaking calls up to ``up_to_turn`` (not the old decider's)."""
    stages = {m.stage for m in recorded.messages}
    return [
        call for call in recorded.calls
        if call.turn <= up_to_turn and (call.purpose in stages or call.purpose in DISCUSSION_PURPOSES)
    ]
