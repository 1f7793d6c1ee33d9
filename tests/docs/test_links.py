"""Every relative link of the Markdown that ships with madeval resolves: the file exists, and a
``#section`` names a heading of it (as GitHub and the docs site, ``myst_heading_anchors``, make them)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from markdown_it import MarkdownIt

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted(
    [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *(ROOT / "docs").rglob("*.md"),
     *(ROOT / "plugins").glob("*/README.md"), *(ROOT / "examples").glob("*/README.md")]
)
PARSER = MarkdownIt()


def slug(heading: str) -> str:
    """A heading's anchor as GitHub and MyST make it: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of ``path``'s headings, and of the files it includes whole (docs/contributing.md)."""
    tokens = PARSER.parse(path.read_text(encoding="utf-8"))
    found = {slug(tokens[i + 1].content.replace("`", "")) for i, t in enumerate(tokens) if t.type == "heading_open"}
    for token in tokens:
        included = re.fullmatch(r"\{include\}\s+(\S+)", token.info.strip()) if token.type == "fence" else None
        if included and ":start-after:" not in token.content:
            found |= anchors(path.parent / included.group(1))
    return found


def relative_links(path: Path) -> list[str]:
    """The targets of ``path``'s links and images that point into the repository."""
    found = []
    for token in PARSER.parse(path.read_text(encoding="utf-8")):
        for child in token.children or []:
            target = child.attrs.get("href") or child.attrs.get("src")
            if target and not urlsplit(target).scheme and not target.startswith("mailto:"):
                found.append(target)
    return found


def broken(path: Path) -> list[str]:
    """``path``'s relative links that do not resolve, each with what is wrong."""
    wrong = []
    for target in relative_links(path):
        file_part, _, section = target.partition("#")
        linked = (path.parent / unquote(file_part)).resolve() if file_part else path
        if not linked.exists():
            wrong.append(f"{target}: no such file")
        elif section and linked.suffix == ".md" and section not in anchors(linked):
            wrong.append(f"{target}: no heading #{section} in {os.path.relpath(linked, path.parent)}")
    return wrong


@pytest.mark.parametrize("path", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    assert broken(path) == []


def test_a_broken_link_or_section_is_found(tmp_path):
    (tmp_path / "a.md").write_text("# A page\n\n## Its part\n\n[ok](#its-part) [b](b.md) [c](a.md#nowhere)\n")
    assert broken(tmp_path / "a.md") == ["b.md: no such file", "a.md#nowhere: no heading #nowhere in a.md"]


def test_slugs_are_githubs():
    assert slug("Did the debate beat its first-turn vote?") == "did-the-debate-beat-its-first-turn-vote"
    assert slug("Importing other tools' runs") == "importing-other-tools-runs"
