"""Each agent's final solution, as deciders need it (votes, judge, consensus with --extract llm).

By default (``extract: task``) the final solution is read from the agent's latest message: the
text after its last "Final Solution:" marker, else the whole solution; no LLM call. With
``extract: llm`` every agent is asked, in parallel, with MALLM's extraction prompt (MALLM paper,
Figure 25), as MALLM does. Responders whose messages carry no solution (Reasoning) are asked for
one through :meth:`madeval.core.components.Responder.final_solution`.
"""

from __future__ import annotations

import asyncio

from madeval.builtins.extractors import last_final_marker
from madeval.core.components import DebateLLM, DebateState, SpeakContext
from madeval.debate.prompts import mallm
from madeval.llm.structured import SOLUTION, reply_in, solution_of


def solution_text(solution: str | None) -> str | None:
    """The text after the last "Final Solution:" marker, else the whole solution."""
    if not solution:
        return None
    marker = last_final_marker(solution)
    text = solution[marker.end():].strip() if marker else solution.strip()
    return text or solution.strip()


async def final_solutions(state: DebateState, llm: DebateLLM, agents: list[int]) -> dict[int, str | None]:
    """The final solution of each agent in ``agents`` (``None`` when it has none)."""
    results = await asyncio.gather(*(final_solution(state, llm, agent) for agent in agents))
    return dict(zip(agents, results))


async def final_solution(state: DebateState, llm: DebateLLM, agent: int) -> str | None:
    """One agent's final solution (see the module docstring for the modes)."""
    latest = state.own_last(agent)
    if not state.responder.shares_solutions:
        return solution_text(await state.responder.final_solution(context_for(state, agent), llm))
    if state.extract_mode == "llm":
        previous = latest.text if latest is not None else ""
        return solution_text(await extract_with_llm(state, llm, agent, previous))
    held = state.transcript.held_by_agent().get(agent)
    return solution_text(held.solution) if held is not None else None


async def extract_with_llm(state: DebateState, llm: DebateLLM, agent: int, previous: str) -> str:
    """MALLM's final answer extraction (Figure 25) for ``previous`` as ``agent``."""
    persona = state.agents[agent].persona
    role = f"{persona.name} ({persona.description})" if persona.description else persona.name
    messages = [
        {"role": "system", "content": mallm.ROLE_SYSTEM.format(persona=role)},
        {
            "role": "user",
            "content": mallm.fill(
                mallm.EXTRACT_USER,
                instruction=state.task.instruction, input=state.task.input, previous=previous
            ),
        },
    ]
    said = await llm.chat(agent, messages, purpose="extraction", **reply_in(SOLUTION, state))
    return solution_of(said, state)


def context_for(state: DebateState, agent: int) -> SpeakContext:
    """What ``agent`` sees at the end of the debate, for a final-solution prompt."""
    person = state.agents[agent]
    return SpeakContext(
        agent=person,
        stage="final",
        turn=state.turn,
        task=state.task,
        view=state.paradigm.view(agent, state),
        current_draft=state.current_draft(agent),
        own_last=state.own_last(agent),
        agents=state.agents,
        state=state,
    )
