"""Fixtures of madeval-madc's tests: an isolated cache, no third-party plugins but this one."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

try:  # installed (make install) or not: the package root works either way
    import madeval_madc  # noqa: F401
except ImportError:  # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from madeval_madc import plugin
from madeval_madc.testing import registered


@pytest.fixture(autouse=True)
def madc_plugin(monkeypatch, tmp_path_factory):
    """Keep the cache in a temporary folder, load no entry points, register madeval-madc."""
    monkeypatch.setenv("MADEVAL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("MADEVAL_LOAD_PLUGINS", "")
    with registered((plugin, "madeval-madc")):
        yield


@pytest.fixture(scope="module")
def arith_tasks():
    """The generated tasks (arith_mc, arith_yesno)."""
    from madeval.config import RunSettings
    from madeval.plugins import components
    from madeval.run import load_tasks

    with pytest.MonkeyPatch.context() as patch:  # before any test: never load entry points
        patch.setenv("MADEVAL_LOAD_PLUGINS", "")
        return load_tasks(RunSettings(tasks=["generated"]), components())
