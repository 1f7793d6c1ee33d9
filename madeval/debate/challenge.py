"""The challenge round (Voting or Consensus?, Section 4.2 and Appendix E.3).

After the decision, every voting agent is shown a final answer and asked to AGREE or DISAGREE
(Figure 20); an agent that disagrees is asked for a new answer (Figure 21). Variants:

* ``plain``: the debate's final answer alone;
* ``history``: the final answer with the discussion that led to it;
* ``wrong``: an incorrect answer written by the judge model for the occasion, to see whether
  agents catch it.

Each variant adds one ``challenge`` event to the transcript with every agent's raw reply, its
stance and its new solution and answer; the decision itself is not changed.
"""

from __future__ import annotations

import asyncio
from typing import Any

from madeval.core.components import DebateLLM, DebateState
from madeval.debate.agreement import parse_agreement
from madeval.debate.prompts import madeval as own
from madeval.debate.prompts import mallm
from madeval.errors import UsageError

VARIANTS = ("plain", "history", "wrong")


def check_variants(variants: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Validated challenge variants."""
    unknown = [v for v in variants if v not in VARIANTS]
    if unknown:
        raise UsageError(f"unknown challenge {', '.join(unknown)}; choose from {', '.join(VARIANTS)}")
    return tuple(variants)


async def run_challenges(variants: tuple[str, ...], state: DebateState, llm: DebateLLM) -> None:
    """Run every requested challenge variant and record it."""
    decision = state.transcript.decision
    for variant in variants:
        if variant == "wrong":
            prompt = mallm.fill(own.WRONG_ANSWER, instruction=state.task.instruction, input=state.task.input)
            shown = await llm.chat(None, [{"role": "user", "content": prompt}], purpose="challenge_wrong")
        else:
            shown = decision.answer or ""
        voters = [a.index for a in state.agents if not a.neutral]
        results = await asyncio.gather(*(_challenge(state, llm, agent, variant, shown) for agent in voters))
        state.transcript.events.append(
            {"kind": "challenge", "variant": variant, "final_answer": shown, "results": list(results)}
        )


async def _challenge(state: DebateState, llm: DebateLLM, agent: int, variant: str, shown: str) -> dict[str, Any]:
    persona = state.agents[agent].persona
    role = f"{persona.name} ({persona.description})" if persona.description else persona.name
    system = {"role": "system", "content": mallm.CHALLENGE_SYSTEM.format(persona=role)}
    prefix = ""
    if variant == "history":
        names = {a.index: a.persona.name for a in state.agents}
        history = "\n".join(own.MEMORY_ENTRY.format(name=names[m.agent],
                                                    text=m.text) for m in state.transcript.messages)
        prefix = own.CHALLENGE_HISTORY.format(history=history)
    fields = {"instruction": state.task.instruction, "input": state.task.input, "final_answer": shown}
    reply = await llm.chat(
        agent, [system, {"role": "user", "content": prefix + mallm.CHALLENGE_USER.format(**fields)}],
        purpose="challenge",
    )
    agrees, _ = parse_agreement(reply)
    result: dict[str, Any] = {"agent": agent, "reply": reply, "agrees": agrees, "new_solution": None,
                              "new_answer": None}
    if agrees is False:
        new = await llm.chat(
            agent, [system, {"role": "user", "content": prefix + mallm.CHALLENGE_NEW_ANSWER.format(**fields)}],
            purpose="challenge_answer",
        )
        result["new_solution"] = new
        result["new_answer"] = state.extract(new)
    return result
