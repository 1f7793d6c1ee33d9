"""Helpers for tests: run madeval in-process against an endpoint."""

from __future__ import annotations

import io

from madeval.config import DebateConfig, RunSettings
from madeval.run import run


def run_quietly(settings: RunSettings):
    """Run madeval in-process without the progress bar; return the result and the printed text."""
    out = io.StringIO()
    result = run(settings, show_progress=False, out=out)
    return result, out.getvalue()


def settings_for(base_url: str, tmp_path, **overrides) -> RunSettings:
    """Run settings against ``base_url`` with one configuration built from the debate keys."""
    debate_keys = set(DebateConfig.__dataclass_fields__)
    debate = {k: v for k, v in overrides.items() if k in debate_keys}
    run_options = {k: v for k, v in overrides.items() if k not in debate_keys}
    run_options.setdefault("output_path", str(tmp_path / "run"))
    run_options.setdefault("tasks", ["arith_mc"])
    return RunSettings(base_url=base_url, configurations=[DebateConfig(**debate)], **run_options)


class ScriptedLLM:
    """A stand-in for the endpoint in engine tests: replies come from a script, prompts are kept.

    ``script`` maps (turn, agent) to a reply, or is a function (turn, agent, purpose, messages)
    -> reply. Every request is recorded as (turn, agent, purpose, messages).
    """

    def __init__(self, script, transcript=None):
        self.script = script
        self.transcript = transcript
        self.requests = []

    async def chat(self, agent, messages, *, purpose, nonce=0, max_tokens=None):
        turn = self.transcript.turns_used if self.transcript is not None else 0
        self.requests.append((turn, agent, purpose, messages))
        if callable(self.script):
            return self.script(turn, agent, purpose, messages)
        return self.script[(turn, agent)]


def debate(script, *, decider="majority_consensus", paradigm="memory", agents=3, max_turns=5,
           neutral=(), decider_args=None, paradigm_args=None, item_input="What is 2 + 2?\nA) 3\nB) 4",
           responder="simple", persona="none", extract="task", all_agents_draft_first=False, challenges=()):
    """Run one debate with scripted replies; return (transcript, scripted llm)."""
    import asyncio
    import random

    from madeval.components import DebateSetup, TaskPrompt
    from madeval.debate import run_debate
    from madeval.plugins import components
    from madeval.transcript import Agent, Persona, Transcript

    built = components()
    setup = DebateSetup(
        personas=[built.personas.create(persona) for _ in range(agents)],
        responder=built.responders.create(responder),
        paradigm=built.paradigms.create(paradigm, paradigm_args or {}),
        decider=built.deciders.create(decider, decider_args or {}),
        agents=agents,
        max_turns=max_turns,
        neutral=[i in neutral for i in range(agents)],
        all_agents_draft_first=all_agents_draft_first,
        extract=extract,
        challenges=tuple(challenges),
    )
    setup.validate()
    transcript = Transcript()
    llm = ScriptedLLM(script, transcript)
    people = [Agent(i, Persona(""), "m", "e", i in neutral) for i in range(agents)]

    def extract(text):
        import re

        found = re.findall(r"Final Solution:\s*([A-Z])", text)
        return found[-1] if found else None

    asyncio.run(run_debate(setup, TaskPrompt("Answer.", item_input), llm, agents=people, extract=extract,
                           rng=random.Random(0), transcript=transcript))
    return transcript, llm
