"""Headless Chromium as madeval's browser tests and benchmarks start it (``tests/browser.py``,
``bench/viewer.py``): where it is installed, and its command line. This module does not import pytest."""

from __future__ import annotations

import shutil
from pathlib import Path

#: Headless, no sandbox (containers run as root), nothing fetched in the background, logs on stderr.
FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--enable-logging=stderr", "--v=0",
)

#: What to say when Chromium is missing.
MISSING = "chromium is not installed (make install / .ci/run install Debian's chromium)"


def find_chromium() -> str | None:
    """The chromium executable on the PATH (or Debian's ``/usr/bin/chromium``); None when missing."""
    return shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)


def chromium_command(executable: str, profile: Path, *args: str) -> list[str]:
    """The command line starting ``executable`` headless with :data:`FLAGS`, a fresh profile folder
    ``profile`` (so no two runs share state) and then ``args`` (what to open, what to do)."""
    return [executable, *FLAGS, f"--user-data-dir={profile}", *args]
