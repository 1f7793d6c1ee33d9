"""Replaying a decider on a stored debate: a new decision, no new discussion.

A decider that only reads the transcript (``Decider.transcript_only``: counting, voting after a
fixed number of turns, Free-MAD's score) decides the same way whether it ran live or is applied
later to the recorded messages, because deciders do not change what agents say. :func:`replay`
goes through the decide loop of a live debate (:func:`madeval.debate.loop.decide`) with the recorded
messages in place of the agents: the configuration's paradigm yields each step, the step's
recorded messages are added, and the decider is asked after every step and turn exactly as live.
The decider may make its own calls (votes, extraction, judge) through the
:class:`madeval.core.components.DebateLLM` it receives; no persona or speaking call is ever made.

A recorded debate that stopped (at its own decider's decision) before the replayed decider
decides cannot be continued: :class:`ReplayIncomplete`. Run the debates with a decider that never
stops early (e.g. ``counting`` at ``max_turns``) to replay any decider that decides within them.
"""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any, Callable, Iterator

from madeval.core.components import DebateLLM, DebateSetup, DebateState, Speaker, TaskPrompt
from madeval.core.transcript import Agent, Call, Message, Transcript
from madeval.debate.loop import debate_state, decide, steps_for
from madeval.errors import MadevalError

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
    state = debate_state(setup, task, transcript, rng=rng, extract=extract, item_id=item_id, gold=gold)
    playback = _Playback(recorded.messages)
    await decide(setup, state, llm_for(transcript), speak=playback.speak, steps=playback.steps)
    transcript.calls[:0] = discussion_calls(recorded, transcript.turns_used)
    return transcript


class _Playback:
    """The recorded messages, handed to :func:`madeval.debate.loop.decide` step by step in the order
    the configuration's paradigm asks for them, each step checked against the paradigm's."""

    def __init__(self, messages: list[Message]):
        grouped: dict[tuple[int, int], list[Message]] = defaultdict(list)
        for message in messages:
            grouped[(message.turn, message.step)].append(message)
        self.stored: dict[int, list[list[Message]]] = defaultdict(list)  # turn -> its steps, in recorded order
        for (turn, _step), group in sorted(grouped.items()):
            self.stored[turn].append(group)
        self.next: list[Message] = []

    def steps(self, setup: DebateSetup, state: DebateState) -> Iterator[list[Speaker]]:
        """The paradigm's steps of this turn; the recorded step for each is kept for :meth:`speak`.

        A paradigm step with no recorded step left is :class:`ReplayIncomplete`; recorded speakers
        that differ, or recorded steps left when the paradigm's turn is over, :class:`ReplayMismatch`.
        """
        turn, stored = state.turn, self.stored.get(state.turn, [])
        played = 0
        for step in steps_for(setup, state):
            if played == len(stored):
                raise ReplayIncomplete(f"the stored debate ended in turn {turn}, before '{setup.decider.name}' decided")
            self.next = stored[played]
            played += 1
            if [m.agent for m in self.next] != [s.agent for s in step]:
                raise ReplayMismatch(f"turn {turn} step {played}: stored speakers differ from the paradigm's")
            yield step
        if played < len(stored):
            raise ReplayMismatch(f"turn {turn} has more stored steps than the paradigm yields")

    async def speak(self, setup: DebateSetup, state: DebateState, llm: DebateLLM, step: list[Speaker]) -> None:
        """Add the recorded messages of the step :meth:`steps` yielded last (no agent is asked)."""
        state.transcript.messages.extend(self.next)


def discussion_calls(recorded: Transcript, up_to_turn: int) -> list[Call]:
    """The recorded persona and speaking calls up to ``up_to_turn`` (not the old decider's)."""
    stages = {m.stage for m in recorded.messages}
    return [
        call for call in recorded.calls
        if call.turn <= up_to_turn and (call.purpose in stages or call.purpose in DISCUSSION_PURPOSES)
    ]
