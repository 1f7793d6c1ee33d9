"""Sphinx configuration of madeval's docs: MyST Markdown pages, the public API by autodoc.

``make docs`` builds them with every warning an error (-W) and every unresolved reference a
warning (-n). The pages' generated blocks come from generated.py (``make docs-update``).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's madeval, whatever else is installed

import madeval  # noqa: E402

project = "madeval"
release = version = madeval.__version__
extensions = ["myst_parser", "sphinx.ext.autodoc"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build"]
# Links to a page's section (getting-started.md#install) resolve as they do on GitHub.
myst_heading_anchors = 3
autodoc_member_order = "bysource"
autodoc_typehints = "description"
html_theme = "alabaster"
html_title = "madeval"
# Every reference must resolve (-n), except two kinds the API page cannot resolve by design: the
# docstrings of the public names point into madeval's internal modules (madeval.task.definition.Reading),
# which the site does not document (only madeval.__all__ and madeval.testing are public), and type
# hints name the standard library or a name without its module (Path, random.Random), whose
# inventory the build does not fetch (no network). A reference to a public name (madeval.X) that
# does not exist still fails the build.
nitpick_ignore_regex = [
    (r"py:.*", r"madeval\.[a-z_]+\..+"),
    (r"py:.*", r"[A-Za-z_][A-Za-z0-9_]*"),
    (r"py:.*", r"(pathlib|random|types|collections\.abc|typing|asyncio|yaml)\.[A-Za-z_.]+"),
]
# Wide enough for the CLI help and the settings tables without scrolling.
html_theme_options = {"page_width": "1200px", "sidebar_width": "220px"}
