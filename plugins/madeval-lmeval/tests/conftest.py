"""Fixtures of madeval-lmeval's tests: madeval's, madeval-lmeval registered, the hub never asked.

Every test has a cache folder of its own (``madeval_isolated``), which starts holding lm-eval's index
of its own tasks (:mod:`madeval_lmeval.index_cache`), built once per test session: walking lm-eval's
~14,700 task files takes 10 s of CPU, which each test and process would otherwise spend again. The
tests of the index cache itself start from an empty folder (``lm_eval_folder`` in
``test_lmeval_index_cache.py``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from madeval.testing import registered
from madeval.testing.fixtures import madeval_isolated  # noqa: F401
from madeval_lmeval import plugin
from madeval_lmeval.testing import seed_index, shared_index_file


@pytest.fixture(scope="session")
def lm_eval_index_file(tmp_path_factory) -> Path:
    """lm-eval's index of its own tasks as madeval stores it, built once for the test session and
    shared by pytest-xdist's workers (:func:`madeval_lmeval.testing.shared_index_file`)."""
    return shared_index_file(tmp_path_factory)


@pytest.fixture(autouse=True)
def lmeval_plugin(madeval_isolated, monkeypatch, request):
    """An isolated cache holding lm-eval's index, no installed plugins; madeval-lmeval registered;
    the hub offline. A test over a stand-in lm-eval folder (``lm_eval_folder``, with an empty cache
    folder of its own) does not need the real index, and does not wait for it to be built."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    if "lm_eval_folder" not in request.fixturenames:
        seed_index(request.getfixturevalue("lm_eval_index_file"))
    with registered(plugin):
        yield


@pytest.fixture(scope="session")
def lm_tasks():
    """A function that loads ``lm_eval:NAME`` as madeval loads it, once per session (each test's
    cache folder holds lm-eval's index, see :func:`lmeval_plugin`)."""
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
