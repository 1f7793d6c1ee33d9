"""AgentVerse task solving (Chen et al. 2024; OpenBMB/AgentVerse, MGSM configuration).

Protocol (``agentverse/tasks/tasksolving/mgsm/gpt-4/config.yaml`` at 93c2a08,
``environments/tasksolving_env/rules/decision_maker/vertical_solver_first.py``; methods.md 4.4).
One madeval turn is one outer iteration (at most ``max_turn`` = 3):

1. **expert recruitment**: the role assigner (agent 0, neutral) lists one expert description per
   group member, given the evaluator's last advice; the solver gets the first, critic k the
   (k+1)-th;
2. **decision making** (``vertical-solver-first``): the solver (agent 2) proposes a solution; then,
   up to ``max_inner_turns`` = 3 times, the critics (agents 3, 4, ...) review it at once, a critic
   agreeing by ending with "[Agree]"; if no critic objects (a review that is empty or agrees is no
   objection) the plan stands, otherwise the solver revises it given the reviews;
3. execution: none for math;
4. **evaluation**: the evaluator (agent 1, neutral) rates the final plan; "Correctness: 1" ends the
   task, otherwise its advice goes into the next iteration.

The answer is the last solver plan, accepted or not. madeval keeps every message visible to the
group within an iteration; across iterations the solver and critics see the previous iteration's
final plan and the evaluator's advice (madeval's reading of the code's memories).

Prompts are the MGSM configuration's, verbatim. They speak of a "(grade school) math problem"; with
``answer_format="task"`` (default) their ``\\boxed{answer}`` format sentences are replaced by
madeval lines asking for the task's own format (marked below); ``paper`` keeps them.
"""

from __future__ import annotations

import re
from typing import Iterator

from madeval import (
    Contribution,
    DebateSetup,
    DebateState,
    Decider,
    Decision,
    Message,
    Paradigm,
    Responder,
    SpeakContext,
    Speaker,
)

from .common import require_layout, topic

# --- verbatim (mgsm/gpt-4/config.yaml at 93c2a08) ---------------------------------------------------
ROLE_ASSIGNER_PREPEND = (
    "# Role Description\nYou are the leader of a group of experts, now you are facing a grade school math "
    "problem:\n${task_description}\n\nYou can recruit ${cnt_critic_agents} expert in different fields.\n\n"
    "Here are some suggestion:\n${advice}"
)
ROLE_ASSIGNER_APPEND = (
    "You can recruit ${cnt_critic_agents} expert in different fields. What experts will you recruit to better "
    "generate an accurate solution?\n\n# Response Format Guidance\nYou should respond with a list of expert "
    "description. For example:\n1. an electrical engineer specified in the filed of xxx.\n2. an economist who "
    "is good at xxx.\n...\n\nOnly respond with the description of each role. Do not include your reason."
)
SOLVER_PREPEND = (
    "Solve the following math problem: \n${task_description} \n\nThis math problem can be answered without "
    "any extra information. You should not ask for any extra information."
)
SOLVER_APPEND = (
    "You are ${role_description}. Using the information in the chat history and your knowledge, you should "
    "provide the correct solution to the math problem. Explain your reasoning.${solver_format}"
)
SOLVER_FORMAT = (
    " Your final answer must be a single numerical number and nothing else, in the form \\boxed{answer}, at "
    "the end of your response."
)
CRITIC_PREPEND = (
    "You are ${role_description}. You are in a discussion group, aiming to collaborative solve the following "
    "math problem:\n${task_description}\n\nBased on your knowledge, give your correct solution to the problem "
    "step by step."
)
CRITIC_APPEND = (
    "Now compare your solution with the solution given in the chat history and give your response.${critic_format} "
    "When responding, you should follow the following rules:\n1. This math problem can be answered without any "
    "extra information. You should not ask for any extra information. \n2. Compare your solution with the "
    "given solution, give your critics. You should only give your critics, don't give your answer.\n3. If the "
    "final answer in your solution is the same as the final answer in the above provided solution, end your "
    "response with a special token \"[Agree]\"."
)
CRITIC_FORMAT = " The final answer is highlighted in the form \\boxed{answer}."
EVALUATOR_PREPEND = "Experts: ${all_role_description}\nProblem: ${task_description}\nSolution: \n```\n${solution}\n```"
EVALUATOR_APPEND = (
    "You are an experienced mathematic teacher. As a good teacher, you carefully check the correctness of the "
    "given solution on a grade school math problem. When the solution is wrong, you should output a correctness "
    "of 0 and give your advice to the students on how to correct the solution. When it is correct, output a "
    "correctness of 1 and why it is correct.${evaluator_format} You should also give some suggestion on on what "
    "experts should recruit in the next round.\n\nYou should respond in the following format:\nCorrectness: (0 or "
    "1, 0 is wrong, and 1 is correct)\nResponse: (advice to correct the answer or why it is correct)"
)
EVALUATOR_FORMAT = (
    " Also check that the final answer is in the form \\boxed{answer} at the end of the solution. The answer "
    "must be a numerical number (not a equation, fraction, function or variable)."
)
NO_ADVICE = "No advice yet."  # vertical_solver_first.py default
# --- madeval wording (answer_format="task") -----------------------------------------------------------
TASK_SOLVER_FORMAT = " Give your final answer at the end of your response, in the format the task asks for."
TASK_CRITIC_FORMAT = " The final answer is given in the format the task asks for."
TASK_EVALUATOR_FORMAT = (" Also check that the final answer is given at the end of the solution, "
                         "in the format the task asks for.")
FALLBACK_ROLE = "an expert in the field of the problem"

ROLE_ASSIGNER, EVALUATOR, SOLVER = 0, 1, 2
LABELS = {ROLE_ASSIGNER: "Role Assigner", EVALUATOR: "Evaluator", SOLVER: "Solver"}
LIST_ITEM = re.compile(r"^\s*\d+\s*[.)]\s*(.+?)\s*$", re.MULTILINE)
CORRECTNESS = re.compile(r"correctness\s*[:：]\s*\(?\s*([01])(?![\d.])", re.IGNORECASE)
AGREE = re.compile(r"\[agree\]", re.IGNORECASE)


def fill(template: str, **values: str) -> str:
    """Fill ``${name}`` placeholders (the configuration's ``string.Template`` syntax)."""
    for key, value in values.items():
        template = template.replace("${" + key + "}", value)
    return template


def roles_from(text: str) -> list[str]:
    """The numbered expert descriptions of a role assigner reply (stripped of a final '.')."""
    return [item.strip().strip(".") for item in LIST_ITEM.findall(text or "")]


def correctness(text: str) -> int | None:
    """The evaluator's "Correctness: 0/1" (the last one), or ``None``."""
    found = CORRECTNESS.findall(text or "")
    return int(found[-1]) if found else None


def label(agent: int) -> str:
    """The group name of an agent: Role Assigner, Evaluator, Solver, Critic k."""
    return LABELS.get(agent, f"Critic {agent - SOLVER}")


class AgentVerseParadigm(Paradigm):
    """AgentVerse's iteration: recruit experts, solver-first vertical discussion, evaluation.

    Agents: 0 role assigner and 1 evaluator (both neutral), 2 solver, 3.. critics.
    ``max_inner_turns``: review rounds per iteration (default 3).
    """

    supports_agreement = False

    def __init__(self, max_inner_turns: int = 3):
        super().__init__(0)
        if max_inner_turns < 1:
            raise ValueError("max_inner_turns must be at least 1")
        self.max_inner_turns = max_inner_turns

    def validate(self, setup: DebateSetup) -> None:
        require_layout(setup, "paradigm 'agentverse'", (2, 20), 2)

    def turn(self, state: DebateState) -> Iterator[list[Speaker]]:
        critics = [a.index for a in state.agents if a.index > SOLVER]
        yield [Speaker(ROLE_ASSIGNER, "recruit")]
        yield [Speaker(SOLVER, "solve")]
        for _ in range(self.max_inner_turns):
            yield [Speaker(critic, "critique") for critic in critics]
            reviews = state.transcript.messages[-len(critics):]
            if not any(m.agreement is not True and m.text.strip() for m in reviews):
                break
            yield [Speaker(SOLVER, "solve")]
        yield [Speaker(EVALUATOR, "evaluate")]

    def view(self, agent: int, state: DebateState) -> list[Message]:
        messages = state.transcript.messages
        before = [m for m in messages if m.turn == state.turn - 1]
        advice = [m for m in before if m.agent == EVALUATOR][-1:]
        if agent == ROLE_ASSIGNER:
            return advice
        if agent == EVALUATOR:
            return [m for m in messages if m.turn == state.turn and m.agent == SOLVER][-1:]
        last_plan = [m for m in before if m.agent == SOLVER][-1:]
        now = [m for m in messages if m.turn == state.turn and m.agent not in (ROLE_ASSIGNER, EVALUATOR)]
        return last_plan + advice + now


class AgentVerseResponder(Responder):
    """AgentVerse's role assigner, solver, critic and evaluator prompts (MGSM configuration, verbatim).

    ``answer_format``: ``task`` (default: the ``\\boxed{}`` sentences ask for the task's format)
    or ``paper`` (verbatim).
    """

    gives_agreement = False

    def __init__(self, answer_format: str = "task"):
        if answer_format not in ("task", "paper"):
            raise ValueError(f"answer_format must be 'task' or 'paper', got '{answer_format}'")
        self.answer_format = answer_format

    def _task(self, ctx: SpeakContext) -> str:
        return topic(ctx.task) if self.answer_format == "task" else ctx.task.input

    @staticmethod
    def roles(ctx: SpeakContext) -> list[str]:
        """The expert descriptions of the group members (solver first) in this iteration."""
        members = [a.index for a in ctx.agents if a.index >= SOLVER]
        assigned = [m for m in ctx.state.transcript.messages if m.agent == ROLE_ASSIGNER and m.turn == ctx.turn]
        found = roles_from(assigned[-1].text) if assigned else []
        return [found[i] if i < len(found) else FALLBACK_ROLE for i in range(len(members))]

    def prompt(self, ctx: SpeakContext) -> list[dict[str, str]]:
        me = ctx.agent.index
        task = self._task(ctx)
        paper = self.answer_format == "paper"
        count = str(len([a for a in ctx.agents if a.index >= SOLVER]))
        if me == ROLE_ASSIGNER:
            advice = ctx.view[-1].text if ctx.view else NO_ADVICE
            return [{"role": "system", "content": fill(ROLE_ASSIGNER_PREPEND, task_description=task,
                                                       cnt_critic_agents=count, advice=advice)},
                    {"role": "user", "content": fill(ROLE_ASSIGNER_APPEND, cnt_critic_agents=count)}]
        roles = self.roles(ctx)
        if me == EVALUATOR:
            solution = ctx.view[-1].text if ctx.view else ""
            prepend = fill(EVALUATOR_PREPEND, all_role_description="\n".join(roles), task_description=task,
                           solution=solution)
            append = fill(EVALUATOR_APPEND, evaluator_format=EVALUATOR_FORMAT if paper else TASK_EVALUATOR_FORMAT)
            return [{"role": "system", "content": prepend}, {"role": "user", "content": append}]
        role = roles[me - SOLVER]
        if me == SOLVER:
            prepend = fill(SOLVER_PREPEND, task_description=task)
            append = fill(SOLVER_APPEND, role_description=role,
                          solver_format=SOLVER_FORMAT if paper else TASK_SOLVER_FORMAT)
        else:
            prepend = fill(CRITIC_PREPEND, role_description=role, task_description=task)
            append = fill(CRITIC_APPEND, critic_format=CRITIC_FORMAT if paper else TASK_CRITIC_FORMAT)
        history = [{"role": "assistant" if m.agent == me else "user", "content": f"[{label(m.agent)}]: {m.text}"}
                   for m in ctx.view]
        return [{"role": "system", "content": prepend}, *history, {"role": "user", "content": append}]

    def parse(self, text: str, ctx: SpeakContext) -> Contribution:
        """The solver's reply is the plan; a critic agrees with "[Agree]"; the others propose nothing."""
        me = ctx.agent.index
        if me == SOLVER:
            return Contribution(text, text.strip() or None)
        if me > SOLVER:
            return Contribution(text, None, agreement=bool(AGREE.search(text)))
        if me == EVALUATOR and correctness(text) is None:
            return Contribution(text, None, notes=("no Correctness line",))
        return Contribution(text, None)


class AgentVerseDecider(Decider):
    """AgentVerse's ending: the evaluator's "Correctness: 1" accepts the last plan; else iterate.

    At ``max_turns`` the last solver plan is the answer anyway (``success = False``).
    """

    transcript_only = True

    def validate(self, setup: DebateSetup) -> None:
        super().validate(setup)
        require_layout(setup, "decider 'agentverse_evaluator'", (1, 20), 2)

    @staticmethod
    def last_plan(state: DebateState) -> Message | None:
        """The solver's latest plan."""
        plans = [m for m in state.transcript.messages if m.agent == SOLVER and m.solution]
        return plans[-1] if plans else None

    async def after_step(self, state: DebateState, llm) -> Decision | None:
        last = state.transcript.messages[-1] if state.transcript.messages else None
        if last is None or last.agent != EVALUATOR or correctness(last.text) != 1:
            return None
        plan = self.last_plan(state)
        return Decision(plan.solution if plan else None, plan is not None, state.turn, self.name,
                        "evaluator_correct", {"plan": plan.id if plan else None})

    async def at_max_turns(self, state: DebateState, llm) -> Decision:
        plan = self.last_plan(state)
        return Decision(plan.solution if plan else None, False, state.turn, self.name, "max_turns_last_plan",
                        {"plan": plan.id if plan else None})
