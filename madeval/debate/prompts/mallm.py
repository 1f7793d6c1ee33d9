"""Prompts of the MALLM framework, verbatim from the paper.

Source: Becker et al., "MALLM: Multi-Agent Large Language Models Framework", Appendix G
("MALLM: Multi-Agent Large Language Models Framework"); the same voting and extraction prompts appear in Kaesberg et
al., "Voting or Consensus? Decision-Making in Multi-Agent Debate", Appendix E (seed
001_e4189b64ca057703.txt). Figure numbers refer to the MALLM paper. Placeholders in angle brackets
in the paper are ``{named}`` fields here; nothing else was changed. Where the paper is silent
(how the discussion history is laid out), the choice is marked as madeval's.

Prefix caching: Figure 11 fixes the order persona, task, input, "Current Solution:",
"Discussion so far:" with the memory inside the system prompt, and Figures 15-23 are "appended to
the system prompt in Figure 11". A new current solution therefore changes everything after the
input, and the stage prompt always follows the memory; madeval keeps that published layout. What
is madeval's, the memory's lines (oldest first, one per message), only ever grows while the
current solution stays and no turn leaves the ``visible_turns_in_memory`` window.
"""

from __future__ import annotations

import re

# Figure 11: the general debate system prompt (Simple response generator).
DEBATE_SYSTEM = (
    "You take part in a discussion to solve a task.\n"
    "\n"
    "Your role: {persona}\n"
    "Task: {instruction}\n"
    "Input: {input}\n"
    "{context_line}"
    "{discussion}"
)
CONTEXT_LINE = "Context: {context}\n"
#: The task line of the templates above and below, as it reads when a task has no instruction.
EMPTY_TASK_LINE = re.compile(r"^Task:[ \t]*\n", re.MULTILINE)


def fill(template: str, **fields: str) -> str:
    """``template`` filled in; a task without an instruction (an lm-eval task whose prompt is all in
    its input) gets no empty ``Task:`` line. The published wording is otherwise unchanged."""
    text = template.format(**fields)
    if "instruction" in fields and not fields["instruction"].strip():
        text = EMPTY_TASK_LINE.sub("", text, count=1)
    return text
DISCUSSION_LINES = "Current Solution: {draft}\nDiscussion so far: {memory}"
# Figure 11 caption: used "instead of the most recent draft and agent memory" for the first message.
NO_SOLUTION_YET = "Nobody proposed a solution yet. Please provide the first one."

# The first message's user prompt. The paper shows only the system prompt for it; MALLM's code
# asks the first speaker to "Propose a solution." (../shared/research/mallm.md, section 2).
FIRST_DRAFT = "Propose a solution."

# G.3.1 Simple response generator.
SIMPLE_DRAFT = (  # Figure 15
    "Based on the provided feedback, carefully re-examine your previous solution. "
    "Provide a revised solution."
)
SIMPLE_IMPROVE = (  # Figure 16
    "Improve the current solution.\n"
    "If you agree with the current solution, answer with [AGREE].\n"
    "Else, answer with [DISAGREE], explain why, and provide an improved solution.\n"
    "Let's think step-by-step."
)
SIMPLE_FEEDBACK = (  # Figure 17
    "Improve the current solution.\n"
    "Based on the current solution, give constructive feedback. If you agree, answer with "
    "[AGREE], else answer with [DISAGREE] and explain why.\n"
    "Let's think step-by-step."
)

# G.3.2 Critical response generator.
CRITICAL_DRAFT = (  # Figure 18
    "Re-examine the current solution critically based on the feedback provided. Ensure your "
    "revision addresses any identified weaknesses or areas for improvement. Submit a revised and "
    "improved solution."
)
CRITICAL_IMPROVE = (  # Figure 19
    "Improve the current solution. Identify specific areas that need enhancement and propose "
    "unique solutions based on your persona. If you see no room for improvement, answer with "
    "[AGREE], otherwise, answer with [DISAGREE] and provide a clear, solution."
)
CRITICAL_FEEDBACK = (  # Figure 20
    "Critically evaluate the current solution. Identify potential weaknesses or areas of "
    "improvement. If you believe the solution is flawless, answer with [AGREE], otherwise answer "
    "with [DISAGREE] and provide constructive feedback with suggestions for improvement."
)

# G.3.3 Reasoning response generator.
REASONING_DRAFT = SIMPLE_DRAFT  # Figure 21 (same wording as Figure 15)
REASONING_IMPROVE = (  # Figure 22
    "Improve the current steps of the argument by referring to the other participants in the "
    "discussion. Be critical and answer short and concise. Repeat only the reasoning steps that "
    "you think are the most important. If you think there is enough information to create a "
    "final answer also answer with [AGREE] else answer with [DISAGREE]. Don't provide a final "
    "solution yet."
)
REASONING_FEEDBACK = (  # Figure 23
    "Based on the current solution, give constructive feedback. If you agree, answer with "
    "[AGREE], else answer with [DISAGREE] and explain why."
)
# The Reasoning generator's first message. The paper prints none; MALLM's code uses this whenever
# no draft exists yet (mallm/models/discussion/ReasoningResponseGenerator.py, instr_prompt when
# ``not data.current_draft``), and its system prompt then has no "Nobody proposed ..." line.
REASONING_FIRST_DRAFT = (
    "You are starting the discussion. Lay out your thoughts and ideas but don't provide a final "
    "solution yet."
)

# Figure 24: the Chain-of-Thought baseline.
COT_SYSTEM = (
    "Solve the provided task. Do not ask back questions. Clearly indicate your final solution "
    "after the text 'Final Solution:'.\n"
    "Task: {instruction}\n"
    "Input: {input}"
)
COT_USER = "Let's think step-by-step."

# G.2 persona generation.
EXPERT_SYSTEM = (  # Figure 13
    "When faced with a task, begin by identifying the participants who will contribute to "
    "solving the task. Provide role and description of the participants, describing their "
    "expertise or needs, formatted using the provided JSON schema.\n"
    "Generate one participant at a time, complementing the existing participants to foster a "
    "rich discussion.\n"
    "{examples}"
)
EXPERT_USER = (  # Figure 13
    "Now generate a participant to discuss the following task:\n"
    "Task: {task}. Please use the following examples to generate a useful persona for the task! "
    "Only answer with the JSON for the next persona."
)
IPIP_SYSTEM = (  # Figure 14
    "When faced with a task, begin by identifying the participants who will contribute to "
    "solving the task. Provide role and fixed characteristics of the participant, formatted "
    "using the provided JSON schema. Generate one participant at a time, complementing the "
    "existing participants to foster a rich discussion.\n"
    "\n"
    "You must choose the following characteristics for the participant, in JSON format:\n"
    "\n"
    "{characteristics}\n"
    "\n"
    "You absolutely must stick to the JSON format and the characteristics and options provided.\n"
    "\n"
    "{examples}"
)
IPIP_USER = (  # Figure 14
    "Now generate a participant to discuss the following task:\n"
    "\n"
    "Task: {task}. Only answer with the JSON for the next persona! Ensure your new participant "
    "is unique."
)

# G.5.1 Figure 25: final answer extraction.
ROLE_SYSTEM = "Your role: {persona}"
EXTRACT_USER = (
    "You are tasked with creating a final solution based on the given input and your previous "
    "response.\n"
    "Task: {instruction}\n"
    "Input: {input}\n"
    "Your previous response: {previous}\n"
    "Extract the final solution to the task from the provided text. Remove statements of "
    "agreement, disagreement, and explanations. Do not modify the text. Do not output any text "
    "besides the solution. If there is no solution provided, just copy the previous response."
)

# G.5.2 Figures 26 to 29: voting prompts. ``{solutions}`` holds "Solution i: <answer>" lines.
VOTE_SIMPLE = (  # Figure 26
    "You are tasked with voting for the best solution from the list provided below based on the "
    "given task.\n"
    "Task: {instruction}\n"
    "Question: {input}\n"
    "Here are the possible solutions:\n"
    "{solutions}\n"
    "Based on the above solutions, please provide the number of the solution you are voting "
    "for. Answer only with the number."
)
VOTE_APPROVAL = (  # Figure 27
    "You are tasked with approving any number of solutions from the list provided below based on "
    "the given task.\n"
    "Task: {instruction}\n"
    "Question: {input}\n"
    "Here are the possible solutions:\n"
    "{solutions}\n"
    "Based on the above solutions, please provide the numbers of the solutions you are "
    "approving, separated by commas. Answer only with the numbers."
)
VOTE_CUMULATIVE = (  # Figure 28; the paper's text says 25 points, its prompt says 10
    "You are tasked with distributing {points} points among the provided solutions based on the "
    "given task.\n"
    "Task: {instruction}\n"
    "Question: {input}\n"
    "Here are the possible solutions:\n"
    "{solutions}\n"
    "Based on the above solutions, please distribute {points} points among the solutions. "
    "Provide your points allocation as a JSON dictionary where keys are solution numbers (as "
    "int) and values are the points. The total points should sum up to {points}. Answer only "
    "with the JSON dictionary."
)
VOTE_RANKED = (  # Figure 29
    "You are tasked with ranking the solutions from the most preferred to the least preferred "
    "based on the given task.\n"
    "Task: {instruction}\n"
    "Question: {input}\n"
    "Here are the possible solutions:\n"
    "{solutions}\n"
    "Based on the above solutions, please provide the rankings of the solutions separated by "
    "spaces. Example: '0 2 1' if you prefer Solution 0 the most, then Solution 2, and finally "
    "Solution 1. Provide up to 5 rankings. Only answer with the rankings."
)

# G.5.3 Figure 30: the judge.
JUDGE_USER = (
    "Task: {instruction}\n"
    "Question: {input}\n"
    "Please provide a decision on the following solutions and combine them in a single answer "
    "to solve the task. Only answer with the solution:\n"
    "{solutions}"
)


def solution_lines(solutions: list[str]) -> str:
    """The "Solution i: <answer>" block of the voting and judge prompts (numbered from 1)."""
    return "\n".join(f"Solution {i}: {text}" for i, text in enumerate(solutions, start=1))

# Voting or Consensus?, Appendix E.3: the challenge round.
CHALLENGE_SYSTEM = "You are a participant in a group discussion. Your role: {persona}"
CHALLENGE_USER = (  # Figure 20
    "The task is: {instruction}. The question is: {input}. This is the final answer generated by "
    "the discussion: {final_answer}. Please critically evaluate this answer. If you agree with the "
    "final answer, respond with the exact word 'AGREE' to confirm. If you do not agree, respond "
    "with the exact word 'DISAGREE' to challenge the answer."
)
CHALLENGE_NEW_ANSWER = (  # Figure 21 ("dont" as printed)
    "The task is: {instruction}. The question is: {input}. This is the final answer generated by "
    "the discussion: {final_answer}. You dont agree with the final answer. Please provide a new "
    "answer to the question. Include the letter corresponding to your answer in the solution."
)
