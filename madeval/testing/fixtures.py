"""pytest fixtures for madeval's and its plugins' tests (a pytest plugin: ``-p madeval.testing.fixtures``).

Installed madeval registers this module as a pytest plugin (the ``pytest11`` entry point), so a
plugin's tests can ask for these fixtures by name; a ``conftest.py`` may also import them
(``from madeval.testing.fixtures import madeval_isolated, generated_tasks, simulator``). None of
them is autouse: a test suite that does not ask for them is not touched.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterator

import pytest


@pytest.fixture
def madeval_isolated(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Keep the response cache in a temporary folder and load no installed plugin (entry point):
    a test registers the plugins it needs with :func:`madeval.testing.registered`.

    The cache folder's ``models`` (the embedded model requantised, 145 MB:
    :func:`madeval.llm.embedded.served_gguf_path`) is one folder for the whole test session, the
    workers of pytest-xdist included: the first test that starts the embedded model writes it, the
    others read it (a test of the requantising sets ``MADEVAL_CACHE_DIR`` to a folder of its own)."""
    monkeypatch.setenv("MADEVAL_CACHE_DIR", str(cache_folder(tmp_path_factory)))
    monkeypatch.setenv("MADEVAL_LOAD_PLUGINS", "")


def cache_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new, empty cache folder but for ``models``, the test session's one (see
    :func:`madeval_isolated`); for fixtures of a wider scope than a test's."""
    cache = tmp_path_factory.mktemp("cache")
    (cache / "models").symlink_to(session_folder(tmp_path_factory, "embedded-models"), target_is_directory=True)
    return cache


def session_folder(tmp_path_factory: pytest.TempPathFactory, name: str) -> Path:
    """The folder ``name`` that every worker of this test session shares (pytest-xdist gives each
    worker a base folder under the run's), made when missing."""
    base = tmp_path_factory.getbasetemp()
    shared = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / name
    shared.mkdir(exist_ok=True)
    return shared


@pytest.fixture(scope="session")
def generated_tasks() -> dict[str, Any]:
    """The generated tasks (``arith_mc``, ``arith_yesno``) by name, loaded once."""
    from madeval.core.plugins import registries
    from madeval.settings.config import RunSettings
    from madeval.task.definition import load_tasks

    with pytest.MonkeyPatch.context() as patch:  # may run before any test: never load entry points
        patch.setenv("MADEVAL_LOAD_PLUGINS", "")
        return load_tasks(RunSettings(tasks=["generated"]), registries())


@pytest.fixture(scope="module")
def simulator(generated_tasks: dict[str, Any]) -> Iterator[Any]:
    """The simulator on a loopback port, knowing the generated tasks: accuracy 0.6, no conformity,
    no latency. Yields the :class:`madeval.simulator.Simulation`; point madeval at its ``base_url``."""
    from madeval.simulator import simulate

    with simulate(tasks=generated_tasks.values(), accuracy=0.6, conformity=0.0) as running:
        yield running
