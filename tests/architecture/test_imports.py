"""Imports: every module of madeval imports on its own, and no modules import each other in a circle.

The graph is read from the source with :mod:`ast`, so it holds every import: at module level,
inside functions and under ``TYPE_CHECKING``. An import inside a function is still a dependency;
hiding a cycle there only moves the failure to the first call.
"""

from __future__ import annotations

import ast
import graphlib
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import madeval

PACKAGE = Path(madeval.__file__).parent
# ``python -m madeval`` runs the command line when imported: it is started, not imported.
NOT_IMPORTABLE_ALONE = {"madeval.__main__"}


def module_files(root: Path = PACKAGE) -> dict[str, Path]:
    """Module name -> file, for every ``.py`` file under ``root`` reached through packages only
    (a folder without ``__init__.py``, such as a task folder's ``!function`` code, is not part of
    the package)."""
    found = {}
    for folder, subfolders, files in os.walk(root, followlinks=True):
        here = Path(folder)
        if not (here / "__init__.py").is_file():
            subfolders.clear()
            continue
        subfolders[:] = sorted(s for s in subfolders if s != "__pycache__")
        parts = [root.name, *here.relative_to(root).parts]
        for file in sorted(files):
            if file.endswith(".py"):
                stem = file[:-3]
                name = ".".join(parts if stem == "__init__" else [*parts, stem])
                found[name] = here / file
    return found


def imported_modules(name: str, path: Path, known: set[str]) -> set[str]:
    """The modules of ``known`` that module ``name`` (at ``path``) imports anywhere in its code.

    Relative imports are resolved against the module's package; ``from pkg import x`` counts as
    an import of ``pkg.x`` when that is a module, else of ``pkg``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            parts = package.split(".")
            base = parts[: len(parts) - node.level + 1] if node.level else []  # level 1: the package
            source = ".".join([*base, *([node.module] if node.module else [])])
            for alias in node.names:
                submodule = f"{source}.{alias.name}"
                found.add(submodule if submodule in known else source)
    return (found & known) - {name}


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module name -> the package's modules it imports."""
    files = module_files(root)
    return {name: imported_modules(name, path, set(files)) for name, path in files.items()}


def first_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """The modules of one import cycle (the first repeated at the end), or ``None``: the standard
    library's topological sorter reports one when it finds it."""
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as error:
        return error.args[1]
    return None


def test_the_graph_reader_sees_every_kind_of_import(tmp_path):
    """Relative, absolute, in a function, under TYPE_CHECKING, and ``from pkg import submodule``."""
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "notapackage").mkdir()
    (pkg / "__init__.py").write_text("VERSION = 1\n")
    (pkg / "a.py").write_text("from . import VERSION, b\n")
    (pkg / "b.py").write_text("def f():\n    from .sub import c\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..a import x\nimport pkg.b, os\n"
    )
    (pkg / "notapackage" / "code.py").write_text("import pkg.a\n")
    graph = import_graph(pkg)
    assert graph == {
        "pkg": set(),
        "pkg.a": {"pkg", "pkg.b"},
        "pkg.b": {"pkg.sub.c"},
        "pkg.sub": set(),
        "pkg.sub.c": {"pkg.a", "pkg.b"},
    }
    cycle = first_cycle(graph)
    assert cycle is not None and set(cycle) == {"pkg.a", "pkg.b", "pkg.sub.c"}
    graph["pkg.sub.c"] = {"pkg"}
    assert first_cycle(graph) is None


def test_no_import_cycles():
    """Not even through imports inside functions or under TYPE_CHECKING."""
    graph = import_graph()
    assert len(graph) > 50 and "madeval.analysis.run_data" in graph["madeval.leaderboard"]  # the graph is read
    cycle = first_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def import_alone(module: str) -> tuple[str, subprocess.CompletedProcess]:
    """Import ``module`` in a fresh interpreter."""
    code = "import importlib, sys; importlib.import_module(sys.argv[1])"
    return module, subprocess.run([sys.executable, "-c", code, module], capture_output=True, text=True,
                                  timeout=120)


def test_every_module_imports_alone_in_a_fresh_interpreter():
    """Two interpreters at a time: a module that works only after another was imported fails."""
    modules = sorted(set(module_files()) - NOT_IMPORTABLE_ALONE)
    assert "madeval.metrics.base" in modules and "madeval.task.groups" in modules
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(import_alone, modules))
    failed = [f"{module}: {(result.stderr.strip().splitlines() or ['?'])[-1]}"
              for module, result in results if result.returncode != 0]
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("module", sorted(NOT_IMPORTABLE_ALONE))
def test_modules_left_out_of_the_import_check_exist(module):
    """The exceptions name real modules (a renamed module must not leave a stale exception)."""
    assert module in module_files()
