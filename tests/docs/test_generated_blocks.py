"""The blocks of README.md and docs/ generated from the code (CLI help, the components table, the
board's column legend, every run setting) are what the code produces now: ``cog --check``, as
datasette checks its docs. ``make docs-update`` rewrites them."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from cogapp import Cog

from madeval.leaderboard.render import LEGEND

ROOT = Path(__file__).resolve().parents[2]
#: The files that hold generated blocks: the Makefile's DOCS_GENERATED.
FILES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "docs" / "reference").glob("*.md"))]


def cog_check(*paths: Path) -> tuple[int, str]:
    """``cog --check -I docs PATHS``: its exit status and what it printed."""
    printed = io.StringIO()
    with redirect_stdout(printed), redirect_stderr(printed):
        status = Cog().main(["cog", "--check", "-I", str(ROOT / "docs"), *map(str, paths)])
    return status, printed.getvalue()


def generated_files() -> list[Path]:
    return [path for path in FILES if "[[[cog" in path.read_text(encoding="utf-8")]


def test_the_generated_blocks_are_where_the_docs_say():
    names = {str(path.relative_to(ROOT)) for path in generated_files()}
    assert {"README.md", "docs/leaderboard.md", "docs/components.md", "docs/reference/cli.md",
            "docs/reference/settings.md"} <= names


@pytest.mark.parametrize("path", generated_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_generated_block_is_what_the_code_produces(path, monkeypatch):
    monkeypatch.setenv("MADEVAL_LOAD_PLUGINS", "")  # the built-in components only, whatever is installed
    status, printed = cog_check(path)
    assert status == 0, f"{printed}\nrun 'make docs-update' and commit the result"


def test_a_stale_block_fails_the_check(tmp_path, monkeypatch):
    """The check itself: the legend page with one column's meaning changed is out of date."""
    monkeypatch.setenv("MADEVAL_LOAD_PLUGINS", "")
    page = (ROOT / "docs" / "leaderboard.md").read_text(encoding="utf-8")
    meaning = LEGEND["turns"]
    assert f"- **turns**: {meaning}." in page
    stale = tmp_path / "leaderboard.md"
    stale.write_text(page.replace(meaning, "how long the debate felt"), encoding="utf-8")
    assert cog_check(stale)[0] != 0
