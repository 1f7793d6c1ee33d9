"""The Society-of-Minds responder (Du et al. 2023) as MADC (Key Decision-Makers in Multi-Agent Debates) runs it.

Every agent keeps its own conversation, as in both repositories: the opening question, its first
answer, then per later turn one update prompt and its answer. The update prompt lists the peers'
latest solutions in the order of the paradigm's :meth:`~madeval.core.components.Paradigm.view` (so an
allocation strategy or a communication attack only has to change the view); the agent's own
messages are left out of that list. An agent that sees no peer gets the double-check prompt.
"""

from __future__ import annotations

from madeval import Contribution, Message, Responder, SpeakContext

from . import prompts

FORMATS = ("task", "paper")


class SocietyOfMinds(Responder):
    """Society of Minds (Du et al.): answer, then update given the other agents' solutions.

    ``answer_format``: ``task`` (default) asks for the answer in the task's own format; ``paper``
    keeps Du et al.'s "(X)" sentences verbatim (multiple-choice tasks). ``system``: an optional
    system prompt (MADC uses "You are a helpful assistant.").
    """

    gives_agreement = False
    #: The sentence after the peers' solutions; Free-MAD's anti-conformity responder replaces it.
    advice = prompts.UPDATE_ADVICE

    def __init__(self, answer_format: str = "task", system: str = ""):
        if answer_format not in FORMATS:
            raise ValueError(f"answer_format must be one of {', '.join(FORMATS)}, got '{answer_format}'")
        self.answer_format = answer_format
        self.system = system
        self._sent: dict[tuple[int, int], str] = {}
        self._transcript = None

    # -- the three prompts ------------------------------------------------------------------

    def question(self, ctx: SpeakContext) -> str:
        """The item as the opening question shows it (input, then any context)."""
        task = ctx.task
        return f"{task.input}\n\nContext: {task.context}" if task.context else task.input

    def opening(self, ctx: SpeakContext) -> str:
        """The first prompt: Du et al.'s opening question."""
        if self.answer_format == "paper":
            return prompts.INITIAL.format(question=self.question(ctx))
        return prompts.INITIAL_TASK.format(question=self.question(ctx), instruction=ctx.task.instruction)

    def update(self, ctx: SpeakContext, peers: list[Message]) -> str:
        """The update prompt: the peers' solutions in view order, the advice, the format line."""
        if not peers:
            if self.answer_format == "paper":
                return prompts.DOUBLE_CHECK
            return prompts.DOUBLE_CHECK_TASK.format(instruction=ctx.task.instruction)
        blocks = "".join(prompts.PEER_BLOCK.format(text=m.text) for m in peers)
        return prompts.UPDATE_PREFIX + blocks + self.advice + self.format_line(ctx)

    def format_line(self, ctx: SpeakContext) -> str:
        """The sentence that asks for the answer format, after the advice."""
        if self.answer_format == "paper":
            return prompts.UPDATE_FORMAT
        return prompts.TASK_FORMAT.format(instruction=ctx.task.instruction)

    # -- the conversation ----------------------------------------------------------------------

    @staticmethod
    def peers(ctx: SpeakContext) -> list[Message]:
        """The other agents' messages in the agent's view, in the paradigm's order."""
        return [m for m in ctx.view if m.agent != ctx.agent.index]

    def prompt(self, ctx: SpeakContext) -> list[dict[str, str]]:
        """The agent's whole conversation so far plus this turn's prompt."""
        if self._transcript is not ctx.state.transcript:  # a new debate: forget the old one
            self._transcript, self._sent = ctx.state.transcript, {}
        me = ctx.agent.index
        own = [m for m in ctx.state.transcript.messages if m.agent == me]
        messages = [{"role": "system", "content": self.system}] if self.system else []
        for number, answer in enumerate(own):
            sent = self._sent.get((me, number))
            if sent is None:  # written by another instance (e.g. a replay): rebuild the opening
                sent = self.opening(ctx) if number == 0 else self.update(ctx, [])
            messages.append({"role": "user", "content": sent})
            messages.append({"role": "assistant", "content": answer.text})
        user = self.opening(ctx) if not own else self.update(ctx, self.peers(ctx))
        self._sent[(me, len(own))] = user
        messages.append({"role": "user", "content": user})
        return messages

    def parse(self, text: str, ctx: SpeakContext) -> Contribution:
        """The whole reply is the solution; the task's extractor finds the answer in it."""
        return Contribution(text, text.strip() or None)
