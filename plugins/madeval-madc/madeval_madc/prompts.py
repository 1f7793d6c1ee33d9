"""The Society-of-Minds prompts of Du et al. (2023), verbatim, and the two lines madeval adds.

Sources (read through ../shared/research/methods.md, sections 2.1 and 3, and checked against
SG-XM/AAAI2026-MADC, ``debate_bbh_qwen3b.py``, ``construct_exchange*_message``):

* :data:`UPDATE_PREFIX`, :data:`PEER_BLOCK`, :data:`UPDATE_ADVICE` and :data:`UPDATE_FORMAT` make
  the MMLU update prompt of composable-models/llm_multiagent_debate (``mmlu/gen_mmlu.py``), which
  MADC (Key Decision-Makers in Multi-Agent Debates, Appendix "Example of MADC in MAD") uses unchanged.
* :data:`DOUBLE_CHECK` is the prompt an agent gets when it sees no peer (both repositories).
* :data:`INITIAL` is the MMLU opening question of Du et al.; MADC's own opening adds few-shot
  exemplars, which madeval does not ship.

The format sentences ask for "(X)", a multiple-choice letter. With ``answer_format="task"`` (the
default) madeval replaces each of them by a reminder of the task's own instruction, so every
task's answer extractor applies; those replacement lines are madeval wording, marked below.
"""

from __future__ import annotations

# --- Du et al. / MADC, verbatim ---------------------------------------------------------------

#: Opening question (Du et al., mmlu/gen_mmlu.py): ``{question}`` is the item with its options.
INITIAL = (
    "Can you answer the following question as accurately as possible? {question} "
    "Explain your answer, putting the answer in the form (X) at the end of your response."
)

#: Start of the update prompt.
UPDATE_PREFIX = "These are the solutions to the problem from other agents: "

#: One peer's previous answer inside the update prompt.
PEER_BLOCK = "\n\n One agent solution: ```{text}```"

#: The advice sentence after the peers' solutions (Free-MAD calls this family of prompts the
#: conformity prompt).
UPDATE_ADVICE = (
    "\n\n Using the reasoning from other agents as additional advice, can you give an updated "
    "answer? Examine your solution and that other agents step by step."
)

#: The update prompt's format sentence (follows :data:`UPDATE_ADVICE` after one space).
UPDATE_FORMAT = " Put your answer in the form (X) at the end of your response."

#: Prompt for an agent that sees no peer's solution.
DOUBLE_CHECK = (
    "Can you double check that your answer is correct. Put your final answer in the form (X) at "
    "the end of your response."
)

# --- madeval wording (not from the papers) ------------------------------------------------------

#: madeval: the opening question with the task's own instruction instead of the "(X)" sentence.
INITIAL_TASK = (
    "Can you answer the following question as accurately as possible? {question} "
    "Explain your answer.\n\n{instruction}"
)

#: madeval: replaces the "(X)" format sentence of the update prompt.
TASK_FORMAT = " Answer in the format the task asks for: {instruction}"

#: madeval: the double-check prompt with the task's format instead of "(X)".
DOUBLE_CHECK_TASK = ("Can you double check that your answer is correct. "
                     "Answer in the format the task asks for: {instruction}")
