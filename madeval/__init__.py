"""madeval: an evaluation harness for multi-agent debate.

This package's names (``__all__``) are the public API: what a plugin package and a notebook may
import. A plugin imports from ``madeval`` (and its tests from ``madeval.testing``), never from the
modules inside it, whose names may change between versions::

    from madeval import Decider, Decision, hookimpl

    class LastWord(Decider):
        async def after_turn(self, state, llm):
            last = state.transcript.messages[-1]
            return Decision(last.solution, True, state.turn, "last_word", "last speaker")

    @hookimpl
    def register_deciders(register):
        register("last_word", LastWord)

:func:`evaluate` runs an evaluation from Python with the options of ``madeval run``;
:func:`load_task` loads one task (its items, prompt, answer extraction and scorer) for a notebook.

The core types are imported here; the rest (``evaluate`` and the helpers that bring the engine
with them) are loaded on first use, so that ``import madeval`` and ``madeval --help`` stay fast.
Internal modules never import from this package root (import from the defining module instead).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from madeval._version import __version__
from madeval.core.components import (
    AnswerDecider,
    Component,
    Contribution,
    DebateLLM,
    DebateSetup,
    DebateState,
    Decider,
    Paradigm,
    PersonaGenerator,
    Responder,
    SpeakContext,
    Speaker,
    TaskPrompt,
)
from madeval.core.hookspecs import hookimpl
from madeval.core.item import Item
from madeval.core.transcript import Agent, Call, Decision, Message, Persona, Transcript
from madeval.errors import MadevalError, UsageError
from madeval.metrics.base import DebateMetric, Metric

#: Public names loaded on first use, by the module that defines them.
_LAZY = {
    "evaluate": "madeval.evaluation",
    "RunResult": "madeval.evaluation",
    "run_debate": "madeval.debate.loop",
    "registries": "madeval.core.plugins",
    "AMBIGUOUS": "madeval.task.definition",
    "NoAnswer": "madeval.task.definition",
    "note_scoring_error": "madeval.metrics.notes",
    "plurality": "madeval.builtins.counting",
    "same_answer": "madeval.builtins.metrics",
    "parse_json_object": "madeval.builtins.personas",
    "CollectiveRefinement": "madeval.builtins.paradigms",
    "Task": "madeval.task.definition",
    "load_task": "madeval.task.definition",
    "GroupSpec": "madeval.task.files",
    "AggregateMetric": "madeval.task.files",
    "task_code": "madeval.task.files",
    "read_yaml": "madeval.task.files",
    "read_yaml_file": "madeval.util.yaml_loader",
    "BoundedLoader": "madeval.util.yaml_loader",
    "load_docs_with_source": "madeval.task.sources",
    "hub_reachable": "madeval.task.sources",
    "Importer": "madeval.importers.base",
    "ImportedDebate": "madeval.importers.base",
    "ImportedFile": "madeval.importers.base",
    "FileReport": "madeval.importers.base",
}

if TYPE_CHECKING:  # what the lazy names are, for type checkers and editors
    from madeval.builtins.counting import plurality
    from madeval.builtins.metrics import same_answer
    from madeval.builtins.paradigms import CollectiveRefinement
    from madeval.builtins.personas import parse_json_object
    from madeval.core.plugins import registries
    from madeval.debate.loop import run_debate
    from madeval.evaluation import RunResult, evaluate
    from madeval.importers.base import FileReport, ImportedDebate, ImportedFile, Importer
    from madeval.metrics.notes import note_scoring_error
    from madeval.task.definition import AMBIGUOUS, NoAnswer, Task, load_task
    from madeval.task.files import AggregateMetric, GroupSpec, read_yaml, task_code
    from madeval.task.sources import hub_reachable, load_docs_with_source
    from madeval.util.yaml_loader import BoundedLoader, read_yaml_file


def __getattr__(name: str) -> Any:
    """Load a lazy public name (PEP 562) and keep it, so the next access is a plain lookup."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'madeval' has no attribute '{name}'")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "__version__",
    # plugins: the hook marker (the hooks are documented in madeval.core.hookspecs)
    "hookimpl",
    # component base classes and what the debate loop hands them
    "Component",
    "PersonaGenerator",
    "Responder",
    "Paradigm",
    "Decider",
    "AnswerDecider",
    "Contribution",
    "SpeakContext",
    "Speaker",
    "DebateSetup",
    "DebateState",
    "DebateLLM",
    "TaskPrompt",
    # the transcript: plain data, stored with every record
    "Agent",
    "Call",
    "Decision",
    "Message",
    "Persona",
    "Transcript",
    # metrics and extractors
    "Metric",
    "DebateMetric",
    "Item",
    "AMBIGUOUS",
    "NoAnswer",
    "note_scoring_error",
    # errors: a UsageError is one line for the user and exit status 2
    "MadevalError",
    "UsageError",
    # building blocks the built-in components share with plugins
    "plurality",
    "same_answer",
    "parse_json_object",
    "CollectiveRefinement",
    "registries",
    "run_debate",
    # task providers (register_task_providers): the task base class, groups, a task's own code, data
    "Task",
    "GroupSpec",
    "AggregateMetric",
    "task_code",
    "read_yaml",
    "read_yaml_file",
    "BoundedLoader",
    "load_docs_with_source",
    "hub_reachable",
    # importers (register_importers): other tools' output files read as debates
    "Importer",
    "ImportedDebate",
    "ImportedFile",
    "FileReport",
    # running an evaluation from Python; a task's items, prompt and scorer in a notebook
    "evaluate",
    "load_task",
    "RunResult",
]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
