"""Headless Chromium for tests: dump a page's DOM after its scripts ran, or take a screenshot."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--enable-logging=stderr", "--v=0",
)


def chromium() -> str:
    """The chromium executable; missing, the test fails under CI (which installs it) and skips elsewhere."""
    found = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    if found is None:
        message = "chromium is not installed (make install / .ci/run install Debian's chromium)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


def run_chromium(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess:
    """Open ``page`` (a file) in a fresh profile with ``args``; returns the finished process."""
    return subprocess.run(
        [chromium(), *FLAGS, f"--user-data-dir={profile}", *args, page.resolve().as_uri()],
        capture_output=True, text=True, timeout=120,
    )
