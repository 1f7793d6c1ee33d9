"""What the docs must cover, checked against the code (as datasette checks its plugin hooks and
settings): every hook with its exact signature, every run setting, every command, the stages."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import re
from dataclasses import fields
from pathlib import Path

import pytest
from architecture.test_stages import STAGES
from markdown_it import MarkdownIt

from madeval.cli.settings_options import flag_names
from madeval.core import hookspecs
from madeval.settings.board_options import LeaderboardOptions
from madeval.settings.config import DebateConfig, RunSettings

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def docs_module(name: str):
    """A module of docs/ (not a package), loaded from its file without touching sys.path."""
    spec = importlib.util.spec_from_file_location(f"madeval_docs_{name}", DOCS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


generated = docs_module("generated")  # what the generated blocks are made of


def text(page: str) -> str:
    return (DOCS / page).read_text(encoding="utf-8")


def hooks() -> list[tuple[str, str]]:
    """Every hook of madeval.core.hookspecs: (name, signature as written in a ``def``)."""
    return [(name, f"def {name}{inspect.signature(function)}")
            for name, function in inspect.getmembers(hookspecs, inspect.isfunction)
            if getattr(function, "madeval_spec", None) is not None]


def test_there_are_hooks_to_check():
    assert {"register_deciders", "simulator_reply"} <= {name for name, _ in hooks()}


@pytest.mark.parametrize("name,signature", hooks())
def test_every_hook_has_a_section_with_its_exact_signature(name, signature):
    page = text("plugins.md")
    assert f"\n### {name}\n" in page, f"docs/plugins.md has no section '### {name}'"
    section = page.split(f"\n### {name}\n", 1)[1].split("\n### ", 1)[0].split("\n## ", 1)[0]
    assert signature in section, f"the section of {name} does not show '{signature}'"


def declared(cls: type) -> list[str]:
    return [spec.name for spec in fields(cls) if spec.metadata.get("option") is not None]


@pytest.mark.parametrize("cls", [DebateConfig, RunSettings, LeaderboardOptions], ids=lambda c: c.__name__)
def test_every_setting_is_in_the_settings_reference_with_its_flag(cls):
    page = text("reference/settings.md")
    for name in declared(cls):
        row = next((line for line in page.splitlines() if line.startswith(f"| `{name}` |")), None)
        assert row is not None, f"{name} has no row in docs/reference/settings.md"
        option = next(spec for spec in fields(cls) if spec.name == name).metadata["option"]
        if option.cli:
            for flag in flag_names(name, option):
                assert f"`{flag}`" in row, (name, flag)


def test_every_command_has_its_help_in_the_cli_reference():
    page = text("reference/cli.md")
    paths = generated.commands()
    assert ("run",) in paths and ("leaderboard", "check") in paths
    for path in paths:
        assert f"# madeval {' '.join(path)}\n" in page, f"madeval {' '.join(path)} has no section"
        assert f"Usage: madeval {' '.join(path)} [OPTIONS]" in page, f"madeval {' '.join(path)}: no help"


def test_the_stage_table_lists_the_stages_in_order():
    contributing = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    table = contributing.split("<!-- the stage table", 1)[1].split("<!-- end of the stage table -->", 1)[0]
    listed = []
    for line in table.splitlines():
        cells = line.split("|")
        if len(cells) > 3 and cells[1].strip().isdigit():
            listed += [re.sub(r"\.py$|/$", "", name) for name in re.findall(r"`([^`]+)`", cells[2])]
    staged = [name for stage in STAGES for name in stage if name not in ("tasks", "__main__")]
    assert listed == staged


def python_blocks() -> list[tuple[str, int, str]]:
    found = []
    for page in sorted(DOCS.rglob("*.md")):
        for token in MarkdownIt().parse(page.read_text(encoding="utf-8")):
            if token.type == "fence" and token.info.strip() == "python":
                found.append((str(page.relative_to(DOCS)), token.map[0] + 1, token.content))
    return found


@pytest.mark.parametrize("page,line,code", python_blocks(), ids=lambda v: str(v) if isinstance(v, (str, int)) else "")
def test_every_python_block_of_the_docs_is_python(page, line, code):
    ast.parse(code.replace("...   #", "pass  #"), filename=f"{page}:{line}")


def test_every_public_name_is_in_the_api_reference():
    """autodoc's ``automodule madeval :members:`` documents the classes and functions of ``__all__``;
    a public name of another kind (a marker, a constant) has no docstring of its own for autodoc to
    find, so the API page must name it."""
    import madeval

    page = text("reference/api.md")
    assert ".. automodule:: madeval\n   :members:" in page
    for name in madeval.__all__:
        value = getattr(madeval, name)
        if name != "__version__" and not (inspect.isclass(value) or inspect.isroutine(value)):
            assert f"madeval.{name}\n" in page, f"madeval.{name} is public but not on docs/reference/api.md"
