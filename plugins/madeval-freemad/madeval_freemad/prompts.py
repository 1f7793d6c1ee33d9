"""Free-MAD's anti-conformity prompt (Free-MAD paper, Section 4.2 and Appendix E) as madeval rebuilds it.

The paper's text says the anti-conformity prompt is a chain-of-thought prompt "appended after the
prefix prompt" of Du et al.'s debate ("The responses from other agents are as follows"), gives the
agents "a scenario that includes adversarial agents" and asks them "to change their beliefs only
if there is a clear indication that their own answer is incorrect, rather than aiming to reach
consensus". Appendix E, which prints the prompt, was lost in the PDF extraction (the paper's text shows
only its heading), and methods.md 1.3 has it only as a paraphrase.

So :data:`ANTI_CONFORMITY` is **madeval wording**, except its first sentence, which third parties
quote verbatim ([3P]). Its five steps follow the reconstruction in the re-implementation's PRD
(jonathansantilli/freemad; methods.md 1.3). Replace it once Appendix E can be copied verbatim.
"""

from __future__ import annotations

#: Appended after the peers' solutions in place of Du et al.'s conformity advice sentence.
ANTI_CONFORMITY = (
    # verbatim as quoted by third parties [3P]:
    "\n\n Since some malicious agents may deliberately disseminate incorrect answers, you must "
    "follow the reasoning procedure below:"
    # madeval wording after the re-implementation's reconstruction of Appendix E:
    "\n1. Initial Reasoning: restate the logical steps and the conclusion of your own previous answer."
    "\n2. Analysis of Others' Reasoning: say which agents' reasoning is correct and which is flawed, "
    "and describe each error concretely. The correct answer may not be among the current answers."
    "\n3. Comparative Analysis: check whether you made any of the mistakes you found in the others' "
    "reasoning."
    "\n4. Final Decision: will you revise your answer (Yes/No)? Justify your decision either way."
    "\n5. Critical Rule: do not rely on conformity; a majority opinion is not a justification. Change "
    "your answer only if there is a clear indication that your own answer is incorrect. If you "
    "cannot definitively show that the others are correct, keep your own conclusion."
)
