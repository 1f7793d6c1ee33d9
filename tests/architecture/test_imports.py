"""Imports: every module of madeval imports on its own, and no modules import each other in a circle.

The graph is read from the source with :mod:`ast`, so it holds every import: at module level,
inside functions and under ``TYPE_CHECKING``. An import inside a function is still a dependency;
hiding a cycle there only moves the failure to the first call.
"""

from __future__ import annotations

import ast
import graphlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
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


def third_party_imports(root: Path = PACKAGE) -> list[str]:
    """The modules outside madeval that madeval's modules import when they are imported: the
    imports of their top level (``if`` and ``try`` blocks included), not those in functions."""

    def top_level(body: list[ast.stmt]) -> Iterator[str]:
        for node in body:
            if isinstance(node, ast.Import):
                yield from (alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                yield node.module
            elif isinstance(node, (ast.If, ast.Try)):
                for block in (node.body, node.orelse, getattr(node, "finalbody", [])):
                    yield from top_level(block)
                for handler in getattr(node, "handlers", []):
                    yield from top_level(handler.body)

    names = set()
    for path in module_files(root).values():
        names.update(top_level(ast.parse(path.read_text(encoding="utf-8"), str(path)).body))
    return sorted(name for name in names if name.partition(".")[0] != root.name)


# Imports each module of the list on stdin in a child forked from a parent that imported only the
# modules outside madeval (third_party_imports()): a child starts with no madeval module loaded, as
# a fresh interpreter does, without paying numpy's, openai's and matplotlib's imports once per
# module. Prints {module: the last line of its error} for the modules that failed. The children
# share compiled bytecode through a temporary folder (written even where PYTHONDONTWRITEBYTECODE
# is set: every child would otherwise compile madeval again).
_FORKED_IMPORTS = """\
import importlib, json, os, signal, sys, tempfile, traceback
request = json.load(sys.stdin)
for name in request["preload"]:
    try:
        importlib.import_module(name)
    except Exception:  # a child imports it again and reports what fails
        pass
loaded = sorted(name for name in sys.modules if name.partition(".")[0] == "madeval")
if loaded:
    sys.exit(f"the parent must not import madeval, but a library loaded {loaded}")
sys.dont_write_bytecode = False
sys.pycache_prefix = tempfile.mkdtemp(prefix="madeval-pyc-")
sys.stdout.flush()
failed = {}
for module in request["modules"]:
    reader, writer = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(reader)
        signal.alarm(request["timeout"])  # a module that hangs on import is killed, and reported
        try:
            importlib.import_module(module)
            status = 0
        except BaseException:
            os.write(writer, (traceback.format_exc().strip().splitlines() or ["?"])[-1].encode())
            status = 1
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(status)
    os.close(writer)
    with os.fdopen(reader, "rb") as pipe:
        error = pipe.read().decode("utf-8", "replace")
    _, status = os.waitpid(pid, 0)
    if status:
        failed[module] = error or f"exit status {status:#x} (a signal, such as the timeout)"
print(json.dumps(failed))
"""


def import_each_alone(modules: list[str], preload: list[str], timeout_s: int = 120) -> dict[str, str]:
    """Import each of ``modules`` with no other madeval module loaded, in children of a parent that
    imported ``preload``: module -> error, for those that fail."""
    request = {"preload": preload, "modules": modules, "timeout": timeout_s}
    done = subprocess.run([sys.executable, "-c", _FORKED_IMPORTS], input=json.dumps(request),
                          capture_output=True, text=True, timeout=300 + timeout_s * len(modules))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_module_that_needs_another_imported_first_fails_the_import_check(tmp_path, monkeypatch):
    """The forked children start with no madeval module loaded: a module that works only after
    another one was imported fails, one that works alone passes, and one that hangs is reported."""
    package = tmp_path / "madeval_probe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "base.py").write_text("import numpy\nVALUE = 1\n")
    (package / "alone.py").write_text("from madeval_probe.base import VALUE\n")
    (package / "needs_base.py").write_text("import madeval_probe\nVALUE = madeval_probe.base.VALUE\n")
    (package / "hangs.py").write_text("import time\ntime.sleep(60)\n")
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")])))
    modules = ["madeval_probe.base", "madeval_probe.needs_base", "madeval_probe.alone", "madeval_probe.hangs"]
    failed = import_each_alone(modules, preload=["numpy"], timeout_s=2)
    assert set(failed) == {"madeval_probe.needs_base", "madeval_probe.hangs"}
    assert "has no attribute 'base'" in failed["madeval_probe.needs_base"]
    assert "signal" in failed["madeval_probe.hangs"]


def test_every_module_imports_alone_in_a_fresh_interpreter():
    """A module that works only after another was imported fails (each imports in a child forked
    from an interpreter that loaded only the libraries madeval imports, never madeval itself)."""
    modules = sorted(set(module_files()) - NOT_IMPORTABLE_ALONE)
    assert "madeval.metrics.base" in modules and "madeval.task.groups" in modules
    assert {"numpy", "click", "yaml"} <= set(third_party_imports())  # the parent's imports are read
    failed = import_each_alone(modules, preload=third_party_imports())
    assert not failed, "\n".join(f"{module}: {error}" for module, error in failed.items())


@pytest.mark.parametrize("module", sorted(NOT_IMPORTABLE_ALONE))
def test_modules_left_out_of_the_import_check_exist(module):
    """The exceptions name real modules (a renamed module must not leave a stale exception)."""
    assert module in module_files()
