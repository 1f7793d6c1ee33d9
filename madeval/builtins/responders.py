"""Built-in responders: the MALLM family (MALLM paper, Appendix G.3) and the single-agent baselines.

A MALLM-style responder sends the general debate system prompt (Figure 11) followed by one user
prompt per stage (draft, improve, feedback, refine). Subclasses change only the wording, except
Reasoning (shares reasoning, not solutions) and Split Free Text (asks for agreement in a call of
its own).

With structured answers (``--structured-answers``) each stage's reply is asked in its reply kind
(:mod:`madeval.llm.structured`): drafts and refinements a solution, improvements a stance and a
solution, feedback a stance; the prompts stay as published. The structured fields are read
first, the text as usual for what they do not give.
"""

from __future__ import annotations

from madeval.core.components import Contribution, Responder, SpeakContext
from madeval.core.hookspecs import hookimpl
from madeval.debate.agreement import parse_agreement, strip_markers
from madeval.debate.prompts import madeval as own
from madeval.debate.prompts import mallm
from madeval.errors import UsageError
from madeval.llm.structured import AGREEMENT, IMPROVEMENT, SOLUTION, reply_in, solution_of, structured_fields


def debate_system_prompt(
    ctx: SpeakContext, preamble: str = "", no_solution: str = mallm.NO_SOLUTION_YET
) -> str:
    """Figure 11 filled in: persona, task, input, context, current solution and memory.

    ``no_solution`` replaces the current solution and memory when nobody has said anything yet.
    In the ``refine`` stage the current solution is the agent's own latest answer as the paradigm
    shows it (Collective Improvement shows only its solution).
    """
    context_line = mallm.CONTEXT_LINE.format(context=ctx.task.context) if ctx.task.context else ""
    if ctx.current_draft is None and not ctx.view:
        discussion = no_solution
    else:
        names = {a.index: a.persona.name for a in ctx.agents}
        memory = "\n".join(
            own.MEMORY_ENTRY.format(name=names.get(m.agent, f"Agent {m.agent + 1}"), text=m.text)
            for m in ctx.view
        )
        shown = own_shown(ctx) if ctx.stage == "refine" else ctx.current_draft
        draft = shown.solution or "" if shown is not None else ""
        discussion = mallm.DISCUSSION_LINES.format(draft=draft, memory="\n" + memory if memory else "")
    prompt = mallm.fill(
        mallm.DEBATE_SYSTEM,
        persona=ctx.persona_line(),
        instruction=ctx.task.instruction,
        input=ctx.task.input,
        context_line=context_line,
        discussion=discussion,
    )
    return f"{preamble}\n\n{prompt}" if preamble else prompt


def own_shown(ctx: SpeakContext):
    """The agent's own latest message in its view, else its own latest message."""
    mine = [m for m in ctx.view if m.agent == ctx.agent.index]
    return mine[-1] if mine else ctx.own_last


class MallmResponder(Responder):
    """Base of the MALLM responders: Figure 11 system prompt plus one user prompt per stage."""

    preamble = ""
    no_solution_yet = mallm.NO_SOLUTION_YET
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
            {"role": "system", "content": debate_system_prompt(ctx, self.preamble, self.no_solution_yet)},
            {"role": "user", "content": self.user_prompt(ctx)},
        ]

    def reply_kind(self, stage: str):
        """Drafts and refinements give a solution, improvements a stance and a solution, feedback a stance."""
        return STAGE_KINDS.get(stage)

    def parse(self, text: str, ctx: SpeakContext) -> Contribution:
        """Agreement from explicit markers; the reply (without markers) is the solution.

        An agreeing reply proposes nothing of its own (it carries the draft it agrees with);
        feedback never proposes a solution. With structured answers, the reply's ``agreement``
        and ``solution`` fields come first.
        """
        fields = self.structured(text, ctx)
        if ctx.stage in ("improve", "feedback"):
            agreement, note = stance(text, fields)
        else:
            agreement, note = None, None
        notes = (note,) if note else ()
        if ctx.stage == "feedback" or agreement is True:
            return Contribution(text, None, agreement, notes=notes)
        return Contribution(text, fields.get("solution") or strip_markers(text) or None, agreement, notes=notes)


#: The reply kind of each stage of a MALLM responder (structured answers).
STAGE_KINDS = {"draft": SOLUTION, "refine": SOLUTION, "improve": IMPROVEMENT, "feedback": AGREEMENT}


def stance(text: str, fields: dict) -> tuple[bool | None, str | None]:
    """``(agreement, note)``: the structured ``agreement`` field, else the markers in the text."""
    if "agreement" in fields:
        return fields["agreement"], None
    return parse_agreement(text)


class SimpleResponder(MallmResponder):
    """Simple: neutral wording, explicit [AGREE]/[DISAGREE] (MALLM Figures 15-17)."""


class FreeTextResponder(MallmResponder):
    """Free Text: the most basic prompt; agents always state whether they agree (Voting or Consensus?, App. C).

    The paper prints no wording for it; madeval's is in :mod:`madeval.debate.prompts.madeval`.
    """

    preamble = own.FREETEXT_PREAMBLE
    draft = own.FREETEXT_DRAFT
    improve = own.FREETEXT_IMPROVE
    feedback = own.FREETEXT_FEEDBACK


class CriticalResponder(MallmResponder):
    """Critical: find weaknesses, question assumptions, propose alternatives (Figures 18-20)."""

    draft = mallm.CRITICAL_DRAFT
    improve = mallm.CRITICAL_IMPROVE
    feedback = mallm.CRITICAL_FEEDBACK


class ReasoningResponder(MallmResponder):
    """Reasoning: agents share reasoning steps but no final solution (Figures 21-23).

    Messages carry the argument as the draft agents agree or disagree with. No prompt asks for a
    solution to share: the first message lays out thoughts (MALLM's code; its system prompt has
    no "Nobody proposed a solution yet" line), improving and Collective Refinement's refine
    stage use Figure 22 ("Don't provide a final solution yet."). Figure 21 (re-drafting from
    feedback, sequential paradigms only) is used as published. Each agent's own solution is asked
    for only when a decider needs it (:meth:`final_solution`), so counting and Collective
    Improvement, which read solutions from messages, cannot be combined with it.
    """

    shares_solutions = False
    no_solution_yet = ""
    first_draft = mallm.REASONING_FIRST_DRAFT
    draft = mallm.REASONING_DRAFT
    improve = mallm.REASONING_IMPROVE
    feedback = mallm.REASONING_FEEDBACK
    refine = mallm.REASONING_IMPROVE

    def reply_kind(self, stage: str):
        """Messages share reasoning, read as text; only the final solution is structured."""
        return None

    async def final_solution(self, ctx: SpeakContext, llm) -> str:
        """The agent's own solution after the discussion (one extra call)."""
        messages = [
            {"role": "system", "content": debate_system_prompt(ctx, no_solution=self.no_solution_yet)},
            {"role": "user", "content": own.FINAL_FROM_REASONING},
        ]
        text = await llm.chat(ctx.agent.index, messages, purpose="final_solution", **reply_in(SOLUTION, ctx.state))
        return solution_of(text, ctx.state)


class SplitFreeTextResponder(FreeTextResponder):
    """Split Free Text: agreement is asked in a call of its own, then the contribution.

    When the agent agrees, the agreement reply is its whole message (no second call).
    """

    most_calls = 2  # the agreement, then the contribution

    async def respond(self, ctx: SpeakContext, llm) -> Contribution:
        if ctx.stage not in ("improve", "feedback"):
            return await super().respond(ctx, llm)
        system = {"role": "system", "content": debate_system_prompt(ctx, self.preamble)}
        said = await llm.chat(ctx.agent.index, [system, {"role": "user", "content": own.SPLIT_AGREEMENT}],
                              purpose="agreement", **reply_in(AGREEMENT, ctx.state))
        agreement, note = stance(said, structured_fields(said, AGREEMENT, ctx.state))
        notes = (note,) if note else ()
        if agreement is True:
            return Contribution(said, None, True, notes=notes)
        # the stance is given: the second call is the feedback (text) or the solution
        kind = None if ctx.stage == "feedback" else SOLUTION
        text = await llm.chat(ctx.agent.index, self.prompt(ctx), purpose=ctx.stage, **reply_in(kind, ctx.state))
        if ctx.stage == "feedback":
            return Contribution(text, None, agreement, notes=notes)
        solution = structured_fields(text, kind, ctx.state).get("solution")
        return Contribution(text, solution or strip_markers(text) or None, agreement, notes=notes)


class ChainOfThought(Responder):
    """The single-model Chain-of-Thought baseline (MALLM Figure 24): solve, then 'Final Solution:'."""

    gives_agreement = False
    user = mallm.COT_USER

    def validate(self, setup) -> None:
        """A single-model baseline sees no discussion: one turn of independent answers only."""
        if setup.paradigm.name != "collective_refinement":
            raise UsageError(
                f"responder '{self.name}' is a single-model baseline that sees no discussion; use it "
                f"with paradigm 'collective_refinement' (independent answers), not '{setup.paradigm.name}'"
            )
        if setup.max_turns != 1:
            raise UsageError(
                f"responder '{self.name}' sees no discussion, so turns after the first would only "
                f"resample the same prompt: use max_turns 1, not {setup.max_turns}"
            )
        if any(setup.neutral):
            raise UsageError(f"responder '{self.name}' has no discussion for neutral agents to moderate")

    def prompt(self, ctx: SpeakContext) -> list[dict[str, str]]:
        task = ctx.task.input if not ctx.task.context else f"{ctx.task.input}\nContext: {ctx.task.context}"
        system = mallm.fill(mallm.COT_SYSTEM, instruction=ctx.task.instruction, input=task)
        messages = [{"role": "system", "content": system}]
        if self.user:
            messages.append({"role": "user", "content": self.user})
        return messages

    def reply_kind(self, stage: str):
        """A solution."""
        return SOLUTION

    def parse(self, text: str, ctx: SpeakContext) -> Contribution:
        return Contribution(text, self.structured(text, ctx).get("solution") or text)


class Direct(ChainOfThought):
    """The baseline without chain of thought: Figure 24's system prompt, no step-by-step request."""

    user = ""


@hookimpl
def register_responders(register):
    """The built-in responders."""
    register("simple", SimpleResponder)
    register("freetext", FreeTextResponder, aliases=("free_text",))
    register("critical", CriticalResponder)
    register("reasoning", ReasoningResponder)
    register("splitfreetext", SplitFreeTextResponder, aliases=("split_freetext",))
    register("cot", ChainOfThought, aliases=("chain_of_thought",))
    register("direct", Direct)
