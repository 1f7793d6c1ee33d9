"""Built-in responders: the MALLM prompt family (seed 000, Appendix G.3).

A MALLM-style responder sends the general debate system prompt (Figure 11) followed by one user
prompt per stage. Subclasses change only the per-stage wording.
"""

from __future__ import annotations

from .. import hookimpl
from ..agreement import parse_agreement, strip_markers
from ..components import Contribution, Responder, SpeakContext
from ..prompts import madeval as own
from ..prompts import mallm


def debate_system_prompt(ctx: SpeakContext) -> str:
    """Figure 11 filled in: persona, task, input, context, current solution and memory."""
    context_line = mallm.CONTEXT_LINE.format(context=ctx.task.context) if ctx.task.context else ""
    if ctx.current_draft is None and not ctx.view:
        discussion = mallm.NO_SOLUTION_YET
    else:
        names = {a.index: a.persona.name for a in ctx.agents}
        memory = "\n".join(
            own.MEMORY_ENTRY.format(name=names.get(m.agent, f"Agent {m.agent + 1}"), text=m.text)
            for m in ctx.view
        )
        shown = ctx.own_last if ctx.stage == "refine" else ctx.current_draft
        draft = shown.solution or "" if shown is not None else ""
        discussion = mallm.DISCUSSION_LINES.format(draft=draft, memory="\n" + memory if memory else "")
    return mallm.DEBATE_SYSTEM.format(
        persona=ctx.persona_line(),
        instruction=ctx.task.instruction,
        input=ctx.task.input,
        context_line=context_line,
        discussion=discussion,
    )


class MallmResponder(Responder):
    """Base of the MALLM responders: Figure 11 system prompt plus one user prompt per stage."""

    first_draft = mallm.FIRST_DRAFT
    draft = mallm.SIMPLE_DRAFT
    improve = mallm.SIMPLE_IMPROVE
    feedback = mallm.SIMPLE_FEEDBACK
    refine = own.REFINE

    def user_prompt(self, ctx: SpeakContext) -> str:
        """The stage's user prompt."""
        if ctx.stage == "draft":
            return self.first_draft if ctx.current_draft is None else self.draft
        return {"improve": self.improve, "feedback": self.feedback, "refine": self.refine}[ctx.stage]

    def prompt(self, ctx: SpeakContext) -> list[dict[str, str]]:
        return [
            {"role": "system", "content": debate_system_prompt(ctx)},
            {"role": "user", "content": self.user_prompt(ctx)},
        ]

    def parse(self, text: str, ctx: SpeakContext) -> Contribution:
        """Agreement from explicit markers; the reply (without markers) is the solution."""
        if ctx.stage in ("improve", "feedback"):
            agreement, note = parse_agreement(text)
        else:
            agreement, note = None, None
        notes = (note,) if note else ()
        if ctx.stage == "feedback" or agreement is True:
            return Contribution(text, None, agreement, notes=notes)
        return Contribution(text, strip_markers(text) or None, agreement, notes=notes)


class SimpleResponder(MallmResponder):
    """MALLM's Simple responder: neutral wording, explicit [AGREE]/[DISAGREE] (Figures 15-17)."""

    name = "simple"


@hookimpl
def register_responders(register):
    """The built-in responders."""
    register("simple", SimpleResponder)
