"""Shared fixtures: an isolated cache folder, the generated tasks, and a running simulator.

``generated_tasks`` and ``sim`` (the simulator over them) are madeval.testing's fixtures, the ones
plugin packages' tests use.
"""

from __future__ import annotations

import pytest

from madeval.testing.fixtures import generated_tasks, madeval_isolated  # noqa: F401
from madeval.testing.fixtures import simulator as sim  # noqa: F401


@pytest.fixture(autouse=True)
def isolated(madeval_isolated, monkeypatch):
    """Keep the response cache out of the home folder and third-party plugins out of tests."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # no network: hub datasets come from the local mirrors
    for name in ("MADEVAL_API_KEY", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def pytest_collection_modifyitems(items):
    """Tests marked ``slow`` run first. pytest-xdist hands tests out in collection order, so a long
    test collected last (the plugins' tests come after tests/) would keep one worker busy while the
    other one has nothing left; started first, it runs beside the many short tests."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)  # stable: the order is kept otherwise
