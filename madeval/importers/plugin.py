"""The built-in importers: MALLM output files and lm-eval --log_samples files, as madeval runs."""

from __future__ import annotations

from madeval.core.hookspecs import hookimpl
from madeval.importers.lmeval import LmEvalSamplesImporter
from madeval.importers.mallm import MallmImporter


@hookimpl
def register_importers(register):
    """The MALLM and lm-eval importers."""
    register("mallm", MallmImporter)
    register("lm-eval", LmEvalSamplesImporter, aliases=("lm_eval", "lmeval"))
