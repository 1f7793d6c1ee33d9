"""Fixtures of the run folder's tests."""

from __future__ import annotations

import pytest


@pytest.fixture
def victim(tmp_path, request):
    """A file elsewhere, as a link's target, holding the test module's ``SECRET``."""
    path = tmp_path / "elsewhere" / "precious.txt"
    path.parent.mkdir()
    path.write_bytes(request.module.SECRET)
    return path
