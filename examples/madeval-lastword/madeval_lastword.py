"""madeval-lastword: a decider where the last speaker's solution wins after the first turn."""
from madeval import Decider, Decision, hookimpl


class LastWord(Decider):
    """After the first turn, the solution of the turn's last message is the answer."""

    async def after_turn(self, state, llm):
        return Decision(state.transcript.messages[-1].solution, True, state.turn, self.name, "last word")


@hookimpl
def register_deciders(register):
    register("last_word", LastWord)
