"""The judge decider (MALLM paper, Section 3.3 and Figure 30)."""

from __future__ import annotations

from madeval.builtins.finals import final_solutions
from madeval.builtins.from_turn import FromTurnDecider
from madeval.builtins.voting import NO_SOLUTION
from madeval.core.components import DebateLLM, DebateState
from madeval.core.hookspecs import hookimpl
from madeval.core.transcript import Decision
from madeval.debate.prompts import mallm
from madeval.llm.structured import SOLUTION, reply_in, solution_of


class Judge(FromTurnDecider):
    """A separate judge reviews every agent's final solution and picks or synthesises one.

    After turn ``after_turns`` (default 3, like the voting deciders), the judge model (the
    configuration's ``judge_model``, by default agent 1's model, but always a separate call with
    no persona) receives the task, the question and "Solution 1..N" and answers with the solution
    (Figure 30). Its reply is the final answer. An empty reply means one more turn.
    """

    def __init__(self, after_turns: int = 3):
        super().__init__(after_turns)

    async def after_turn(self, state: DebateState, llm: DebateLLM) -> Decision | None:
        if state.turn < self.start_turn:
            return None
        voters = [a.index for a in state.agents if not a.neutral]
        finals = await final_solutions(state, llm, voters)
        solutions = [finals[agent] or NO_SOLUTION for agent in voters]
        prompt = mallm.fill(
            mallm.JUDGE_USER,
            instruction=state.task.instruction, input=state.task.input, solutions=mallm.solution_lines(solutions)
        )
        verdict = await llm.chat(None, [{"role": "user", "content": prompt}], purpose="judge",
                                 **reply_in(SOLUTION, state))
        state.transcript.events.append(
            {"kind": "judge", "turn": state.turn, "solutions": solutions, "verdict": verdict}
        )
        if not verdict.strip():
            return None
        return Decision(solution_of(verdict, state), True, state.turn, self.name, "judge",
                        {"solutions": len(solutions)})


@hookimpl
def register_deciders(register):
    """The judge decider."""
    register("judge", Judge)
