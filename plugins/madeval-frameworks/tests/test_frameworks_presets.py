"""Every preset of the three plugin packages end to end on the simulator, as one sweep with a leaderboard."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from madeval.errors import UsageError
from madeval.evaluation import run
from madeval.records.folder import read_records
from madeval.settings.config import build_settings, debate_config, read_config_file
from madeval.simulator import simulate
from madeval.testing import registered
from madeval_frameworks.plugin import PRESETS

PLUGINS = Path(__file__).resolve().parents[2]
SWEEP = PLUGINS.parent / "leaderboards" / "presets.yaml"

FRAMEWORKS = list(PRESETS)
ALL = ["som", "madc", "freemad_n", "freemad_c", *[p for p in FRAMEWORKS if p != "som"]]


@pytest.fixture
def freemad():
    """madeval-freemad registered too (its presets join the sweep)."""
    try:
        import madeval_freemad.plugin as module
    except ImportError:  # pragma: no cover
        sys.path.insert(0, str(PLUGINS / "madeval-freemad"))
        import madeval_freemad.plugin as module
    with registered(module):
        yield


def test_frameworks_presets_bundle_components():
    layouts = {name: debate_config({"preset": name}) for name in FRAMEWORKS}
    assert {n: (c.responder, c.paradigm, c.decider, c.agents, c.neutral_agents,
                c.max_turns) for n, c in layouts.items()} == {
        "som": ("som", "som", "counting", 3, 0, 3),
        "multi_persona": ("multi_persona", "multi_persona", "moderator", 3, 1, 3),
        "eot": ("eot", "eot", "eot_consistency", 3, 0, 6),
        "eot_similarity": ("eot", "eot", "eot_consistency", 3, 0, 3),
        "chateval": ("chateval", "chateval", "counting", 3, 0, 2),
        "chateval_simultaneous": ("chateval", "chateval", "counting", 3, 0, 2),
        "chateval_summarizer": ("chateval", "chateval", "counting", 4, 1, 2),
        "agentverse": ("agentverse", "agentverse", "agentverse_evaluator", 4, 2, 3),
        "reconcile": ("reconcile", "collective_refinement", "reconcile", 3, 0, 3),
    }
    assert debate_config({"preset": "som", "max_turns": 2}).max_turns == 2  # explicit options win


def _package_presets() -> set[str]:
    """The presets the three plugin packages register."""
    import madeval_freemad.plugin as freemad_plugin
    from madeval_madc import plugin as madc_plugin

    names: set[str] = set(PRESETS)
    for module in (madc_plugin, freemad_plugin):
        module.register_presets(lambda name, factory, **_: names.add(name))
    return names


def test_frameworks_every_preset_runs_and_a_sweep_makes_a_leaderboard(freemad, generated_tasks, tmp_path):
    """leaderboards/presets.yaml names every preset of the three packages; run with limit 12 on the simulator."""
    options = read_config_file(SWEEP)
    assert [run["preset"] for run in options["runs"]] == ALL and set(ALL) == _package_presets()
    assert options["tasks"] == ["arith_mc"]
    with simulate(tasks=generated_tasks.values(), accuracy=0.6, conformity=0.6, persuasion=0.3) as sim:
        settings = build_settings({**options, "limit": 12, "cache": "off", "transport": "direct",
                                   "output_path": str(tmp_path / "run"), "base_url": sim.base_url})
        result = run(settings, show_progress=False, out=io.StringIO())
        kinds = dict(sim.agents.stats.kinds)
    assert result.outcome.finished == 12 * len(ALL) and result.outcome.failed == 0
    rows = {r["label"]: r for r in result.rows if r["metric"] == "accuracy"}
    assert sorted(rows) == sorted(ALL)
    assert all(row["items"] == 12 and row["parse_failure_rate"] == 0.0 for row in rows.values())
    board = json.loads((result.folder / "leaderboard.json").read_text())
    assert (result.folder / "leaderboard.md").read_text().count("| arith_mc |") >= len(ALL)
    assert board  # the leaderboard files exist and parse
    assert board["title"] == "MAD frameworks, every plugin preset (arith_mc)"
    assert [r["label"] for r in board["rows"] if r.get("reference")] == ["som"]  # the sweep's reference row
    # Every framework's own prompts reached the simulator.
    for kind in ("som_update", "moderator", "eot_update", "chateval", "summary", "role_assigner", "critic_agree",
                 "evaluator", "reconcile"):
        assert kinds.get(kind, 0) > 0, kind
    records = list(read_records(result.folder))
    by_config = {}
    for record in records:
        by_config.setdefault(record["config_label"], []).append(record)
    assert all(r["transcript"]["decision"]["decider"] == "moderator" for r in by_config["multi_persona"])
    assert all(not r["oracle"] for r in records)


def test_frameworks_bad_layout_fails_at_start_with_one_line():
    with pytest.raises(UsageError) as error:
        from madeval.core.plugins import registries
        from madeval.run.plan import debate_setup

        debate_setup(debate_config({"preset": "agentverse", "neutral_agents": 1}), registries()).validate()
    assert "\n" not in str(error.value) and "needs exactly 2 neutral agent(s) first" in str(error.value)
