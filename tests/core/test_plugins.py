"""The plugin system: built-ins, hook documentation, names, and a real third-party package."""

from __future__ import annotations

import importlib.metadata
import inspect
import json
import os
import subprocess
import sys
import textwrap

import pytest

from madeval.core import hookspecs
from madeval.core.plugins import KINDS, plugin_info, pm, registries
from madeval.errors import UsageError
from madeval.records.folder import read_records


def test_every_hook_is_documented_and_registered_by_kind():
    specs = [name for name, f in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("register_")]
    assert sorted(specs) == sorted(kind.hook for kind in KINDS)
    for name in specs:
        doc = inspect.getdoc(getattr(hookspecs, name))
        assert doc and len(doc) > 60, f"{name} needs a real docstring"
        assert list(inspect.signature(getattr(hookspecs, name)).parameters) == ["register"]


def test_builtins_are_plugins_of_the_same_manager():
    info = {p["name"]: p for p in plugin_info()}
    assert "madeval.builtins.consensus" in info
    deciders = info["madeval.builtins.consensus"]["components"]["deciders"]
    assert deciders == ["hybrid_consensus", "majority_consensus", "supermajority_consensus", "unanimity_consensus"]
    assert info["madeval.builtins.counting"]["hooks"] == ["register_deciders"]
    assert "task_sources" in info["madeval.builtins.tasks"]["components"]


def test_unknown_name_suggests_the_closest_names():
    with pytest.raises(UsageError, match=r"^unknown decider 'majorty'; did you mean majority"):
        registries().deciders.resolve("majorty")
    assert registries().deciders.resolve("unanimity").name == "unanimity_consensus"


def test_the_registry_names_what_it_builds():
    """A component's name comes from its registration alone: ``create`` gives it the canonical
    registered name, also when it is asked for by an alias, and no registered class (or a class it
    inherits from) declares a name of its own that could drift from the registration."""
    built = registries()
    assert built.deciders.create("unanimity").name == "unanimity_consensus"
    assert built.deciders.create("voting").name == "simple_voting"
    assert built.paradigms.create("cr").name == "collective_refinement"
    assert built.responders.create("chain_of_thought").name == "cot"
    assert built.personas.create("nopersona").name == "none"
    assert built.metrics.create("acc").name == "accuracy"
    for kind in ("persona", "responder", "paradigm", "decider", "metric"):
        for entry in built.registry(kind).entries.values():
            assert isinstance(entry.factory, type), entry.name
            declaring = [c.__qualname__ for c in inspect.getmro(entry.factory) if "name" in vars(c)]
            assert declaring == [], f"{kind} '{entry.name}' is named by {declaring}"


def test_a_name_registered_twice_names_both_plugins():
    class Clash:
        @staticmethod
        def register_deciders(register):
            register("counting", object)

    from madeval import hookimpl

    Clash.register_deciders = hookimpl(Clash.register_deciders)
    pm.register(Clash, name="clash-plugin")
    try:
        with pytest.raises(UsageError,
                           match="registered by both plugin 'madeval.builtins.counting' and plugin 'clash-plugin'"):
            registries()
    finally:
        pm.unregister(name="clash-plugin")
    assert registries().deciders.resolve("counting").plugin == "madeval.builtins.counting"


PLUGIN_SOURCE = '''
"""A throwaway third-party plugin: agent 1 decides alone after the first turn."""
from madeval import hookimpl
from madeval.core.components import Decider
from madeval.core.transcript import Decision


class Dictator(Decider):
    """Agent 1's first solution wins after turn 1."""

    async def after_turn(self, state, llm):
        first = state.transcript.latest_by_agent()[0]
        return Decision(first.solution, True, state.turn, self.name, "dictator")


@hookimpl
def register_deciders(register):
    register("dictator", Dictator)
'''


@pytest.fixture(scope="module")
def installed_plugin(tmp_path_factory):
    """Build and install a plugin package with its own pyproject into a private site folder."""
    root = tmp_path_factory.mktemp("plugin")
    package = root / "madeval-dictator"
    package.mkdir()
    (package / "pyproject.toml").write_text(textwrap.dedent('''
        [build-system]
        requires = ["setuptools>=64"]
        build-backend = "setuptools.build_meta"

        [project]
        name = "madeval-dictator"
        version = "0.0.7"

        [project.entry-points.madeval]
        dictator = "madeval_dictator"
    '''))
    (package / "madeval_dictator.py").write_text(PLUGIN_SOURCE)
    site = root / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
         "--no-build-isolation", "--target", str(site), str(package)],
        check=True, capture_output=True, text=True,
    )
    return site


def cli(site, *args, allow=None, cwd=None):
    # The plugin's site first, then the madeval under test (not another installed copy).
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))}
    env.pop("MADEVAL_LOAD_PLUGINS", None)
    if allow is not None:
        env["MADEVAL_LOAD_PLUGINS"] = allow
    return subprocess.run([sys.executable, "-m", "madeval", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=300)


def test_third_party_plugin_is_listed_and_decides_from_the_cli(installed_plugin, sim, tmp_path):
    listed = json.loads(cli(installed_plugin, "plugins", "--json").stdout)
    plugin = next(p for p in listed if p["name"] == "dictator")
    assert plugin["package"] == "madeval-dictator" and plugin["version"] == "0.0.7"
    assert plugin["hooks"] == ["register_deciders"] and plugin["components"] == {"deciders": ["dictator"]}

    result = cli(installed_plugin, "--tasks", "arith_mc", "--limit", "5", "--decider", "dictator",
                 "--base-url", sim.base_url, "--output-path", "out", "--cache", "off", "--no-progress",
                 cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    records = list(read_records(tmp_path / "out"))
    assert len(records) == 5
    for record in records:
        decision = record["transcript"]["decision"]
        assert decision["decider"] == "dictator" and record["turns"] == 1
        assert decision["answer"] == record["transcript"]["messages"][0]["solution"]


def test_plugins_shows_each_plugins_description(tmp_path):
    """An installed package's description is its Summary metadata; a built-in plugin's is the
    first paragraph of its module docstring, on one line."""
    listing = cli(tmp_path, "plugins", "--json")
    assert listing.returncode == 0, listing.stderr
    rows = {p["name"]: p for p in json.loads(listing.stdout)}
    for entry_point in ("madc", "freemad", "frameworks"):
        summary = importlib.metadata.metadata(f"madeval-{entry_point}")["Summary"]
        assert summary and rows[entry_point]["description"] == summary
    assert rows["madeval.builtins.voting"]["description"] == (
        "Voting deciders (Voting or Consensus?, Section 3.2 and Appendix C; prompts from the MALLM "
        "paper, Figures 26-29).")
    assert rows["madeval.builtins.counting"]["description"] == (
        "Solution counting: the most frequent extracted answer, with no LLM call.")


def test_third_party_plugin_allow_list(installed_plugin):
    def names(allow):
        return {p["name"] for p in json.loads(cli(installed_plugin, "plugins", "--json", allow=allow).stdout)}

    assert "dictator" not in names("")
    assert "dictator" in names("madeval-dictator")
    assert "dictator" in names("dictator,other")
    assert "dictator" not in names("something-else")
    refused = cli(installed_plugin, "--tasks", "arith_mc", "--decider", "dictator", allow="")
    assert refused.returncode == 2 and "unknown decider 'dictator'" in refused.stderr


def site_with_plugin(site, name: str, version: str, source: str):
    """``site`` as if ``madeval-<name>`` (entry point ``name``, module ``madeval_<name>`` with
    ``source``) were installed in it; put it on PYTHONPATH to use it."""
    info = site / f"madeval_{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: madeval-{name}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[madeval]\n{name} = madeval_{name}\n")
    (site / f"madeval_{name}.py").write_text(source)
    return site


@pytest.fixture(scope="module")
def broken_plugin(tmp_path_factory):
    """A site folder with an installed plugin whose module imports a package that is not there."""
    return site_with_plugin(tmp_path_factory.mktemp("broken-site"), "broken", "0.3",
                            "import a_dependency_that_is_not_installed\n")


def listed_as_failed(site, name: str, version: str, warning: str) -> dict:
    """``madeval plugins`` with ``site``: exit 0, exactly ``warning`` on stderr, and ``name`` listed
    as failed with its package and version next to the loaded built-ins; returns the rows by name."""
    listing = cli(site, "plugins", "--json")
    assert listing.returncode == 0, listing.stderr
    assert listing.stderr.splitlines() == [warning]
    rows = {p["name"]: p for p in json.loads(listing.stdout)}
    assert rows[name]["status"] == "failed" and rows[name]["package"] == f"madeval-{name}"
    assert rows[name]["version"] == version and rows[name]["description"] == ""  # its METADATA has no Summary
    assert rows["madeval.builtins.consensus"]["status"] == "loaded"
    return rows


def test_broken_plugin_is_one_warning_and_listed_as_failed(broken_plugin):
    rows = listed_as_failed(broken_plugin, "broken", "0.3",
                            "madeval: warning: plugin 'broken' (madeval-broken) failed to load and is skipped: "
                            "ModuleNotFoundError: No module named 'a_dependency_that_is_not_installed'")
    assert "a_dependency_that_is_not_installed" in rows["broken"]["error"]
    # Other commands go on without it, with the same one-line warning.
    tasks = cli(broken_plugin, "tasks")
    assert tasks.returncode == 0 and "arith_mc" in tasks.stdout
    assert tasks.stderr.count("\n") == 1 and "plugin 'broken' (madeval-broken) failed to load" in tasks.stderr


@pytest.fixture(scope="module")
def failing_hook_plugin(tmp_path_factory):
    """An installed plugin that registers a persona, then raises in its register_deciders hook."""
    return site_with_plugin(
        tmp_path_factory.mktemp("failing-site"), "failing", "1.2",
        "from madeval import hookimpl\n"
        "from madeval.builtins.personas import NoPersona\n\n"
        "@hookimpl\ndef register_personas(register):\n    register('half_registered', NoPersona)\n\n"
        "@hookimpl\ndef register_deciders(register):\n    raise RuntimeError('no deciders today')\n")


def test_plugin_whose_register_hook_raises_is_one_warning_and_leaves_nothing_behind(failing_hook_plugin):
    rows = listed_as_failed(failing_hook_plugin, "failing", "1.2",
                            "madeval: warning: plugin 'failing' (madeval-failing) failed in register_deciders and "
                            "is skipped: RuntimeError: no deciders today")
    assert not any("half_registered" in str(p["components"]) for p in rows.values())
    run = cli(failing_hook_plugin, "--tasks", "arith_mc", "--persona", "half_registered")
    assert run.returncode == 2 and "unknown persona 'half_registered'" in run.stderr


def test_allow_list_name_matching_no_plugin_is_one_warning(broken_plugin):
    listing = cli(broken_plugin, "plugins", "--json", allow="madeval-brokn")
    assert listing.returncode == 0
    assert listing.stderr.splitlines() == [
        "madeval: warning: MADEVAL_LOAD_PLUGINS names 'madeval-brokn', but no installed plugin has that name"
    ]
    assert "broken" not in {p["name"] for p in json.loads(listing.stdout)}
    # A name that matches (by distribution, spelt either way) gives no such warning.
    allowed = cli(broken_plugin, "plugins", "--json", allow="Madeval_Broken")
    assert "no installed plugin" not in allowed.stderr and "plugin 'broken' (madeval-broken) failed" in allowed.stderr
