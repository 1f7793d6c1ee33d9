"""A task without an instruction (an lm-eval task whose whole prompt is its input) gets no empty
``Task:`` line in any prompt; a task with one keeps MALLM's wording unchanged."""

from __future__ import annotations

import pytest

from madeval.debate.prompts import mallm
from madeval.testing import debate


def replies(turn, agent, purpose, messages):
    return "[AGREE] Final solution: (A)" if agent else "Final solution: (B)"


@pytest.mark.parametrize("decider", ["majority_consensus", "simple_voting", "judge"])
def test_no_empty_task_line_when_a_task_has_no_instruction(decider):
    _, llm = debate(replies, decider=decider, instruction="", max_turns=3)
    sent = ["\n".join(m["content"] for m in messages) for _, _, _, messages in llm.requests]
    assert sent and not any("Task: \n" in text or text.rstrip().endswith("Task:") for text in sent)
    _, llm = debate(replies, decider=decider, instruction="Answer.", max_turns=3)
    assert any("Task: Answer.\n" in m["content"] for _, _, _, messages in llm.requests for m in messages)


def test_fill_leaves_the_published_wording_alone_otherwise():
    fields = dict(persona="P", input="Q", context_line="", discussion="D")
    assert mallm.fill(mallm.DEBATE_SYSTEM, instruction="Do it.", **fields) == mallm.DEBATE_SYSTEM.format(
        instruction="Do it.", **fields)
    assert mallm.fill(mallm.DEBATE_SYSTEM, instruction=" ", **fields) == mallm.DEBATE_SYSTEM.format(
        instruction=" ", **fields).replace("Task:  \n", "")
