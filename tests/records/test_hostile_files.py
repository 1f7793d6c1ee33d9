"""Hostile and careless input files: dataset rows, config files, run folders (issue 25, items 2, 8,
9 and 10). Each is one line on standard error and exit status 2, never a traceback, and never a
run that cannot score."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from helpers import madeval_in_process
from madeval.core.options import shown


def madeval(*args: str, cwd) -> subprocess.CompletedProcess:
    return madeval_in_process(*args, cwd=cwd)


def madeval_in_a_process(*args: str, cwd, timeout: float) -> subprocess.CompletedProcess:
    """``madeval ARGS`` in a process of its own, killed after ``timeout`` seconds: for input that
    once took minutes and gigabytes (a regression must fail the test, not take its process down)."""
    return subprocess.run([sys.executable, "-m", "madeval", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def one_line_error(result: subprocess.CompletedProcess) -> str:
    assert result.returncode == 2, (result.returncode, result.stderr[-2000:])
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr[-2000:]
    assert lines[0].startswith("madeval: error: ")
    return lines[0]


def task_with_rows(folder, rows: list[dict], name: str = "rows_mc") -> None:
    """A choice task in ``folder`` whose generator gives ``rows`` (options in ``opts``, gold in ``gold``)."""
    folder.mkdir(exist_ok=True)
    (folder / "rows.py").write_text(f"ROWS = {rows!r}\n\ndef make(size, seed):\n    return [dict(r) for r in ROWS]\n")
    (folder / f"{name}.yaml").write_text(textwrap.dedent(f"""
        task: {name}
        dataset: {{generator: !function rows.make, size: {len(rows)}, seed: 1}}
        doc_to_text: q
        doc_to_choice: opts
        doc_to_target: gold
        answer_type: choice
        answer_extraction: [final_solution]
    """))


def run_task(tmp_path, rows: list[dict]) -> subprocess.CompletedProcess:
    task_with_rows(tmp_path / "tasks", rows)
    # no endpoint is contacted: task data is checked before anything starts
    return madeval("--tasks", "rows_mc", "--include-path", "tasks", "--base-url", "http://127.0.0.1:9/v1",
                   "--output-path", "out", "--cache", "off", cwd=tmp_path)


FOUR = ["w", "x", "y", "z"]


@pytest.mark.parametrize("gold", [-1, 4, "4"])
def test_hostile_integer_choice_target_out_of_range_is_refused(tmp_path, gold):
    """-1 read as Z and 4 as E on a four-option item: an item that can never score."""
    rows = [{"q": "Fine?", "opts": FOUR, "gold": 2}, {"q": "Broken?", "opts": FOUR, "gold": gold}]
    line = one_line_error(run_task(tmp_path, rows))
    assert "task rows_mc: row 1" in line and f"choice target {shown(gold)}" in line and "0-3" in line
    assert not (tmp_path / "out").exists()


def test_hostile_integer_choice_targets_in_range_still_read(tmp_path):
    from madeval.core.plugins import registries
    from madeval.task.definition import task_loader
    from madeval.task.files import task_index

    task_with_rows(tmp_path / "tasks",
                   [{"q": f"Q{i}", "opts": FOUR, "gold": gold} for i, gold in enumerate([0, 3, "1"])])
    built = registries()
    task = task_loader(task_index(built, [str(tmp_path / "tasks")]), built.extractors, built.metrics)("rows_mc")
    assert [item.target for item in task.items] == ["A", "D", "B"]


@pytest.mark.parametrize(("opts", "expected"), [
    ([f"option {i}" for i in range(27)], "27 choices, more than the 26 option letters"),
    ("['a', 'b'", "are not a list literal"),
    ("not a list at all", "are not a list literal"),
    (7, "choices must be a list, got 7"),
])
def test_hostile_malformed_choices_name_task_row_and_column(tmp_path, opts, expected):
    rows = [{"q": "Fine?", "opts": FOUR, "gold": 0}, {"q": "Fine too?", "opts": FOUR, "gold": 1},
            {"q": "Broken?", "opts": opts, "gold": 0}]
    line = one_line_error(run_task(tmp_path, rows))
    assert "task rows_mc: row 2, column 'opts'" in line and expected in line
    assert not (tmp_path / "out").exists()


# --- leaderboard show on a damaged run folder (item 9) ---


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, generated_tasks):
    """A finished run of 4 units (one configuration, arith_mc) against the simulator."""
    from helpers import run_quietly, settings_for
    from madeval.simulator import simulate

    tmp = tmp_path_factory.mktemp("finished")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MADEVAL_LOAD_PLUGINS", "")
        with simulate(tasks=generated_tasks.values(), accuracy=0.6) as sim:
            result, _ = run_quietly(settings_for(sim.base_url, tmp, limit=4, cache="off"))
    return result.folder


def copy_of(folder, tmp_path):
    import shutil

    return shutil.copytree(folder, tmp_path / "copy")


@pytest.mark.parametrize("text", ["{not json", "[1, 2, 3]", '{"configurations": [1]}',
                                  '{"configurations": {"c1": "no label"}}', "\udcff", "[" * 100_000])
def test_hostile_leaderboard_show_on_an_invalid_run_json_is_one_line(finished_run, tmp_path, text):
    folder = copy_of(finished_run, tmp_path)
    (folder / "run.json").write_bytes(text.encode("utf-8", "surrogateescape"))
    line = one_line_error(madeval("leaderboard", "show", str(folder), cwd=tmp_path))
    assert "run.json" in line and ("not valid JSON" in line or "not a madeval run description" in line)


def test_hostile_leaderboard_show_skips_and_counts_records_missing_fields(finished_run, tmp_path):
    folder = copy_of(finished_run, tmp_path)
    records = folder / "records.jsonl"
    lines = records.read_text().splitlines(keepends=True)
    first = json.loads(lines[0])
    bare = json.dumps({"unit": {"key": "k1"}}) + "\n"  # a unit key and nothing else
    no_metrics = json.dumps({k: v for k, v in json.loads(lines[1]).items() if k != "metrics"}) + "\n"
    text_turns = json.dumps({**first, "unit": {**first["unit"], "key": "k2"}, "turns": "three"}) + "\n"
    records.write_text(bare + no_metrics + "".join(lines[2:]) + text_turns)
    result = madeval("leaderboard", "show", str(folder), cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    board = json.loads((folder / "leaderboard.json").read_text())
    assert board["records_read"]["broken_lines"] == 3
    assert board["records_read"]["broken_at"] == ["records.jsonl:1", "records.jsonl:2", "records.jsonl:5"]
    assert board["rows"][0]["units"] == 2  # the two whole records left
    assert "3 broken lines skipped" in result.stdout


# --- a YAML alias bomb in --config (item 10) ---


def alias_bomb(levels: int = 9) -> str:
    """The "billion laughs" under a known key (so no unknown-key check stops it first): each level a
    list of nine aliases of the one before, 9**9 leaves."""
    lines = ["decider_args:", '  a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, levels):
        lines.append(f"  a{level}: &a{level} [{','.join([f'*a{level - 1}'] * 9)}]")
    return "\n".join(lines) + "\n"


def test_hostile_yaml_alias_bomb_in_config_fails_fast(tmp_path):
    bomb = alias_bomb()
    assert len(bomb.encode()) <= 600  # the 528-byte file of the issue, give or take the key names
    (tmp_path / "bomb.yaml").write_text(bomb)
    # refused while reading (before, the process still ran after 60 s, at 0.5-2 GB)
    result = madeval_in_a_process("--config", "bomb.yaml", "--tasks", "arith_mc", "--output-path", "out",
                                  cwd=tmp_path, timeout=60)
    line = one_line_error(result)
    assert "bomb.yaml" in line and "expands to more than 100000 values" in line


def test_hostile_yaml_aliases_that_stay_small_are_read(tmp_path):
    from madeval.settings.config import read_config_file

    (tmp_path / "ok.yaml").write_text(textwrap.dedent("""
        common: &base {agents: 2, max_turns: 2}
        runs:
          - *base
          - {<<: *base, decider: unanimity}
    """))
    read = read_config_file(tmp_path / "ok.yaml")
    assert read["runs"] == [{"agents": 2, "max_turns": 2}, {"agents": 2, "max_turns": 2, "decider": "unanimity"}]


def test_hostile_recursive_yaml_alias_is_refused(tmp_path):
    from madeval.errors import UsageError
    from madeval.settings.config import read_config_file

    (tmp_path / "loop.yaml").write_text("decider_args: &loop {again: *loop}\n")
    with pytest.raises(UsageError, match="loop.yaml line 1: holds a recursive alias"):
        read_config_file(tmp_path / "loop.yaml")


class Leaf:
    """A value JSON cannot encode: rendering it calls ``str``, which is counted."""

    rendered = 0

    def __str__(self) -> str:
        Leaf.rendered += 1
        return "leaf"


def test_hostile_error_messages_render_only_the_start_of_a_huge_value():
    from madeval.core.options import component_options

    huge = [[Leaf()] * 1000] * 1000  # a million leaves, as an alias bomb shares them
    Leaf.rendered = 0
    with pytest.raises(ValueError) as raised:
        component_options(huge)
    message = str(raised.value)
    assert message.startswith("must be a mapping of options (key: value), got [[\"leaf\", \"leaf\"")
    assert message.endswith("…") and len(message) < 200
    assert Leaf.rendered < 100  # only what is shown was rendered (serialising it all: 10**6)
    assert shown({"a": [1, 2]}) == '{"a": [1, 2]}'  # what fits is shown whole, as JSON
    assert shown("y" * 500) == repr("y" * 60) + "…"
