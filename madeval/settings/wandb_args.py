"""``--wandb-args`` checked before the run: its keys are ``wandb.init`` arguments and the optional
``wandb`` package must be installed (the logging itself is :mod:`madeval.export.wandb_log`, after the run).

Kept apart from :mod:`madeval.export.wandb_log` so that the settings' check (:mod:`madeval.settings.config`) does not
import the logger, which reads ``run.json`` through the resume bookkeeping that imports the settings.
"""

from __future__ import annotations

import importlib.util

from madeval.errors import UsageError
from madeval.util.install import install_command

#: ``wandb.init`` arguments ``--wandb-args`` may set.
INIT_KEYS = ("project", "entity", "name", "group", "job_type", "mode", "dir", "notes", "id", "resume")


def check_wandb_args(args: dict[str, str]) -> None:
    """Refuse unknown keys and a missing ``wandb`` before the run starts (one line)."""
    unknown = sorted(set(args) - set(INIT_KEYS))
    if unknown:
        raise UsageError(f"wandb_args has no key '{unknown[0]}' (keys: {', '.join(INIT_KEYS)})")
    if importlib.util.find_spec("wandb") is None:
        raise UsageError(f"--wandb-args needs the wandb package: {install_command('wandb')}")
