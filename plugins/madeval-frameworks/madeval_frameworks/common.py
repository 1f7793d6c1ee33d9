"""Helpers shared by the framework components: replies as objects, question text, role checks."""

from __future__ import annotations

import ast
import re
from typing import Any

from madeval import DebateSetup, Message, TaskPrompt, Transcript, UsageError, parse_json_object

OBJECT = re.compile(r"\{.*\}", re.DOTALL)


def parse_object(text: str) -> dict[str, Any] | None:
    """The first JSON object (or Python dict literal, which several frameworks' code accepts) in
    ``text``; ``None`` when there is none."""
    try:
        return parse_json_object(text)
    except ValueError:
        pass
    match = OBJECT.search(text or "")
    if not match:
        return None
    try:
        value = ast.literal_eval(match.group(0))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return None
    return value if isinstance(value, dict) else None


def topic(task: TaskPrompt) -> str:
    """The task as one text: instruction, input and any context."""
    text = f"{task.instruction}\n\n{task.input}"
    return f"{text}\n\nContext: {task.context}" if task.context else text


def by_turn(transcript: Transcript, agent: int) -> dict[int, Message]:
    """The agent's last message in every turn it spoke."""
    found: dict[int, Message] = {}
    for message in transcript.messages:
        if message.agent == agent:
            found[message.turn] = message
    return found


def flat(text: str) -> str:
    """``text`` on one line (EoT stores every response with its line breaks replaced by spaces)."""
    return text.replace("\n", " ")


def require_layout(setup: DebateSetup, component: str, voters: tuple[int, int] | None, neutral: int) -> None:
    """Fail unless the first ``neutral`` agents are neutral (and no other is) and the number of
    voting agents lies in ``voters`` (inclusive; ``None``: any)."""
    flags = list(setup.neutral) or [False] * setup.agents
    count = setup.agents - neutral
    if flags[:neutral] != [True] * neutral or any(flags[neutral:]):
        raise UsageError(
            f"{component} needs exactly {neutral} neutral agent(s) first: use --neutral-agents {neutral} "
            f"(or its preset)"
        )
    if voters is not None and not voters[0] <= count <= voters[1]:
        wanted = str(voters[0]) if voters[0] == voters[1] else f"{voters[0]} to {voters[1]}"
        raise UsageError(f"{component} needs {wanted} debating agents besides the neutral ones, got {count}")


