"""Shared fixtures: an isolated cache folder, the generated tasks, and a running simulator."""

from __future__ import annotations

import pytest

from madeval.config import RunSettings
from madeval.plugins import components
from madeval.run import load_tasks
from madeval.simulator import simulate


@pytest.fixture(autouse=True)
def isolated(monkeypatch, tmp_path_factory):
    """Keep the response cache out of the home folder and third-party plugins out of tests."""
    monkeypatch.setenv("MADEVAL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("MADEVAL_LOAD_PLUGINS", "")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no network: hub datasets come from the local mirrors
    for name in ("MADEVAL_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="session")
def generated_tasks():
    """The generated tasks (arith_mc, arith_yesno), loaded once."""
    return load_tasks(RunSettings(tasks=["generated"]), components())


@pytest.fixture(scope="module")
def sim(generated_tasks):
    """A simulator that knows the generated tasks: accuracy 0.6, no conformity, no latency."""
    with simulate(tasks=generated_tasks.values(), accuracy=0.6, conformity=0.0) as running:
        yield running
