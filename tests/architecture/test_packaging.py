"""Packaging: madeval and its plugin packages build quietly, and the wheel holds the whole tree.

Each package is copied (without caches, build leftovers or the worktree's ``madeval/tasks``
symlink) into a temporary folder, as a fresh clone has it, and built there with the installed
setuptools, so the test neither writes into the source tree nor needs the network.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGINS = sorted(p.name for p in (ROOT / "plugins").iterdir() if (p / "pyproject.toml").is_file())
LEFTOVERS = shutil.ignore_patterns("__pycache__", "*.pyc", "build", "dist", "*.egg-info")


def copy_tree(source: Path, target: Path) -> None:
    """Copy a package's source as a fresh clone has it: no caches, no build leftovers, no symlinks."""
    def ignore(folder, names):
        links = {n for n in names if (Path(folder) / n).is_symlink()}
        return set(LEFTOVERS(folder, names)) | links
    shutil.copytree(source, target, ignore=ignore)


def build_wheel(source: Path, out: Path) -> tuple[list[str], str]:
    """Build ``source`` into a wheel in ``out``; return the wheel's file names and pip's output."""
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index", "--no-build-isolation",
         "--wheel-dir", str(out), str(source)],
        capture_output=True, text=True, timeout=300,
    )
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    (wheel,) = out.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist(), output


def tree_files(folder: Path, pattern: str = "*") -> set[str]:
    """Files under ``folder`` (relative, POSIX paths), leaving out caches."""
    return {p.relative_to(folder).as_posix() for p in folder.rglob(pattern)
            if p.is_file() and "__pycache__" not in p.parts}


def warnings_in(output: str) -> list[str]:
    return [line.strip() for line in output.splitlines() if re.search(r"warning", line, re.IGNORECASE)]


def test_madeval_wheel_builds_without_warnings_and_holds_every_task_and_module(tmp_path):
    source = tmp_path / "madeval"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy2(ROOT / name, source / name)
    copy_tree(ROOT / "madeval", source / "madeval")
    copy_tree(ROOT / "tasks", source / "tasks")

    names, output = build_wheel(source, tmp_path / "wheel")

    assert warnings_in(output) == []
    in_wheel = set(names)
    # Every task file (YAML, task code, templates) ships as package data of madeval.tasks.
    tasks = tree_files(ROOT / "tasks")
    assert {t for t in tasks if t.endswith(".yaml")}, "no task YAML found in the tree"
    assert {f"madeval/tasks/{t}" for t in tasks} - in_wheel == set()
    # Every module of madeval (prompt files included) ships, so no sub-package is left unlisted.
    modules = {m for m in tree_files(ROOT / "madeval", "*.py") if not m.startswith("tasks/")}
    assert "debate/prompts/madeval.py" in modules and "debate/prompts/mallm.py" in modules
    assert {f"madeval/{m}" for m in modules} - in_wheel == set()
    assert {"madeval/viewer/viewer.js", "madeval/viewer/viewer.css"} <= in_wheel  # the viewer page's package data
    assert "madeval-0.1.0.dist-info/licenses/LICENSE" in in_wheel


@pytest.mark.parametrize("plugin", PLUGINS)
def test_plugin_wheel_builds_without_warnings(plugin, tmp_path):
    source = tmp_path / plugin
    copy_tree(ROOT / "plugins" / plugin, source)

    names, output = build_wheel(source, tmp_path / "wheel")

    assert warnings_in(output) == []
    package = plugin.replace("-", "_")
    assert {f"{package}/{m}" for m in tree_files(source / package, "*.py")} - set(names) == set()
