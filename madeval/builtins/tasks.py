"""Registers the task folder shipped inside the package (``madeval.tasks``)."""

from __future__ import annotations

import importlib.resources
from pathlib import Path

from madeval.core.hookspecs import hookimpl


@hookimpl
def register_tasks(register):
    """The built-in task YAMLs."""
    register(Path(str(importlib.resources.files("madeval.tasks"))))
