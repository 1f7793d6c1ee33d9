"""End-to-end runs against the simulator: the CLI as written, the cache, repeats, heterogeneity."""

from __future__ import annotations

import json

from helpers import madeval_in_process, run_quietly, settings_for
from madeval.leaderboard.table import TIMING_KEYS
from madeval.records.folder import read_records
from madeval.simulator import AgentProfile, simulate


def test_cli_runs_two_tasks_with_unanimity_exactly_as_written(sim, tmp_path):
    done = madeval_in_process("--tasks", "arith_mc,arith_yesno", "--decider", "unanimity", "--limit", "5",
                              "--base-url", sim.base_url, "--output-path", "out", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    table = done.stdout.splitlines()
    assert table[0].startswith("| configuration | task |")
    assert any("unanimity_consensus" in line and "arith_mc" in line for line in table), done.stdout
    assert any("unanimity_consensus" in line and "arith_yesno" in line for line in table)
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    assert [c["decider"] for c in run["configurations"].values()] == ["unanimity_consensus"]
    assert set(run["tasks"]) == {"arith_mc", "arith_yesno"} and len(run["tasks"]["arith_mc"]["items"]) == 5
    assert "openai" in run["versions"] and run["versions"]["madeval"]
    assert (tmp_path / "out" / "leaderboard.md").read_text().startswith("| configuration")


def test_identical_rerun_makes_no_calls(sim, tmp_path):
    cache = tmp_path / "cache.sqlite"
    first, _ = run_quietly(settings_for(sim.base_url, tmp_path, limit=6, repeats=2, cache=str(cache),
                                        output_path=str(tmp_path / "a")))
    before = sim.server.stats.requests
    second, _ = run_quietly(settings_for(sim.base_url, tmp_path, limit=6, repeats=2, cache=str(cache),
                                         output_path=str(tmp_path / "b")))
    assert sim.server.stats.requests == before + 1  # the probe call that reads the model's fingerprint
    calls = [c for r in read_records(second.folder) for c in r["transcript"]["calls"]]
    assert calls and all(c["cached"] for c in calls)
    strip = lambda rows: [{k: v for k, v in r.items() if k not in TIMING_KEYS} for r in rows]  # noqa: E731
    assert strip(first.rows) == strip(second.rows)


def test_repeats_use_distinct_seeds_and_are_averaged_per_item(sim, tmp_path):
    result, _ = run_quietly(settings_for(sim.base_url, tmp_path, limit=40, repeats=3, cache="off",
                                         paradigm="collective_refinement", decider="counting", max_turns=1))
    records = list(read_records(result.folder))
    assert sorted({r["unit"]["repeat"] for r in records}) == [0, 1, 2]
    by_item = {}
    for r in records:
        by_item.setdefault(r["unit"]["item"], []).append(r)
    # Repeats of one item give different answers somewhere (distinct seeds), and the score is the
    # mean over items of the per-item mean over repeats.
    assert any(len({x["prediction"] for x in group}) > 1 for group in by_item.values())
    per_item = [sum(x["metrics"]["accuracy"] for x in group) / 3 for group in by_item.values()]
    assert abs(result.rows[0]["score"] - sum(per_item) / len(per_item)) < 1e-12
    assert result.rows[0]["items"] == 40 and result.rows[0]["units"] == 120


def test_heterogeneous_agents_use_their_own_models_and_endpoints(generated_tasks, tmp_path):
    profiles = {"oracle": AgentProfile(accuracy=1.0), "fool": AgentProfile(accuracy=0.0)}
    with simulate(tasks=generated_tasks.values(), profiles=profiles) as one, simulate(
        tasks=generated_tasks.values(), profiles=profiles
    ) as two:
        settings = settings_for(
            one.base_url, tmp_path, limit=20, cache="off", paradigm="collective_refinement",
            decider="counting", max_turns=1, agent_models=["oracle", "oracle@second", "fool@second"],
            endpoints={"second": two.base_url},
        )
        result, _ = run_quietly(settings)
        assert one.server.stats.requests == 20 and two.server.stats.requests == 40
    records = list(read_records(result.folder))
    assert result.rows[0]["score"] == 1.0
    for record in records:
        answers = [m["answer"] for m in record["transcript"]["messages"]]
        assert answers[0] == answers[1] == record["target"] != answers[2]
        assert [a["endpoint"] for a in record["transcript"]["agents"]] == ["default", "second", "second"]
