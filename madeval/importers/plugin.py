"""The built-in importers: MALLM output files and lm-eval --log_samples files, as madeval runs."""

from __future__ import annotations

from ..hookspecs import hookimpl
from .lmeval import LmEvalSamplesImporter
from .mallm import MallmImporter


@hookimpl
def register_importers(register):
    """The MALLM and lm-eval importers."""
    register("mallm", MallmImporter)
    register("lm-eval", LmEvalSamplesImporter, aliases=("lm_eval", "lmeval"))
