"""Helpers for tests: run madeval in-process against an endpoint.

The scripted LLM and the in-process debate are madeval.testing's, the ones plugin authors get.
"""

from __future__ import annotations

import io

from madeval.evaluation import run
from madeval.settings.config import DebateConfig, RunSettings
from madeval.testing import ScriptedLLM, debate  # noqa: F401  (the tests import them from here)


def run_quietly(settings: RunSettings):
    """Run madeval in-process without the progress bar; return the result and the printed text."""
    out = io.StringIO()
    result = run(settings, show_progress=False, out=out)
    return result, out.getvalue()


def settings_for(base_url: str, tmp_path, **overrides) -> RunSettings:
    """Run settings against ``base_url`` with one configuration built from the debate keys."""
    debate_keys = set(DebateConfig.__dataclass_fields__)
    debate_options = {k: v for k, v in overrides.items() if k in debate_keys}
    run_options = {k: v for k, v in overrides.items() if k not in debate_keys}
    run_options.setdefault("output_path", str(tmp_path / "run"))
    run_options.setdefault("tasks", ["arith_mc"])
    return RunSettings(base_url=base_url, configurations=[DebateConfig(**debate_options)], **run_options)
