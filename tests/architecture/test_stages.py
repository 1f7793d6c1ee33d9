"""The house by stage: every import in ``madeval/`` points to its own stage or one below.

The stages run bottom up in :data:`STAGES` (docs/architecture.md draws them). Every ``import`` and
``from ... import`` statement counts, wherever it stands: at the top, inside a function (a lazy
import) or under ``if TYPE_CHECKING:``. Built-in plugins are loaded by name through the plugin
manager (:mod:`madeval.core.plugins`), as third-party ones are through entry points: a name in a
list is not an import, and is not counted here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import madeval

#: Bottom up; a module may import modules of its own stage and of the stages before it.
STAGES = [
    ("errors", "_version"),
    ("util",),
    ("pricing",),
    ("llm",),
    ("core",),
    ("settings",),
    ("metrics",),
    ("debate",),
    ("simulator",),
    ("task", "tasks"),
    ("records",),
    ("testing",),
    ("analysis",),
    ("importers",),
    ("run",),
    ("viewer",),
    ("dynamics",),
    ("leaderboard",),
    ("export",),
    ("builtins",),
    ("evaluation",),
    ("cli",),
    ("__init__", "__main__"),
]
PACKAGE = Path(madeval.__file__).parent


def stage_of(module: str) -> int:
    """The stage index of a dotted module name under ``madeval`` (``madeval`` itself is the top)."""
    parts = module.split(".")
    first = parts[1] if len(parts) > 1 else "__init__"
    for index, names in enumerate(STAGES):
        if first in names:
            return index
    raise AssertionError(f"{module}: its folder {first!r} is in no stage of STAGES; add it where it belongs")


def module_name(path: Path, root: Path) -> str:
    """The dotted name of the module in ``path`` (a package's ``__init__`` names the package)."""
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(path: Path, module: str) -> list[tuple[int, str]]:
    """Every madeval module that ``path`` imports, with its line: absolute and relative imports,
    at the top, in functions and under ``TYPE_CHECKING`` alike."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((node.lineno, target))
    return [(line, name) for line, name in found if name == "madeval" or name.startswith("madeval.")]


def upward_imports(root: Path) -> list[str]:
    """``file:line: a -> b`` for every import of a higher stage under ``root`` (a madeval package)."""
    wrong = []
    for path in sorted(root.rglob("*.py")):
        module = module_name(path, root)
        if module == "madeval":  # the package root re-exports the public API from every stage
            continue
        for line, target in imports_of(path, module):
            if target == "madeval":
                wrong.append(f"{path.relative_to(root.parent)}:{line}: imports the package root; "
                             "import the defining module")
            elif stage_of(target) > stage_of(module):
                wrong.append(f"{path.relative_to(root.parent)}:{line}: {module} -> {target}")
    return wrong


def test_every_import_points_down_the_stages():
    assert upward_imports(PACKAGE) == []


def test_an_upward_import_is_caught(tmp_path):
    """The guard itself: a lazy import of the run from the debate loop, and one under
    TYPE_CHECKING from the wire, are both reported with their lines."""
    root = tmp_path / "madeval"
    (root / "debate").mkdir(parents=True)
    (root / "llm").mkdir()
    (root / "debate" / "loop.py").write_text("def f():\n    from ..run.engine import run\n")
    (root / "llm" / "wire.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from madeval.records.folder import RUN_FILE\n"
        "from madeval.util.aio import run_loop\n")
    assert upward_imports(root) == [
        "madeval/debate/loop.py:2: madeval.debate.loop -> madeval.run.engine",
        "madeval/llm/wire.py:3: madeval.llm.wire -> madeval.records.folder",
    ]


@pytest.mark.parametrize("module", ["madeval.nowhere.x"])
def test_a_folder_of_no_stage_is_named(module):
    with pytest.raises(AssertionError, match="'nowhere' is in no stage"):
        stage_of(module)
