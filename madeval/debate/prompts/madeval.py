"""Prompts written for madeval where the source papers publish none.

Each one is marked with the component that uses it. Published prompts live in
:mod:`madeval.debate.prompts.mallm` and are used verbatim.
"""

from __future__ import annotations

# Collective Refinement (Voting or Consensus?, Appendix C): each agent sees every answer of
# the previous turn and refines its own. The paper describes the protocol but prints no prompt.
REFINE = (
    "Here are the solutions of all participants from the previous turn. Using this shared "
    "information, refine your own solution and provide your improved solution."
)

# Header of one message in "Discussion so far:"; the paper does not show the layout.
MEMORY_ENTRY = "{name}: {text}"

# Free Text responder (Voting or Consensus?, Appendix C: "the most basic form of the agent prompt ... the
# agent is always asked to agree or disagree with the answer of the previous agent"). The paper
# prints no wording for it.
FREETEXT_PREAMBLE = (
    "Respond in your own words. Read the discussion so far and always say first whether you "
    "agree or disagree with the most recent solution."
)
FREETEXT_DRAFT = "Based on the discussion so far, write a revised solution to the task."
FREETEXT_IMPROVE = (
    "Do you agree with the current solution? Start your answer with [AGREE] or [DISAGREE]. If you "
    "disagree, explain why and give your own solution."
)
FREETEXT_FEEDBACK = (
    "Give feedback on the current solution. Start your answer with [AGREE] or [DISAGREE] and "
    "explain your view."
)

# Split Free Text responder: agreement is asked in a call of its own before the contribution.
SPLIT_AGREEMENT = (
    "Do you agree with the current solution? Answer only with [AGREE] or [DISAGREE]."
)

# Re-ask after an unparseable vote (voting deciders).
VOTE_REASK = (
    "Your previous answer could not be read: {problem}. Please answer again, exactly in the "
    "requested format and with nothing else."
)

# Re-ask after an unparseable persona (persona generators).
PERSONA_REASK = (
    "Your previous answer was not valid JSON for a persona ({problem}). Answer only with the JSON "
    "object."
)

# The challenge round's injected wrong answer (Voting or Consensus?, Section 4.2, used a second model to write
# incorrect solutions; the prompt was not printed).
WRONG_ANSWER = (
    "Task: {instruction}\nQuestion: {input}\nWrite a plausible but incorrect answer to this "
    "question, in the form the task asks for. Answer only with that answer."
)
# The "with history" challenge variant adds the discussion before the question (madeval wording).
CHALLENGE_HISTORY = "The discussion that led to this answer:\n{history}\n\n"

# Reasoning responder: agents shared reasoning only; a decider asks each for its own solution.
FINAL_FROM_REASONING = (
    "The discussion is over. Based on the reasoning above, give your own final solution to the "
    "task."
)
