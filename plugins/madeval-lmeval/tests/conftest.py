"""Fixtures of madeval-lmeval's tests: madeval's, madeval-lmeval registered, the hub never asked."""

from __future__ import annotations

import os

import pytest

from madeval.testing import registered
from madeval.testing.fixtures import madeval_isolated  # noqa: F401
from madeval_lmeval import plugin


@pytest.fixture(autouse=True)
def lmeval_plugin(madeval_isolated, monkeypatch):
    """An isolated cache, no installed plugins; madeval-lmeval registered; the hub offline."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with registered(plugin):
        yield


@pytest.fixture(scope="session")
def lm_tasks():
    """A function that loads ``lm_eval:NAME`` as madeval loads it (lm-eval's index is built once)."""
    if not os.environ.get("MADEVAL_DATA_DIR"):
        pytest.skip("MADEVAL_DATA_DIR (the local mirrors) is not set")
    from madeval.core.plugins import registries
    from madeval.task.definition import task_loader
    from madeval.task.files import task_index

    loaded = {}

    def load(name):
        with pytest.MonkeyPatch.context() as patch, registered(plugin):
            patch.setenv("HF_HUB_OFFLINE", "1")
            patch.setenv("MADEVAL_LOAD_PLUGINS", "")
            if name not in loaded:
                built = registries()
                loaded[name] = task_loader(task_index(built, []), built.extractors, built.metrics)(name)
            return loaded[name]

    return load
