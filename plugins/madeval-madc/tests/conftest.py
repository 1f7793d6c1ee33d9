"""Fixtures of madeval-madc's tests: madeval.testing's, with madeval-madc registered for every test."""

from __future__ import annotations

import pytest

from madeval.testing import registered
from madeval.testing.fixtures import generated_tasks, madeval_isolated  # noqa: F401
from madeval_madc import plugin


@pytest.fixture(autouse=True)
def madc_plugin(madeval_isolated):
    """An isolated cache, no installed plugins; madeval-madc registered."""
    with registered(plugin):
        yield
