"""The public API: what ``madeval`` exports, what plugin packages import, and ``madeval.evaluate``."""

from __future__ import annotations

import ast
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

import madeval
from madeval import UsageError, evaluate
from madeval.records.folder import read_records

ROOT = Path(__file__).resolve().parents[2]


def test_every_public_name_imports_and_the_engine_loads_only_when_asked():
    """``from madeval import *`` gives every name of ``__all__``; a bare ``import madeval`` (what
    ``madeval --help`` pays) loads neither the engine nor the built-in components."""
    code = (
        "import sys, madeval\n"
        "heavy = [m for m in ('madeval.run.engine', 'madeval.debate.loop', 'madeval.builtins.paradigms', "
        "'madeval.task.definition') if m in sys.modules]\n"
        "names = {}\n"
        "exec('from madeval import *', names)\n"
        "print(heavy, sorted(set(madeval.__all__) - set(names)), madeval.registries.__name__)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["[]", "[]", "registries"]
    from madeval.core.components import Decider

    assert madeval.Decider is Decider
    with pytest.raises(AttributeError, match="no attribute 'Decidr'"):
        madeval.Decidr  # noqa: B018


def _madeval_imports(path: Path) -> set[str]:
    """The ``madeval`` modules a file imports from (``madeval`` itself for the package root)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules = [node.module]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        found |= {m for m in modules if m == "madeval" or m.startswith("madeval.")}
    return found


def test_internal_modules_never_import_names_from_the_package_root():
    """The root imports the modules it re-exports; one of them taking a name from the root back
    (``from madeval import hookimpl``, ``from . import __version__``) would be an import cycle."""
    package = ROOT / "madeval"
    taking = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(ROOT)
        if relative.parts[1] == "tasks" or path == package / "__init__.py":
            continue  # task code (a symlink into tasks/, imported by name) and the root itself
        parts = list(relative.with_suffix("").parts)
        here = parts[:-1]  # the package the file is in (for __init__.py, the package itself)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            if node.level:
                base = here[: len(here) - node.level + 1] + (node.module.split(".") if node.module else [])
            else:
                base = node.module.split(".") if node.module else []
            if base != ["madeval"]:
                continue
            names = [a.name for a in node.names
                     if not (package / a.name).is_dir() and not (package / f"{a.name}.py").is_file()]
            if names:
                taking.append(f"{relative}:{node.lineno} {', '.join(names)}")
    assert taking == []


def test_plugin_packages_import_only_the_public_api():
    files = sorted(ROOT.glob("plugins/*/madeval_*/*.py"))
    assert len(files) > 15  # the three packages are there
    reaching_in = {}
    for path in files:
        key = f"{path.parent.name}/{path.name}"
        inner = _madeval_imports(path) - {"madeval", "madeval.testing"}
        if inner:
            reaching_in[key] = sorted(inner)
    assert reaching_in == {}


def _records(folder):
    return sorted(read_records(folder), key=lambda r: r["unit"]["item"])


def test_evaluate_runs_on_the_simulator_and_returns_what_it_wrote(sim, tmp_path, capsys):
    result = evaluate("arith_mc", decider="counting", base_url=sim.base_url, output_path=tmp_path / "run",
                      paradigm="collective_refinement", agents=3, max_turns=1, limit=8, cache="off")
    assert capsys.readouterr() == ("", "")  # nothing printed unless asked
    assert result.folder == tmp_path / "run"
    assert (result.outcome.finished, result.outcome.skipped, result.outcome.failed) == (8, 0, 0)
    records = _records(result.folder)
    assert len(records) == 8 and {r["transcript"]["decision"]["decider"] for r in records} == {"counting"}
    [row] = [r for r in result.rows if r["metric"] == "accuracy"]
    assert row["task"] == "arith_mc" and row["items"] == 8
    assert row["score"] == pytest.approx(sum(r["metrics"]["accuracy"] for r in records) / 8, abs=1e-12)
    stored = json.loads((result.folder / "leaderboard.json").read_text())
    assert json.loads(json.dumps(result.rows)) == stored["rows"]  # plain data, as written
    run = json.loads((result.folder / "run.json").read_text())
    assert run["settings"]["limit"] == 8 and run["settings"]["cache"] == "off"

    again = evaluate(["arith_mc"], decider="counting", base_url=sim.base_url, output_path=str(tmp_path / "run"),
                     paradigm="collective_refinement", max_turns=1, limit=8, cache="off")
    assert (again.outcome.finished, again.outcome.skipped) == (0, 8)  # the same folder resumes


def test_evaluate_prints_the_table_when_asked_and_keyword_options_win_over_the_config_file(sim, tmp_path):
    config = tmp_path / "run.yaml"
    config.write_text("tasks: arith_yesno\ndecider: counting\nparadigm: collective_refinement\n"
                      "max_turns: 1\nlimit: 6\ncache: 'off'\n")
    out = io.StringIO()
    result = evaluate(config=config, limit=4, base_url=sim.base_url, output_path=tmp_path / "run", out=out)
    records = _records(result.folder)
    assert len(records) == 4 and {r["unit"]["task"] for r in records} == {"arith_yesno"}
    configs = json.loads((result.folder / "run.json").read_text())["configurations"]
    assert [(c["paradigm"], c["decider"]) for c in configs.values()] == [("collective_refinement", "counting")]
    printed = out.getvalue().splitlines()
    assert printed[0].startswith("| configuration | task |")
    assert printed[-1] == f"4 units run, 0 already done, 0 failed; results in {tmp_path / 'run'}"


@pytest.mark.parametrize("options, message", [
    ({"agents": "three"}, "agents must be an integer, got 'three'"),
    ({"max_turn": 2}, "unknown option max_turn"),
    ({"decider": "unanimty"}, "unknown decider 'unanimty'"),
    ({"tasks": None}, "no tasks given"),
])
def test_evaluate_refuses_bad_options_with_one_line_and_writes_nothing(sim, tmp_path, options, message):
    given = {"tasks": "arith_mc", "base_url": sim.base_url, "output_path": tmp_path / "run", **options}
    with pytest.raises(UsageError, match=message) as refused:
        evaluate(**given)
    assert "\n" not in str(refused.value)
    assert not (tmp_path / "run").exists()
