"""Fixtures of madeval-frameworks's tests: an isolated cache, only madeval-madc and madeval-frameworks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

PLUGINS = Path(__file__).resolve().parents[2]
for package in ("madeval-madc", "madeval-frameworks"):  # when not installed (make install does)
    try:
        __import__(package.replace("-", "_"))
    except ImportError:  # pragma: no cover
        sys.path.insert(0, str(PLUGINS / package))

from madeval_frameworks import plugin as frameworks_plugin  # noqa: E402
from madeval_madc import plugin as madc_plugin  # noqa: E402
from madeval_madc.testing import registered  # noqa: E402


@pytest.fixture(autouse=True)
def frameworks_plugins(monkeypatch, tmp_path_factory):
    """Keep the cache in a temporary folder, load no entry points, register madc and frameworks."""
    monkeypatch.setenv("MADEVAL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("MADEVAL_LOAD_PLUGINS", "")
    with registered((madc_plugin, "madeval-madc"), (frameworks_plugin, "madeval-frameworks")):
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
