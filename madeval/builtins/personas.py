"""Built-in persona generators (MALLM paper, Section 3.1 and Appendix G.2).

* ``none``: "Participant N", no LLM call.
* ``expert``: an LLM writes one expert persona at a time as JSON ``{"role", "description"}``,
  seeing the personas made before so each complements them (Figure 13).
* ``ipip``: an LLM chooses Big Five levels (high/low on the five IPIP-NEO domains), experience and
  gender as JSON (Figure 14); the choices are validated and the description is written from the
  IPIP-NEO facets of the chosen levels.

Generated personas are re-asked a bounded number of times (``max_attempts``) when the reply is not
valid; after that the agent becomes "Participant N" and the persona records why.
"""

from __future__ import annotations

import json
import re
from typing import Any

from madeval.core.components import PersonaGenerator, TaskPrompt
from madeval.core.hookspecs import hookimpl
from madeval.core.transcript import Persona
from madeval.debate.prompts import madeval as own
from madeval.debate.prompts import mallm

JSON_OBJECT = re.compile(r"\{.*\}", re.DOTALL)

# Few-shot examples for Figure 13's <example 1..3> (the paper does not print MALLM's).
EXPERT_EXAMPLES = (
    {"role": "Mathematician", "description": "A mathematician who checks every calculation and spots gaps in a proof."},
    {"role": "Software Developer",
     "description": "An engineer who builds mobile apps and knows what users need from them."},
    {"role": "Historian", "description": "A historian of science who puts claims in context and checks their sources."},
)

# The five IPIP-NEO domains and their six facets each (Johnson's IPIP-NEO-120), as the
# descriptions of a high and a low scorer.
IPIP_FACETS = {
    "extraversion": (
        ["friendly", "gregarious", "assertive", "active", "excitement-seeking", "cheerful"],
        ["reserved", "solitary", "unassertive", "unhurried", "cautious about thrills", "serious"],
    ),
    "agreeableness": (
        ["trusting", "straightforward", "altruistic", "cooperative", "modest", "sympathetic"],
        ["sceptical", "guarded", "self-interested", "competitive", "self-assured about their superiority",
         "hard-headed"],
    ),
    "conscientiousness": (
        ["self-efficacious", "orderly", "dutiful", "achievement-striving", "self-disciplined", "deliberate"],
        ["unsure of themselves", "disorganised", "casual about obligations", "content with little",
         "easily distracted", "impulsive"],
    ),
    "neuroticism": (
        ["anxious", "quick to anger", "easily discouraged", "self-conscious", "immoderate", "vulnerable to stress"],
        ["calm", "even-tempered", "contented", "self-assured", "moderate", "resilient under stress"],
    ),
    "openness": (
        ["imaginative", "artistic", "emotionally aware", "adventurous", "intellectually curious", "liberal"],
        ["practical", "unartistic", "emotionally guarded", "conventional", "concrete-minded", "traditional"],
    ),
}
IPIP_OPTIONS = {
    **{domain: ["high", "low"] for domain in IPIP_FACETS},
    "experience": ["junior", "mid-level", "senior", "expert"],
    "gender": ["female", "male", "non-binary"],
}
IPIP_EXAMPLES = (
    {"role": "Data Analyst", "extraversion": "low", "agreeableness": "high", "conscientiousness": "high",
     "neuroticism": "low", "openness": "high", "experience": "senior", "gender": "female"},
    {"role": "Debate Coach", "extraversion": "high", "agreeableness": "low", "conscientiousness": "high",
     "neuroticism": "low", "openness": "low", "experience": "expert", "gender": "male"},
)


def parse_json_object(text: str) -> dict[str, Any]:
    """The first JSON object in ``text`` (code fences and chatter around it are ignored)."""
    match = JSON_OBJECT.search(text)
    if not match:
        raise ValueError("no JSON object")
    candidate = match.group(0)
    for end in range(len(candidate), 0, -1):
        if candidate[end - 1] != "}":
            continue
        try:
            value = json.loads(candidate[:end])
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            return value
    raise ValueError("invalid JSON")


class NoPersona(PersonaGenerator):
    """No persona: agent N is "Participant N"; no LLM call."""

    sequential = False
    most_calls = 0

    async def generate(self, agent: int, task: TaskPrompt, existing: list[Persona], llm) -> Persona:
        return Persona(name=f"Participant {agent + 1}", generator=self.name)


class GeneratedPersona(PersonaGenerator):
    """Shared loop of LLM persona generators: ask, validate, re-ask up to ``max_attempts``."""

    least_calls = 1

    def __init__(self, max_attempts: int = 3):
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.max_attempts = max_attempts

    @property
    def most_calls(self) -> int:
        """One call an attempt, each re-ask after the one before."""
        return self.max_attempts

    def system_prompt(self) -> str:
        """The generator's system prompt."""
        raise NotImplementedError

    def user_prompt(self, task: TaskPrompt) -> str:
        """The request for the next persona."""
        raise NotImplementedError

    def shown(self, persona: Persona) -> dict[str, Any]:
        """How an earlier persona is shown to the model (as its earlier JSON answer)."""
        raise NotImplementedError

    def build(self, data: dict[str, Any]) -> Persona:
        """A persona from parsed JSON; raises ValueError when it is not valid."""
        raise NotImplementedError

    async def generate(self, agent: int, task: TaskPrompt, existing: list[Persona], llm) -> Persona:
        request = {"role": "user", "content": self.user_prompt(task)}
        messages = [{"role": "system", "content": self.system_prompt()}]
        for persona in existing:
            if persona.generator == self.name:
                messages += [request, {"role": "assistant", "content": json.dumps(self.shown(persona))}]
        messages.append(request)
        problems = []
        for attempt in range(self.max_attempts):
            reply = await llm.chat(agent, messages, purpose="persona", nonce=attempt)
            try:
                return self.build(parse_json_object(reply))
            except ValueError as problem:
                problems.append(str(problem))
                messages = [*messages, {"role": "assistant", "content": reply},
                            {"role": "user", "content": own.PERSONA_REASK.format(problem=problem)}]
        return Persona(
            name=f"Participant {agent + 1}",
            generator=self.name,
            traits={"fallback": True, "problems": problems},
        )


class ExpertPersona(GeneratedPersona):
    """Expert: one task-specific expert at a time, complementing the others (MALLM Figure 13)."""


    def system_prompt(self) -> str:
        examples = "\n".join(f"Example {i}: {json.dumps(e)}" for i, e in enumerate(EXPERT_EXAMPLES, 1))
        return mallm.EXPERT_SYSTEM.format(examples=examples)

    def user_prompt(self, task: TaskPrompt) -> str:
        return mallm.EXPERT_USER.format(task=f"{task.instruction}\n{task.input}")

    def shown(self, persona: Persona) -> dict[str, Any]:
        return {"role": persona.name, "description": persona.description}

    def build(self, data: dict[str, Any]) -> Persona:
        role, description = data.get("role"), data.get("description")
        if not isinstance(role, str) or not role.strip():
            raise ValueError("'role' is missing")
        if not isinstance(description, str) or not description.strip():
            raise ValueError("'description' is missing")
        return Persona(name=role.strip(), description=description.strip(), generator=self.name)


class IpipPersona(GeneratedPersona):
    """IPIP: Big Five levels, experience and gender chosen by the model, validated (Figure 14)."""


    def system_prompt(self) -> str:
        characteristics = json.dumps({"role": "<a role name>", **IPIP_OPTIONS})
        examples = "\n\n".join(f"Example {i}: {json.dumps(e)}" for i, e in enumerate(IPIP_EXAMPLES, 1))
        return mallm.IPIP_SYSTEM.format(characteristics=characteristics, examples=examples)

    def user_prompt(self, task: TaskPrompt) -> str:
        return mallm.IPIP_USER.format(task=f"{task.instruction}\n{task.input}")

    def shown(self, persona: Persona) -> dict[str, Any]:
        return {"role": persona.name, **(persona.traits or {})}

    def build(self, data: dict[str, Any]) -> Persona:
        role = data.get("role")
        if not isinstance(role, str) or not role.strip():
            raise ValueError("'role' is missing")
        traits = {}
        for key, options in IPIP_OPTIONS.items():
            value = str(data.get(key, "")).strip().lower()
            if value not in options:
                raise ValueError(f"'{key}' must be one of {', '.join(options)}")
            traits[key] = value
        return Persona(name=role.strip(), description=describe(traits), generator=self.name, traits=traits)


def describe(traits: dict[str, str]) -> str:
    """A persona description from IPIP choices, using the facets of each chosen level."""
    parts = []
    for domain, (high, low) in IPIP_FACETS.items():
        facets = high if traits[domain] == "high" else low
        parts.append(f"{traits[domain]} {domain} ({', '.join(facets)})")
    return f"A {traits['experience']} {traits['gender']} participant with " + "; ".join(parts) + "."


@hookimpl
def register_personas(register):
    """The built-in persona generators."""
    register("none", NoPersona, aliases=("nopersona",))
    register("expert", ExpertPersona)
    register("ipip", IpipPersona)
