"""Built-in persona generators (the core set; LLM-made personas build on the same contract)."""

from __future__ import annotations

from .. import hookimpl
from ..components import PersonaGenerator, TaskPrompt
from ..transcript import Persona


class NoPersona(PersonaGenerator):
    """No persona: agent N is "Participant N"; no LLM call."""

    name = "none"
    sequential = False

    async def generate(self, agent: int, task: TaskPrompt, existing: list[Persona], llm) -> Persona:
        return Persona(name=f"Participant {agent + 1}", generator=self.name)


@hookimpl
def register_personas(register):
    """The built-in persona generators."""
    register("none", NoPersona, aliases=("nopersona",))
