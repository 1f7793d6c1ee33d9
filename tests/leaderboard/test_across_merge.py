"""Leaderboards across runs: ``madeval leaderboard show RUN RUN`` merges finished runs, pairing each two
configurations on the (task, item, repeat) units they share.

Two simulator runs of different configurations on overlapping items (--limit 30 with 2 repeats,
--limit 20 with 3 repeats) share 20 items x 2 repeats; their merged board must test exactly those
units and give the same p-values as one run holding both configurations on those 20 items and 2
repeats. The records of a unit do not depend on the run holding it (seeds come from the unit key).
"""

from __future__ import annotations

import json

import pytest

from helpers import madeval_in_process, run_quietly
from madeval.leaderboard import LeaderboardOptions, build_leaderboard, build_merged_leaderboard
from madeval.records.folder import read_records
from madeval.settings.config import DebateConfig, RunSettings

A = DebateConfig(name="two agents", agents=2, max_turns=2)
B = DebateConfig(name="three agents", agents=3, max_turns=2)


def run_of(sim, folder, configurations, limit, repeats):
    settings = RunSettings(base_url=sim.base_url, configurations=configurations, tasks=["arith_mc"],
                           limit=limit, repeats=repeats, output_path=str(folder))
    result, _ = run_quietly(settings)
    return result.folder


@pytest.fixture(scope="module")
def runs(sim, tmp_path_factory):
    root = tmp_path_factory.mktemp("across")
    return {
        "a": run_of(sim, root / "a", [A], 30, 2),
        "b": run_of(sim, root / "b", [B], 20, 3),
        "both": run_of(sim, root / "both", [A, B], 20, 2),
    }


def units_of(folder):
    return {(r["unit"]["config"], r["unit"]["item"], r["unit"]["repeat"]): r for r in read_records(folder)}


def test_across_merged_board_pairs_the_shared_units_as_one_run_would(runs):
    a_units, b_units = units_of(runs["a"]), units_of(runs["b"])
    assert len(a_units) == 60 and len(b_units) == 60
    shared = {(i, r) for _, i, r in a_units} & {(i, r) for _, i, r in b_units}
    assert len(shared) == 40  # 20 items x repeats 0 and 1

    options = LeaderboardOptions(compare="all")
    merged = build_merged_leaderboard([runs["a"], runs["b"]], options)
    single = build_leaderboard(runs["both"], options)
    assert merged["merged"]["runs"] == {str(runs["a"]): ["two agents"], str(runs["b"]): ["three agents"]}
    assert merged["merged"]["notes"] == []
    (comparison,) = [c for c in merged["comparisons"] if c["scope"] == "task" and c["metric"] == "accuracy"]
    assert comparison["items"] == 20 and comparison["units"] == 40
    (expected,) = [c for c in single["comparisons"] if c["scope"] == "task" and c["metric"] == "accuracy"]
    assert comparison["test"] == expected["test"]
    assert comparison["delta"] == pytest.approx(expected["delta"], abs=1e-12)
    assert comparison["p_value"] == pytest.approx(expected["p_value"], abs=1e-12)
    assert comparison["p_adjusted"] == pytest.approx(expected["p_adjusted"], abs=1e-12)
    # the delta by hand: mean over shared items of (mean over shared repeats of A) - (same of B)
    config_a = next(iter({c for c, _, _ in a_units}))
    config_b = next(iter({c for c, _, _ in b_units}))
    items = {i for i, _ in shared}
    by_hand = sum(
        sum(a_units[(config_a, i, r)]["metrics"]["accuracy"] - b_units[(config_b, i, r)]["metrics"]["accuracy"]
            for r in (0, 1)) / 2 for i in items) / len(items)
    assert {comparison["a"], comparison["b"]} == {config_a, config_b}
    sign = 1 if comparison["a"] == config_a else -1
    assert comparison["delta"] == pytest.approx(sign * by_hand, abs=1e-12)
    # each row still describes its own run: A on 30 items, B on 20
    rows = {r["label"]: r for r in merged["rows"] if r["scope"] == "task" and r["metric"] == "accuracy"}
    assert rows["two agents"]["items"] == 30 and rows["three agents"]["items"] == 20


def madeval(*args, cwd):
    return madeval_in_process(*args, cwd=cwd)


def test_across_show_merges_globs_and_refuses_a_configuration_in_two_runs(runs, tmp_path):
    root = runs["a"].parent
    done = madeval("leaderboard", "show", str(runs["a"]), str(root / "[b]"), "-o", str(tmp_path / "merged"),
                   cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Runs merged:" in done.stdout and "| items | units |" not in done.stdout  # the table: --explain
    assert "| items | units |" in (tmp_path / "merged" / "leaderboard.md").read_text()
    assert (tmp_path / "merged" / "leaderboard.html").is_file()
    assert "units" in (tmp_path / "merged" / "comparisons.csv").read_text().splitlines()[0]

    clash = madeval("leaderboard", "show", str(runs["a"]), str(runs["both"]), cwd=tmp_path)
    assert clash.returncode == 2
    assert clash.stderr.strip().count("\n") == 0 and "--merge-same" in clash.stderr
    pooled = madeval("leaderboard", "show", str(runs["a"]), str(runs["both"]), "--merge-same", cwd=tmp_path)
    assert pooled.returncode == 0, pooled.stderr


def test_across_merge_same_refuses_conflicting_records(runs, tmp_path):
    import shutil

    copy = tmp_path / "changed"
    shutil.copytree(runs["a"], copy)
    lines = (copy / "records.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["metrics"]["accuracy"] = 1.0 - record["metrics"]["accuracy"]
    (copy / "records.jsonl").write_text("\n".join([json.dumps(record)] + lines[1:]) + "\n")
    from madeval.errors import UsageError

    with pytest.raises(UsageError, match="different records"):
        build_merged_leaderboard([runs["a"], copy], LeaderboardOptions(merge_same=True))


def positional_copy(folder, target, task):
    """``folder`` as a run written before content ids: each item renamed ``<task>-<row>``."""
    import shutil

    shutil.copytree(folder, target)
    records = [json.loads(line) for line in (target / "records.jsonl").read_text().splitlines()]
    rows = {item.id: index for index, item in enumerate(task.items)}
    for record in records:
        unit = record["unit"]
        unit["item"] = f"{unit['task']}-{rows[unit['item']]}"
        unit["key"] = json.dumps([unit["config"], unit["task"], unit["item"], unit["repeat"]])
    (target / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return target


def test_across_old_positional_runs_pair_with_each_other_and_a_mixed_merge_says_ids_differ(
        runs, tmp_path, generated_tasks):
    old_a = positional_copy(runs["a"], tmp_path / "old-a", generated_tasks["arith_mc"])
    old_b = positional_copy(runs["b"], tmp_path / "old-b", generated_tasks["arith_mc"])
    old = build_merged_leaderboard([old_a, old_b], LeaderboardOptions())
    assert old["merged"]["notes"] == []
    (comparison,) = [c for c in old["comparisons"] if c["metric"] == "accuracy"]
    assert comparison["items"] == 20 and comparison["units"] == 40  # row positions pair as they always did

    mixed = build_merged_leaderboard([old_a, runs["b"]], LeaderboardOptions())
    (note,) = mixed["merged"]["notes"]
    assert "task arith_mc" in note and str(old_a) in note and "ids differ" in note
    assert [c for c in mixed["comparisons"] if c["metric"] == "accuracy"] == []
