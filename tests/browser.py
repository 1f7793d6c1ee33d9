"""Headless Chromium for tests: dump a page's DOM after its scripts ran, or take a screenshot."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from madeval.testing.browser import MISSING, chromium_command, find_chromium

__all__ = ["chromium", "chromium_command", "layout", "run_chromium", "screenshots"]


def chromium() -> str:
    """The chromium executable; missing, the test fails under CI (which installs it) and skips elsewhere."""
    found = find_chromium()
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(MISSING)
        pytest.skip(MISSING)
    return found


def run_chromium(page: Path, profile: Path, *args: str) -> subprocess.CompletedProcess:
    """Open ``page`` (a file) in a fresh profile with ``args``; returns the finished process."""
    return subprocess.run(chromium_command(chromium(), profile, *args, page.resolve().as_uri()),
                          capture_output=True, text=True, timeout=120)


def screenshots(page: Path, folder: Path, height: int, widths: tuple[int, ...] = (1400, 800)) -> list[Path]:
    """Screenshots of ``page`` at each width (and ``height``), each taken and of a drawn page's size."""
    shots = []
    for width in widths:
        shot = folder / f"{page.stem}-{width}.png"
        taken = run_chromium(page, folder / f"profile-shot-{width}", f"--screenshot={shot}",
                             f"--window-size={width},{height}")
        assert taken.returncode == 0, taken.stderr[-2000:]
        assert shot.stat().st_size > 50_000
        shots.append(shot)
    return shots


#: Added at the end of a page: records on ``<html data-layout>`` what overflows horizontally.
LAYOUT_PROBE = """<script>
(function () {
  var root = document.documentElement;
  var boxes = Array.prototype.slice.call(document.querySelectorAll('.scroll'));
  root.setAttribute('data-layout', JSON.stringify({
    width: window.innerWidth,
    page_overflow: root.scrollWidth - root.clientWidth,
    tables: boxes.length,
    overflowing_tables: boxes.filter(function (box) { return box.scrollWidth > box.clientWidth + 1; }).length
  }));
})();
</script>"""


def layout(page_html: str, folder: Path, width: int) -> dict:
    """Open ``page_html`` in a window ``width`` pixels wide and return what overflows: the page
    (``page_overflow``, pixels beyond the window) and the tables' scroll boxes (``overflowing_tables``)."""
    import html
    import json
    import re

    page = folder / f"layout-{width}.html"
    page.write_text(page_html.replace("</body>", LAYOUT_PROBE + "</body>"), encoding="utf-8")
    done = run_chromium(page, folder / f"profile-layout-{width}", "--dump-dom", f"--window-size={width},1200")
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'data-layout="([^"]*)"', done.stdout)
    assert found, "the layout probe did not run"
    return json.loads(html.unescape(found.group(1)))
