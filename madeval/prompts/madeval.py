"""Prompts written for madeval where the source papers publish none.

Each one is marked with the component that uses it. Published prompts live in
:mod:`madeval.prompts.mallm` and are used verbatim.
"""

from __future__ import annotations

# Collective Refinement (Voting or Consensus, seed 001, Appendix C): each agent sees every answer of
# the previous turn and refines its own. The paper describes the protocol but prints no prompt.
REFINE = (
    "Here are the solutions of all participants from the previous turn. Using this shared "
    "information, refine your own solution and provide your improved solution."
)

# Header of one message in "Discussion so far:"; the paper does not show the layout.
MEMORY_ENTRY = "{name}: {text}"
