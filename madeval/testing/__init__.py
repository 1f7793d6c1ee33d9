"""Test helpers for madeval and its plugins: a scripted LLM, one debate in-process, plugin registration.

A plugin's tests use these without installing anything but madeval::

    from madeval.testing import debate, decided, registered

    import my_plugin

    def test_my_decider():
        with registered(my_plugin):
            transcript, llm = debate({(1, 0): "Final Solution: A", (1, 1): "Final Solution: B",
                                      (1, 2): "Final Solution: B"}, decider="my_decider", max_turns=1)
        assert decided(transcript) == "B"

:func:`decided` reads the decision as the record's prediction is read, for every kind of decider
(one returning a solution text or one returning an answer already extracted).

Scripted replies are for hand-computed protocol tests; for a whole run, use the simulator
(:func:`madeval.simulator.simulate`, or the pytest fixtures in :mod:`madeval.testing.fixtures`).
This module does not import pytest.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
from types import ModuleType
from typing import Any, Callable, Iterable, Iterator, Mapping, Union

from madeval.core.components import DebateSetup, TaskPrompt
from madeval.core.plugins import Registries, load_plugins, registries
from madeval.core.transcript import Agent, Persona, Transcript
from madeval.debate.loop import run_debate

#: What the scripted debates ask by default: a choice item with two options.
ITEM = "What is 2 + 2?\nA) 3\nB) 4"
LETTER = re.compile(r"Final Solution:\s*([A-Z])")

#: A reply script: a mapping (turn, agent) -> reply, or a function (turn, agent, purpose, messages) -> reply.
Script = Union[Mapping[tuple[int, Any], str], Callable[[int, Any, str, list[dict[str, str]]], str]]


@contextlib.contextmanager
def registered(*modules: ModuleType) -> Iterator[None]:
    """Register plugin modules (their hooks) for the duration of the block, as an installed entry
    point would, then unregister them.

    A module already registered (e.g. through its installed entry point) is left alone. The
    component registries follow: :func:`madeval.registries` builds them again whenever the
    set of registered plugins changes.
    """
    manager = load_plugins()
    added = []
    for module in modules:
        if not manager.is_registered(module) and manager.get_plugin(module.__name__) is None:
            manager.register(module, name=module.__name__)
            added.append(module.__name__)
    try:
        yield
    finally:
        for name in reversed(added):
            manager.unregister(name=name)


def core_registries() -> Registries:
    """The registries without installed plugins (entry points), for a test module that needs them
    at import time, before any fixture has run.

    Plugins load once per process: whoever asks first decides. A module-level ``registries()``
    in a test file would load every installed plugin into the whole test session; this one loads
    none, as :func:`madeval.testing.fixtures.madeval_isolated` asks (plugins a test needs are
    added with :func:`registered`)."""
    saved = os.environ.get("MADEVAL_LOAD_PLUGINS")
    os.environ["MADEVAL_LOAD_PLUGINS"] = ""
    try:
        return registries()
    finally:
        if saved is None:
            del os.environ["MADEVAL_LOAD_PLUGINS"]
        else:
            os.environ["MADEVAL_LOAD_PLUGINS"] = saved


def letter(text: str) -> str | None:
    """The letter after the last "Final Solution:" in ``text`` (the scripted debates' extractor)."""
    found = LETTER.findall(text or "")
    return found[-1] if found else None


def decided(transcript: Transcript, extract: Callable[[str], str | None] = letter) -> str | None:
    """The answer a debate decided, read as its record's ``prediction`` is, whatever kind of decider
    decided it: ``extract`` (the one the debate was run with; :func:`letter` by default) applied to
    ``Decision.answer``. A decider returns either a solution text (consensus, the judge: ``"[AGREE]
    Final Solution: B"``) or an answer already read (counting, Free-MAD's score) or a solution's bare
    answer part (voting: ``"B"``); as a task's extractor reads such an answer as itself, so does this,
    when it is what ``extract`` read from some message of the debate. None when the debate decided
    nothing readable (scored as wrong).

    ``letter(transcript.decision.answer)`` is None for the deciders that return ``"B"``; this is
    the one pattern that works for every decider::

        assert decided(transcript) == "B"
    """
    answer = transcript.decision.answer if transcript.decision is not None else None
    if answer is None:
        return None
    read = extract(answer)
    if read is not None:
        return read
    bare = answer.strip()
    return bare if bare in {m.answer for m in transcript.messages if m.answer is not None} else None


class ScriptedLLM:
    """A stand-in for the endpoint: replies come from a script, every request is kept.

    ``script`` maps ``(turn, agent)`` to a reply, or is a function ``(turn, agent, purpose,
    messages) -> reply``; turns count from 1 (0 before the first turn), ``agent`` is the agent's
    index (``None`` for the judge). Every request is kept in ``requests`` as ``(turn, agent,
    purpose, messages)``, and the reply schema each asked for (structured answers) in
    ``schemas``, ``None`` for a plain text request.
    """

    def __init__(self, script: Script, transcript: Transcript | None = None):
        self.script = script
        self.transcript = transcript
        self.requests: list[tuple[int, Any, str, list[dict[str, str]]]] = []
        self.schemas: list[Any] = []

    async def chat(self, agent, messages, *, purpose, nonce=0, max_tokens=None, reply=None):
        """Record the request and answer from the script."""
        turn = self.transcript.turns_used if self.transcript is not None else 0
        self.requests.append((turn, agent, purpose, messages))
        self.schemas.append(reply)
        if callable(self.script):
            return self.script(turn, agent, purpose, messages)
        return self.script[(turn, agent)]

    def prompts(self, agent, turn: int | None = None) -> list[list[dict[str, str]]]:
        """The message lists sent for ``agent`` (in ``turn``), in order."""
        return [m for t, a, _, m in self.requests if a == agent and (turn is None or t == turn)]


def debate(
    script: Script,
    *,
    decider: str = "majority_consensus",
    paradigm: str = "memory",
    responder: str = "simple",
    persona: str = "none",
    agents: int = 3,
    max_turns: int = 5,
    neutral: Iterable[int] = (),
    decider_args: dict[str, Any] | None = None,
    paradigm_args: dict[str, Any] | None = None,
    responder_args: dict[str, Any] | None = None,
    instruction: str = "Answer.",
    item_input: str = ITEM,
    gold: Any = None,
    seed: int = 0,
    extract: Callable[[str], str | None] = letter,
    extract_mode: str = "task",
    all_agents_draft_first: bool = False,
    challenges: Iterable[str] = (),
    structured_answers: bool = False,
    read: Callable[[str], Any] | None = None,
) -> tuple[Transcript, ScriptedLLM]:
    """Run one debate in-process with scripted replies; return ``(transcript, llm)``.

    The components are built by name from the registered plugins, with their options, and
    validated as a run would (a bad combination raises :class:`madeval.errors.UsageError`).
    ``neutral`` lists the indices of the neutral agents; ``extract`` reads an answer from a reply
    (by default the letter after "Final Solution:"), ``extract_mode`` is the debate's ``extract``
    setting, ``read`` reads a solution once for its answer and why it has none (the message's
    parse note; e.g. ``task.reader(item)``, :meth:`madeval.task.definition.Task.read`), deciders still
    reading answers with ``extract``; ``gold``
    is the item's gold answer (for paradigms that use it); ``seed`` seeds the
    debate's random choices; ``structured_answers`` asks replies in their reply kinds' schemas
    (``llm.schemas`` keeps what was asked). ``transcript.decision`` is the outcome.
    """
    neutral = set(neutral)
    built = registries()
    setup = DebateSetup(
        personas=[built.personas.create(persona) for _ in range(agents)],
        responder=built.responders.create(responder, responder_args or {}),
        paradigm=built.paradigms.create(paradigm, paradigm_args or {}),
        decider=built.deciders.create(decider, decider_args or {}),
        agents=agents,
        max_turns=max_turns,
        neutral=[i in neutral for i in range(agents)],
        all_agents_draft_first=all_agents_draft_first,
        extract=extract_mode,
        challenges=tuple(challenges),
        structured_answers=structured_answers,
    )
    setup.validate()
    transcript = Transcript()
    llm = ScriptedLLM(script, transcript)
    people = [Agent(i, Persona(""), "m", "e", i in neutral) for i in range(agents)]
    asyncio.run(run_debate(setup, TaskPrompt(instruction, item_input), llm, agents=people, extract=extract,
                           rng=random.Random(seed), gold=gold, transcript=transcript, read=read))
    return transcript, llm


#: Libraries a run imports only when it needs them (a hub task, the openai transport, a paired
#: test, charts): tests/architecture/test_startup.py and ``python -m bench startup`` check that a one-item run
#: leaves every one of them unloaded.
HEAVY_MODULES = ("datasets", "openai", "scipy.stats", "statsmodels", "matplotlib", "pandas", "pyarrow")

__all__ = ["HEAVY_MODULES", "ITEM", "ScriptedLLM", "core_registries", "debate", "decided", "letter", "registered"]
