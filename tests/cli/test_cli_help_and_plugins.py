"""What a new user reads first (issue 24, item 7): ``madeval plugins`` as a table of components
with their options (``--json`` for machines, ``NAME`` for one in full), ``--help`` naming the
environment variables and pointing to ``madeval run --help`` without reStructuredText marks, texts
that cite papers by name, and ``madeval.load_task`` for a notebook."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

import madeval
from helpers import madeval_in_process

ROOT = Path(__file__).resolve().parents[2]
VARIABLES = ("MADEVAL_DATA_DIR", "HF_HUB_OFFLINE", "MADEVAL_API_KEY", "HF_TOKEN")


def madeval_cli(*args: str) -> subprocess.CompletedProcess:
    return madeval_in_process(*args)


def test_plugins_prints_a_table_of_components_with_their_options():
    done = madeval_cli("plugins")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert re.split(r"\s{2,}", lines[0]) == ["kind", "name", "package", "what it does", "options"]
    rows = {tuple(re.split(r"\s{2,}", line)[:3]): line for line in lines[2:] if line.count("  ") >= 3}
    # every registered component is a row, with the package it comes from
    built = madeval.registries()
    for kind in ("persona", "responder", "paradigm", "decider", "metric", "extractor", "preset"):
        for entry in built.registry(kind).entries.values():
            assert any(key[:2] == (kind, entry.name) for key in rows), (kind, entry.name)
    majority = next(line for key, line in rows.items() if key[:2] == ("decider", "majority_consensus"))
    assert " madeval " in majority
    # its options, typed, with defaults, as its factory declares them
    import inspect

    factory = built.deciders.resolve("majority_consensus").factory
    for name, parameter in inspect.signature(factory).parameters.items():
        if name != "self" and parameter.default is not inspect.Parameter.empty:
            assert f"{name}: {parameter.annotation} = {parameter.default!r}" in majority
    freemad = next((line for key, line in rows.items() if key[:2] == ("decider", "freemad")), None)
    if freemad is not None:  # the plugin package, when installed, names its own package
        assert "madeval-freemad" in freemad
    assert len(done.stdout) < 60_000 and not done.stdout.lstrip().startswith("[")


def test_plugins_json_is_for_machines_and_name_shows_one_component_in_full():
    listed = json.loads(madeval_cli("plugins", "--json").stdout)
    assert {p["name"] for p in listed} >= {"madeval.builtins.consensus", "madeval.builtins.voting"}
    one = madeval_cli("plugins", "ranked_voting")
    assert one.returncode == 0, one.stderr
    assert one.stdout.startswith("decider ranked_voting") and "Options" in one.stdout
    doc = madeval.registries().deciders.resolve("ranked_voting").factory.__doc__.strip().splitlines()[0]
    assert doc.strip() in one.stdout
    details = json.loads(madeval_cli("plugins", "ranked_voting", "--json").stdout)
    assert details[0]["kind"] == "decider" and details[0]["options"]
    wrong = madeval_cli("plugins", "ranked_votin")
    assert wrong.returncode == 2 and wrong.stderr.count("\n") == 1
    assert wrong.stderr.startswith("madeval: error: no component named 'ranked_votin'; did you mean ranked_voting")


@pytest.mark.parametrize("command", [(), ("run",)])
def test_help_names_the_environment_variables(command):
    done = madeval_cli(*command, "--help")
    assert done.returncode == 0
    for variable in VARIABLES:
        assert variable in done.stdout, variable


def test_top_level_help_points_to_run_help_and_has_no_rst_marks():
    text = madeval_cli("--help").stdout
    assert "madeval run --help" in text and "``" not in text and ":func:" not in text


def test_readme_and_plugin_texts_cite_papers_by_name():
    texts = [ROOT / "README.md", *(ROOT / "plugins").glob("*/README.md")]
    texts += [p for p in (ROOT / "madeval").rglob("*.py")]
    texts += [p for p in (ROOT / "plugins").glob("*/madeval_*/*.py")] + list((ROOT / "tasks").rglob("*.yaml"))
    for path in texts:
        found = re.findall(r"[Ss]eed[ -]?00\d|issue \d+", path.read_text(encoding="utf-8"))
        assert not found, (path, found)


def test_load_task_gives_a_notebook_the_items_prompt_and_scorer():
    assert "load_task" in madeval.__all__
    task = madeval.load_task("arith_mc")
    item = task.items[0]
    letter = "ABCDEFGHIJ"[item.choices.index(item.target)] if item.target in item.choices else item.target
    assert task.score(task.extract(f"The answer is ({letter})", item), item) == {"accuracy": 1.0}
    wrong = next(line for line in "ABCD"[: len(item.choices)] if line != letter)
    assert task.score(task.extract(f"The answer is ({wrong})", item), item) == {"accuracy": 0.0}
    assert item.input in task.prompt(item).input
    with pytest.raises(madeval.UsageError, match="'generated' stands for 2 tasks"):
        madeval.load_task("generated")
    with pytest.raises(madeval.UsageError, match="did you mean arith_mc"):
        madeval.load_task("arith_mcc")
