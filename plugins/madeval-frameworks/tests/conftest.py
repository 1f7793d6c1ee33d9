"""Fixtures of madeval-frameworks's tests: madeval.testing's, with madeval-madc and madeval-frameworks registered."""

from __future__ import annotations

import pytest

from madeval.testing import registered
from madeval.testing.fixtures import generated_tasks, madeval_isolated  # noqa: F401
from madeval_frameworks import plugin as frameworks_plugin
from madeval_madc import plugin as madc_plugin


@pytest.fixture(autouse=True)
def frameworks_plugins(madeval_isolated):
    """An isolated cache, no installed plugins; madeval-madc and madeval-frameworks registered."""
    with registered(madc_plugin, frameworks_plugin):
        yield
