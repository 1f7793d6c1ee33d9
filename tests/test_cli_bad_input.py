"""Bad input: one clear line on standard error, exit status 2, and no output folder."""

from __future__ import annotations

import subprocess
import sys

import pytest


def madeval(*args: str, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "madeval", *args], cwd=cwd, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--tasks", "arith_mc", "--decider", "unanimty"], "did you mean unanimity"),
        (["--tasks", "arith_mx"], "unknown task 'arith_mx'; did you mean arith_mc"),
        (["--tasks", "arith_mc", "--paradigm", "memroy"], "unknown paradigm 'memroy'; did you mean memory"),
        (["--tasks", "arith_mc", "--agents", "0"], "agents must be at least 1"),
        (["--tasks", "arith_mc", "--max-turns", "zero"], "'zero' is not a valid integer"),
        (["--tasks", "arith_mc", "--decider-args", "after_turns"], "expected key=value"),
        (["--tasks", "arith_mc", "--decider", "counting", "--decider-args", "rounds=2"], "has no option rounds"),
        (["--tasks", "arith_mc", "--paradigm", "collective_refinement"], "counts agreement"),
        (["--tasks", "arith_mc", "--temperature", "3"], "temperature must be between 0 and 2"),
        (["--tasks", "arith_mc", "--base-url", "http://127.0.0.1:9/v1"], "cannot reach endpoint"),
        (["--config", "missing.yaml", "--tasks", "arith_mc"], "cannot read config missing.yaml"),
        (["--tasks", "arith_mc", "--bogus-flag"], "No such option"),
    ],
)
def test_bad_input_is_one_line_and_status_2(tmp_path, args, expected):
    result = madeval(*args, "--output-path", "out", "--cache", "off", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("madeval: error: ")
    assert expected in lines[0]
    assert not (tmp_path / "out").exists()
    assert result.stdout == ""


def test_malformed_config_yaml_names_the_line(tmp_path):
    (tmp_path / "bad.yaml").write_text("tasks: arith_mc\ndecider: [unclosed\n")
    result = madeval("--config", "bad.yaml", "--output-path", "out", cwd=tmp_path)
    assert result.returncode == 2
    assert "malformed YAML in bad.yaml" in result.stderr and "line" in result.stderr
    assert not (tmp_path / "out").exists()


def test_malformed_task_yaml_in_include_path(tmp_path):
    folder = tmp_path / "mytasks"
    folder.mkdir()
    (folder / "broken.yaml").write_text("task: broken\ninstruction: 'unterminated\n")
    result = madeval("--tasks", "broken", "--include-path", str(folder), "--output-path", "out", cwd=tmp_path)
    assert result.returncode == 2
    assert "malformed YAML" in result.stderr and "broken.yaml" in result.stderr
    assert not (tmp_path / "out").exists()
