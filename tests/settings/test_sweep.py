"""Sweep files: common settings, a grid and runs expand into configurations; bad ones fail early."""

from __future__ import annotations

import subprocess
import sys

import pytest

from madeval.errors import UsageError
from madeval.settings.config import build_settings


def test_grid_combinations_are_named_by_their_values():
    settings = build_settings({
        "name": "my sweep", "tasks": ["arith_mc"], "repeats": 3, "max_turns": 4,
        "common": {"paradigm": "memory"},
        "grid": {"decider": ["majority_consensus", "unanimity_consensus"], "agents": [2, 4]},
        "runs": [{"name": "solo", "decider": "counting", "paradigm": "collective_refinement", "agents": 1}],
        "leaderboard": {"reference": "solo", "correction": "bh"},
    })
    labels = [c.label() for c in settings.configurations]
    assert labels == ["majority_consensus agents=2", "majority_consensus agents=4",
                      "unanimity_consensus agents=2", "unanimity_consensus agents=4", "solo"]
    assert all(c.max_turns == 4 and c.paradigm in ("memory", "collective_refinement") for c in settings.configurations)
    assert [c.agents for c in settings.configurations] == [2, 4, 2, 4, 1]
    assert settings.repeats == 3 and settings.leaderboard["title"] == "my sweep"
    assert settings.leaderboard["correction"] == "bh" and "leaderboard" not in settings.public()


def test_a_preset_run_keeps_its_own_options_over_common():
    settings = build_settings({
        "tasks": ["arith_mc"], "common": {"paradigm": "memory", "agents": 3, "max_turns": 5},
        "grid": {"decider": ["majority_consensus"]}, "runs": [{"preset": "baseline_cot"}],
    })
    baseline = settings.configurations[1]
    assert (baseline.label(), baseline.agents, baseline.max_turns,
            baseline.decider) == ("baseline_cot", 1, 1, "counting")
    assert settings.configurations[0].agents == 3


@pytest.mark.parametrize(("options", "message"), [
    ({"grid": {"decider": ["majority"]}, "decider": "unanimity"}, "both set for every configuration and varied"),
    ({"grid": {"decider": []}}, "non-empty list"),
    ({"common": {"tasks": ["arith_mc"]}}, "cannot vary per configuration"),
    ({"runs": [{"decider": "counting"}, {"decider": "counting"}]}, "both labelled"),
    # An alias is the component it names: the same configuration twice.
    ({"runs": [{"decider": "unanimity"}, {"decider": "unanimity_consensus"}]},
     "both labelled none/simple/memory/unanimity_consensus/3a"),
    ({"runs": {"decider": "counting"}}, "runs must be a list"),
    ({"leaderboard": {"correction": "bonferroni"}}, "correction must be one of"),
    ({"leaderboard": {"refrence": "x"}}, "unknown leaderboard option refrence"),
])
def test_bad_sweeps_are_usage_errors(options, message):
    with pytest.raises(UsageError, match=message):
        build_settings({"tasks": ["arith_mc"], **options})


def test_bad_sweep_file_is_one_line_and_status_2(tmp_path):
    (tmp_path / "sweep.yaml").write_text("tasks: [arith_mc]\ngrid:\n  decider: [majority, unanimty]\n")
    done = subprocess.run([sys.executable, "-m", "madeval", "--config", "sweep.yaml", "--output-path", "out"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "did you mean unanimity" in done.stderr
    assert not (tmp_path / "out").exists()
