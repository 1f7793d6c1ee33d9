"""Checks that come before the work, and advice that fits the error (issue 24, item 3)."""

from __future__ import annotations

import pytest

from madeval import UsageError, evaluate
from madeval.cli.main import main


def cli(capsys, *args: str) -> tuple[int, str, str]:
    """Run ``madeval ARGS`` in-process: (exit status, stdout, stderr)."""
    try:
        main([*args, "--no-progress"])
        code = 0
    except SystemExit as ended:
        code = ended.code
    said = capsys.readouterr()
    return code, said.out, said.err


def test_a_leaderboard_option_is_checked_before_the_first_call(sim, tmp_path, capsys):
    config = tmp_path / "run.yaml"
    config.write_text("tasks: arith_mc\nlimit: 3\nleaderboard: {reference: nosuch}\n")
    before = sim.server.stats.requests
    code, _, err = cli(capsys, "--config", str(config), "--base-url", sim.base_url, "-o", str(tmp_path / "out"))
    assert code == 2
    assert err.strip().splitlines() == [
        "madeval: error: leaderboard reference 'nosuch' names no configuration of this run "
        "(configurations: none/simple/memory/majority_consensus/3a)"]
    assert sim.server.stats.requests == before and not (tmp_path / "out").exists()  # before: every debate ran


def test_a_base_url_without_v1_is_named_and_never_advised_a_rerun(sim, tmp_path, capsys):
    bare = sim.base_url.removesuffix("/v1")
    code, _, err = cli(capsys, "--tasks", "arith_mc", "--limit", "2", "--base-url", bare, "-o", str(tmp_path / "a"))
    assert code == 2
    assert err.strip().splitlines()[-1] == (
        f"madeval: error: endpoint 'default' serves no listed models; choose one with --model; "
        f"the URL probably lacks /v1 (try --base-url {bare}/v1)")

    code, out, err = cli(capsys, "--tasks", "arith_mc", "--limit", "2", "--base-url", bare, "--model", "simulator",
                         "-o", str(tmp_path / "b"))
    assert code == 1 and "0 units run, 0 already done, 2 failed" in out
    last = err.strip().splitlines()[-1]
    assert "a re-run will not fix them" in last and "HTTP 404" in last and "lacks /v1" in last, last
    assert "run the same command again" not in err


def test_retries_that_ran_out_are_still_advised_a_rerun():
    from madeval.cli.run_cmd import failure_advice
    from madeval.run.scheduler import RunOutcome

    assert failure_advice(RunOutcome(3, 0, 2, 1.0)).endswith("run the same command again to retry them")
    mixed = failure_advice(RunOutcome(3, 0, 2, 1.0, unfixable=1, first_unfixable="default: HTTP 400: no"))
    assert mixed.endswith("running the same command again retries 1 of them, but a re-run will not fix "
                          "1 of them: default: HTTP 400: no")


def test_a_sample_larger_than_the_task_says_it_uses_every_item(sim, tmp_path, capsys):
    code, _, err = cli(capsys, "--tasks", "arith_mc", "--sample", "2000", "--limit", "2", "--base-url", sim.base_url,
                       "-o", str(tmp_path / "out"))
    assert code == 0
    assert "madeval: --sample 2000 is more than the 1,000 items of task arith_mc: using all 1,000" in err


@pytest.mark.parametrize("part", ["common: {decidr: unanimity}", "grid: {decidr: [unanimity, simple_voting]}",
                                  "runs: [{decidr: unanimity}]"])
def test_a_misspelt_key_in_a_sweep_gets_did_you_mean(tmp_path, part):
    config = tmp_path / "sweep.yaml"
    config.write_text(f"tasks: arith_mc\n{part}\n")
    with pytest.raises(UsageError, match=r"unknown option decidr; did you mean decider\?$"):
        evaluate(config=config, base_url="http://127.0.0.1:9/v1")


def test_a_run_setting_in_a_sweep_part_is_still_explained_as_one(tmp_path):
    config = tmp_path / "sweep.yaml"
    config.write_text("tasks: arith_mc\ncommon: {repeats: 2}\n")
    with pytest.raises(UsageError, match="repeats cannot vary per configuration"):
        evaluate(config=config, base_url="http://127.0.0.1:9/v1")


def test_a_misspelt_keyword_of_evaluate_gets_did_you_mean():
    with pytest.raises(UsageError, match=r"unknown option deciderr; did you mean decider\?$"):
        evaluate("arith_mc", deciderr="unanimity", base_url="http://127.0.0.1:9/v1")
