"""Fixtures of madeval-freemad's tests: madeval.testing's, with madeval-madc and madeval-freemad registered."""

from __future__ import annotations

import pytest

from madeval.testing import registered
from madeval.testing.fixtures import generated_tasks, madeval_isolated  # noqa: F401
from madeval_freemad import plugin as freemad_plugin
from madeval_madc import plugin as madc_plugin


@pytest.fixture(autouse=True)
def freemad_plugins(madeval_isolated):
    """An isolated cache, no installed plugins; madeval-madc and madeval-freemad registered."""
    with registered(madc_plugin, freemad_plugin):
        yield
