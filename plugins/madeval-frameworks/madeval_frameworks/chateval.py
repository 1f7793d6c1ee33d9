"""ChatEval (Chan et al. 2024; thunlp/ChatEval) as a question-answering debate.

Communication strategies (ChatEval Section 3; MADC paper, "Communication Strategies"; methods.md
4.3), the ``strategy`` option of the ``chateval`` paradigm:

* ``one_by_one``: agents speak in turn; every message goes into everyone's chat history;
* ``simultaneous``: all agents speak at once each turn and see the messages of earlier turns;
* ``summarizer``: as simultaneous, but after each turn an extra LLM (a neutral agent, agent 0)
  summarises the new messages onto the summary so far, and the summary replaces the raw history.

The role prompts of General Public, Critic and Scientist are the MAD-frameworks appendix's
(verbatim, with ``{chat_history}`` filled in); the summary prompt is ChatEval's ``summary_prompt``
(``agentverse/tasks/llm_eval/multi_role/only_static_assign/faireval/two_turns_summary/...
/config.yaml``, verbatim, ``${summary}``/``${new_lines}`` filled in); "Now it's your time to talk,
please make your talk short and clear, ${agent_name} !" is ChatEval's prompt template line. The
round line telling the agent which round it is is madeval wording (the roles' prompts refer to "the
final round"). The answer is the most frequent answer of the last turn (core ``counting``); the
The MAD-frameworks appendix's score-based selection is not implemented.

Layout. The MAD-frameworks appendix prints each role's system prompt with ``{chat_history}`` inside it, so the history
stays there and everything after it is new on every call. Where the question goes is not printed;
madeval puts it first, before the role prompt in the system message, as ChatEval's own prompt
template does (``[Question] ${source_text}`` opens it, the history and ``${role_description}``
follow): every agent's every call then starts with the same question, which a prefix cache reuses
across agents and rounds. The round line and ChatEval's "Now it's your time to talk" line follow, in
the user message.
"""

from __future__ import annotations

from typing import Iterator

from madeval import (
    Contribution,
    DebateSetup,
    DebateState,
    Message,
    Paradigm,
    Persona,
    PersonaGenerator,
    Responder,
    SpeakContext,
    Speaker,
)

from .common import require_layout

# --- verbatim (the MAD-frameworks appendix, "Chateval") ---------------------------------------------------------------
ROLES = {
    "General Public": (
        "You are General Public, part of a group discussing this question. "
        "Your role is to share your immediate thoughts and feelings to spark discussion. "
        "Here's what others have said so far: {chat_history}. "
        "In non-final rounds, provide your perspective or improve upon previous answers, "
        "focusing on clarity and insight. "
        "In the final round, provide a concise, conclusive answer directly addressing the question "
        "in the format 'Answer: ...' (max 800 words). "
        "Additionally, assign scores (1-10, integers only) to the answers from the previous round "
        "in the format 'Scores: Round X - Agent Y: Z'. "
        "Keep responses clear and focused."
    ),
    "Critic": (
        "You are Critic, part of a group discussing this question. "
        "Your job is to challenge previous answers and refine the discussion. "
        "Here's what's been said so far: {chat_history}. "
        "In non-final rounds, point out flaws or improve upon previous answers, aiming for precision and depth. "
        "In the final round, provide a concise, conclusive answer directly addressing the question "
        "in the format 'Answer: ...' (max 800 words). "
        "Additionally, assign scores (1-10, integers only) to the answers from the previous round "
        "in the format 'Scores: Round X - Agent Y: Z'. "
        "Keep responses sharp and critical."
    ),
    "Scientist": (
        "You are Scientist, part of a group discussing this question. "
        "Your role is to provide a logical, evidence-based summary to conclude the discussion. "
        "Here's what others have said so far: {chat_history}. "
        "In non-final rounds, analyze the question or counter others' points with evidence-based reasoning. "
        "In the final round, provide a concise, conclusive answer directly addressing the question "
        "in the format 'Answer: ...' (max 800 words). "
        "Additionally, assign scores (1-10, integers only) to the answers from the previous round "
        "in the format 'Scores: Round X - Agent Y: Z'. "
        "Keep responses logical and precise."
    ),
}
ROLE_ORDER = ("General Public", "Critic", "Scientist")
# ChatEval's prompt template line and summary prompt (verbatim):
YOUR_TURN = "Now it's your time to talk, please make your talk short and clear, {name} !"
SUMMARY = (
    "Summarize the lines of the new lines which contains the currently observed chat history with other people.\n"
    "Based on the Current summary, you need to summarize from the New lines , add it onto the previous summary, "
    "and eventually return a New summary.\n\n"
    "Now, try to summarize the following record.\n\n"
    "Current summary:\n{summary}\n\n"
    "New lines:\n{new_lines}\n\n"
    "New summary:\n"
)
# --- madeval wording ------------------------------------------------------------------------------
QUESTION = "Question: {instruction}\n{input}"
ROUND = "This is round {turn} of {turns}.{final}"
FINAL = " This is the final round."
NOTHING_YET = "(nothing yet)"

STRATEGIES = ("one_by_one", "simultaneous", "summarizer")
SUMMARIZER_AGENT = 0


class ChatEvalRoles(PersonaGenerator):
    """ChatEval's roles in the MAD-frameworks appendix's setting: General Public, Critic, Scientist (in that order)."""

    sequential = True  # so that ``existing`` shows the neutral summarizer before the debaters

    async def generate(self, agent: int, task, existing, llm) -> Persona:
        neutral = sum(1 for p in existing if p.generator == "neutral")
        name = ROLE_ORDER[(agent - neutral) % len(ROLE_ORDER)] if agent >= neutral else ROLE_ORDER[0]
        return Persona(name=name, description=ROLES[name], generator=self.name)


class ChatEvalParadigm(Paradigm):
    """ChatEval's communication strategies: ``one_by_one``, ``simultaneous`` or ``summarizer``
    (agent 0 is then a neutral summarizer whose summary replaces the chat history)."""

    supports_agreement = False

    def __init__(self, strategy: str = "one_by_one"):
        super().__init__(0)
        if strategy not in STRATEGIES:
            raise ValueError(f"strategy must be one of {', '.join(STRATEGIES)}, got '{strategy}'")
        self.strategy = strategy

    def validate(self, setup: DebateSetup) -> None:
        neutral = 1 if self.strategy == "summarizer" else 0
        require_layout(setup, f"paradigm 'chateval' ({self.strategy})", (1, 10), neutral)

    def turn(self, state: DebateState) -> Iterator[list[Speaker]]:
        debaters = [a.index for a in state.agents if not a.neutral]
        if self.strategy == "one_by_one":
            for agent in debaters:
                yield [Speaker(agent, "discuss")]
            return
        yield [Speaker(agent, "discuss") for agent in debaters]
        if self.strategy == "summarizer":
            yield [Speaker(SUMMARIZER_AGENT, "summarize")]

    def view(self, agent: int, state: DebateState) -> list[Message]:
        messages = state.transcript.messages
        if self.strategy == "one_by_one":
            return list(messages)
        if self.strategy == "simultaneous":
            return [m for m in messages if m.turn < state.turn]
        if agent == SUMMARIZER_AGENT:  # its previous summary and this turn's new lines
            summaries = [m for m in messages if m.agent == SUMMARIZER_AGENT]
            return summaries[-1:] + [m for m in messages if m.turn == state.turn and m.agent != SUMMARIZER_AGENT]
        summaries = [m for m in messages if m.agent == SUMMARIZER_AGENT and m.turn < state.turn]
        return summaries[-1:]


class ChatEvalResponder(Responder):
    """ChatEval's role prompts (the MAD-frameworks appendix) with the chat history or the summary, and the
    summary prompt."""

    gives_agreement = False

    def prompt(self, ctx: SpeakContext) -> list[dict[str, str]]:
        if ctx.stage == "summarize":
            previous = [m for m in ctx.view if m.agent == ctx.agent.index]
            new = [m for m in ctx.view if m.agent != ctx.agent.index]
            summary = previous[-1].text if previous else ""
            new_lines = "\n".join(m.text for m in new)
            return [{"role": "user", "content": SUMMARY.format(summary=summary, new_lines=new_lines)}]
        names = {a.index: a.persona.name for a in ctx.agents}
        lines = []
        for m in ctx.view:
            lines.append(m.text if m.agent == SUMMARIZER_AGENT and ctx.agents[m.agent].neutral
                         else f"[{names.get(m.agent)}]: {m.text}")
        history = "\n".join(lines) or NOTHING_YET
        role = ctx.agent.persona.description or ROLES[ROLE_ORDER[0]]
        turns = ctx.state.max_turns
        question = QUESTION.format(instruction=ctx.task.instruction, input=ctx.task.input)
        user = ROUND.format(turn=ctx.turn, turns=turns, final=FINAL if ctx.turn == turns else "")
        user += "\n\n" + YOUR_TURN.format(name=ctx.agent.persona.name)
        return [{"role": "system", "content": f"{question}\n\n{role.replace('{chat_history}', history)}"},
                {"role": "user", "content": user}]

    def parse(self, text: str, ctx: SpeakContext) -> Contribution:
        """A debater's reply is its solution; a summary proposes none."""
        if ctx.stage == "summarize":
            return Contribution(text, None)
        return Contribution(text, text.strip() or None)
