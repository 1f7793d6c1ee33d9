"""The judge decider (MALLM paper, Section 3.3 and Figure 30)."""

from __future__ import annotations

from madeval.builtins.finals import final_solutions
from madeval.builtins.voting import NO_SOLUTION
from madeval.core.components import DebateLLM, DebateState, Decider
from madeval.core.hookspecs import hookimpl
from madeval.core.transcript import Decision
from madeval.debate.prompts import mallm
from madeval.errors import UsageError
from madeval.llm.structured import SOLUTION, reply_in, solution_of


class Judge(Decider):
    """A separate judge reviews every agent's final solution and picks or synthesises one.

    After turn ``after_turns`` (default 3, like the voting deciders), the judge model (the
    configuration's ``judge_model``, by default agent 1's model, but always a separate call with
    no persona) receives the task, the question and "Solution 1..N" and answers with the solution
    (Figure 30). Its reply is the final answer. An empty reply means one more turn.
    """

    transcript_only = True  # reads the transcript; replay can apply it to stored debates
    min_voters = 2

    def __init__(self, after_turns: int = 3):
        if after_turns < 1:
            raise ValueError("after_turns must be at least 1")
        self.after_turns = after_turns

    def validate(self, setup) -> None:
        super().validate(setup)
        if setup.max_turns < self.after_turns:
            raise UsageError(
                f"decider 'judge' decides after {self.after_turns} turns, but max_turns is {setup.max_turns}"
            )

    def least_chain(self, first_turn: int, turn: int, max_turns: int, final: int = 0) -> int:
        """The turns until the judge is asked, the agents' final solutions, then its call."""
        return first_turn + (self.after_turns - 1) * turn + final + 1

    def most_chain(self, first_turn: int, turn: int, max_turns: int, final: int) -> int:
        """Every turn, and after each from ``after_turns`` on (an empty verdict goes on) the agents'
        final solutions, then the judge's call."""
        return first_turn + (max_turns - 1) * turn + (max_turns - self.after_turns + 1) * (final + 1)

    async def after_turn(self, state: DebateState, llm: DebateLLM) -> Decision | None:
        if state.turn < self.after_turns:
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
