"""Test helpers for plugin packages: register plugin modules for a test, run one scripted debate.

madeval's own test helpers live in its repository's ``tests/`` folder, which an installed plugin
cannot import; these are the few a plugin's tests need. Scripted replies are for hand-computed
protocol tests; use the simulator (:func:`madeval.simulator.simulate`) for everything else.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import re
from types import ModuleType
from typing import Any, Callable, Iterator

from madeval import Agent, DebateSetup, Persona, TaskPrompt, Transcript, registries, run_debate
from madeval.plugins import pm  # until madeval.testing.registered (issue 13) replaces registered() here

LETTER = re.compile(r"Final Solution:\s*([A-Z])")


@contextlib.contextmanager
def registered(*plugins: tuple[ModuleType, str]) -> Iterator[None]:
    """Register ``(module, name)`` plugins for the duration of the block (unless already loaded,
    e.g. through their entry points), then unregister the ones registered here."""
    added = []
    for module, name in plugins:
        if not pm.is_registered(module) and pm.get_plugin(name) is None:
            pm.register(module, name=name)
            added.append(name)
    try:
        yield
    finally:
        for name in reversed(added):
            pm.unregister(name=name)


def letter(text: str) -> str | None:
    """The letter after the last "Final Solution:" (the scripted debates' answer extractor)."""
    found = LETTER.findall(text or "")
    return found[-1] if found else None


class ScriptedLLM:
    """Replies from ``script(turn, agent, purpose, messages)``; every request is kept."""

    def __init__(self, script: Callable[[int, int | None, str, list[dict[str, str]]], str], transcript: Transcript):
        self.script = script
        self.transcript = transcript
        self.requests: list[tuple[int, int | None, str, list[dict[str, str]]]] = []

    async def chat(self, agent, messages, *, purpose, nonce=0, max_tokens=None):
        """Record the request and answer from the script."""
        turn = self.transcript.turns_used
        self.requests.append((turn, agent, purpose, messages))
        return self.script(turn, agent, purpose, messages)

    def prompts(self, agent: int | None, turn: int | None = None) -> list[list[dict[str, str]]]:
        """The message lists sent for ``agent`` (in ``turn``)."""
        return [m for t, a, _, m in self.requests if a == agent and (turn is None or t == turn)]


def scripted_debate(
    script: Callable[..., str],
    *,
    responder: str,
    paradigm: str,
    decider: str,
    agents: int = 3,
    max_turns: int = 2,
    neutral: int = 0,
    persona: str = "none",
    responder_args: dict[str, Any] | None = None,
    paradigm_args: dict[str, Any] | None = None,
    decider_args: dict[str, Any] | None = None,
    instruction: str = "Answer.",
    item_input: str = "What is 2 + 2?\nA) 3\nB) 4\nC) 5",
    gold: Any = None,
    seed: int = 0,
    extract: Callable[[str], str | None] = letter,
) -> tuple[Transcript, ScriptedLLM]:
    """Build the named components, validate them and run one debate with scripted replies."""
    built = registries()
    setup = DebateSetup(
        personas=[built.personas.create(persona) for _ in range(agents)],
        responder=built.responders.create(responder, responder_args or {}),
        paradigm=built.paradigms.create(paradigm, paradigm_args or {}),
        decider=built.deciders.create(decider, decider_args or {}),
        agents=agents,
        max_turns=max_turns,
        neutral=[i < neutral for i in range(agents)],
    )
    setup.validate()
    transcript = Transcript()
    llm = ScriptedLLM(script, transcript)
    people = [Agent(i, Persona(""), "m", "e", i < neutral) for i in range(agents)]
    asyncio.run(run_debate(setup, TaskPrompt(instruction, item_input), llm, agents=people, extract=extract,
                           rng=random.Random(seed), gold=gold, transcript=transcript))
    return transcript, llm
