"""``madeval tasks`` (listing with row counts) and ``madeval tasks --validate`` on folders of
task files made here, plus an unknown task key at run start (one line, exit status 2)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from click.testing import CliRunner

from madeval.cli.tasks_cmd import _spread, tasks

ROWS_PY = '''
def make(size, seed):
    answers = ["yes", "no"]
    return [{"question": f"Is {i} even?", "answer": answers[i % 2], "options": ["1", "2", "3"], "gold": i % 3}
            for i in range(size)]


def make_with_a_bad_last_row(size, seed):
    rows = make(size, seed)
    rows[-1]["answer"] = "maybe"  # no reply can state this as yes or no
    return rows
'''


def write(folder, name, text):
    (folder / name).write_text(textwrap.dedent(text))


#: The keys of a yes/no task on the rows' ``question`` and ``answer`` columns.
YES_NO = {"doc_to_text": "question", "doc_to_target": "answer", "answer_type": "yes_no",
          "answer_extraction": "[yes_no]"}


def write_task(folder, name, task, dataset, **keys):
    """Write the task file ``name``: task ``task`` over ``dataset`` (YAML text), a yes/no task (:data:`YES_NO`)
    but for ``keys``, which override or add keys (a key given as None is left out)."""
    fields = {"task": task, "dataset": dataset, **YES_NO, **keys}
    write(folder, name, "".join(f"{key}: {value}\n" for key, value in fields.items() if value is not None))


def write_typo_task(folder):
    """A task file with the misspelt key ``metrc_list``."""
    write_task(folder, "typo.yaml", "typo_task", "{generator: !function rows.make, size: 3, seed: 0}",
               answer_extraction=None, metrc_list="[{metric: accuracy}]")


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """Task files: a good generated task, a mirror task, a declared-size task without data."""
    tasks_dir = tmp_path / "tasks"
    tasks_dir.mkdir()
    write(tasks_dir, "rows.py", ROWS_PY)
    write_task(tasks_dir, "good.yaml", "good_mc", "{generator: !function rows.make, size: 7, seed: 0}",
               doc_to_choice="options", doc_to_target="gold", answer_type="choice",
               answer_extraction="[final_solution]")
    write_task(tasks_dir, "mirrored.yaml", "from_file", "{path: someone/qa, split: test, mirror: qa/test.jsonl}")
    write_task(tasks_dir, "declared.yaml", "gated_one",
               "{path: someone/gated, split: train, mirror: gated/train.jsonl}", metadata="{rows: 42}")
    data = tmp_path / "data"
    (data / "qa").mkdir(parents=True)
    rows = [{"question": f"Q{i}?", "answer": ["yes", "no"][i % 2]} for i in range(9)]
    (data / "qa" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("MADEVAL_DATA_DIR", str(data))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return tasks_dir


def invoke(*args):
    return CliRunner().invoke(tasks, list(args), catch_exceptions=False)


def line_of(output: str, name: str) -> str:
    return next(line for line in output.splitlines() if line.split()[:1] == [name])


def test_tasks_lists_row_counts_and_where_the_data_comes_from(folder):
    result = invoke("--include-path", str(folder))
    assert result.exit_code == 0
    assert line_of(result.output, "good_mc").split() == ["good_mc", "choice", "7", "generated"]  # generator size
    assert line_of(result.output, "from_file").split() == ["from_file", "yes_no", "9", "mirror"]  # mirror rows
    assert line_of(result.output, "gated_one").split() == ["gated_one", "yes_no", "42", "missing"]  # declared
    listed = {row["name"]: row for row in json.loads(invoke("--include-path", str(folder), "--json").output)}
    assert (listed["good_mc"]["rows"], listed["from_file"]["rows"], listed["gated_one"]["rows"]) == (7, 9, 42)
    data = [listed[name]["data"] for name in ("good_mc", "from_file", "gated_one")]
    assert data == ["generated", "mirror", "missing"]
    assert "data_missing" not in listed["good_mc"]


def test_a_task_whose_data_cannot_be_loaded_here_is_marked_with_why(folder, tmp_path):
    """No mirror and the hub not to be used (HF_HUB_OFFLINE): what a run naming it would say, under the
    table; a gated dataset says how to get access; a group with such a task names it."""
    write_task(folder, "locked.yaml", "locked_one",
               "{path: someone/locked, split: train, mirror: locked/train.jsonl, gated: true}")
    write(folder, "both.yaml", "group: both\ntask: [good_mc, locked_one]\n")
    result = invoke("--include-path", str(folder))
    lines = result.output.splitlines()
    # madeval's own tasks have no mirror in this MADEVAL_DATA_DIR either: listed too
    head = next(i for i, line in enumerate(lines) if line.startswith("missing: "))
    assert lines[head] == f"missing: {sum(line.endswith('  missing') for line in lines)} tasks cannot be loaded here:"
    assert set(lines[head + 1:]) >= {
        f"  gated_one: HF_HUB_OFFLINE is set and there is no local mirror: MADEVAL_DATA_DIR is set "
        f"({tmp_path / 'data'}) but has no file gated/train.jsonl",
        "  locked_one: HF_HUB_OFFLINE is set and there is no local mirror: someone/locked is a gated dataset: "
        "accept its terms at https://huggingface.co/datasets/someone/locked while logged in, then set HF_TOKEN "
        f"to an access token of that account; or put a local copy (JSON lines, the hub's columns) at "
        f"{tmp_path / 'data' / 'locked' / 'train.jsonl'}",
    }
    assert line_of(result.output, "both").endswith("good_mc, locked_one  (no data here: locked_one)")
    listed = {row["name"]: row for row in json.loads(invoke("--include-path", str(folder), "--json").output)}
    assert listed["both"]["data_missing"] == ["locked_one"] and "gated dataset" in listed["locked_one"]["data_missing"]


def test_a_reachable_hub_serves_what_has_no_mirror_and_a_gated_dataset_needs_a_token(folder, tmp_path, monkeypatch):
    """The hub answers (a listening loopback port stands for it): a dataset without a mirror is read
    from it, a gated one only with a token (set, or saved in HF_HOME)."""
    import socket

    write_task(folder, "open.yaml", "open_one", "{path: someone/open, split: train}")
    with socket.socket() as hub:
        hub.bind(("127.0.0.1", 0))
        hub.listen()
        monkeypatch.delenv("HF_HUB_OFFLINE")
        monkeypatch.delenv("HF_TOKEN", raising=False)
        monkeypatch.delenv("HF_TOKEN_PATH", raising=False)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{hub.getsockname()[1]}")
        output = invoke("--include-path", str(folder)).output
        assert line_of(output, "open_one").split()[-1] == "hub" and line_of(output, "from_file").split()[-1] == "mirror"
        assert line_of(output, "gated_one").split()[-1] == "hub"  # not declared gated: the hub may serve it
        write_task(folder, "locked.yaml", "locked_one", "{path: someone/locked, split: train, gated: true}")
        output = invoke("--include-path", str(folder)).output
        assert line_of(output, "locked_one").split()[-1] == "missing"
        assert "  locked_one: no token for the hub: someone/locked is a gated dataset" in output
        (tmp_path / "hf").mkdir()
        (tmp_path / "hf" / "token").write_text("hf_x")
        assert line_of(invoke("--include-path", str(folder)).output, "locked_one").split()[-2:] == ["hub,", "gated"]


def test_validate_good_tasks_pass_and_missing_data_is_skipped(folder):
    result = invoke("--include-path", str(folder), "--validate")
    assert line_of(result.output, "good_mc").endswith("  ok")
    assert line_of(result.output, "from_file").endswith("  ok")
    assert "skipped (no data: MADEVAL_DATA_DIR is set" in line_of(result.output, "gated_one")
    assert "has no file gated/train.jsonl" in line_of(result.output, "gated_one")
    assert result.exit_code == 0
    assert invoke("--include-path", str(folder), "--validate", "--strict").exit_code == 1


def test_validate_reports_a_key_typo_with_the_closest_key(folder):
    write_typo_task(folder)
    result = invoke("--include-path", str(folder), "--validate")
    assert result.exit_code == 1
    line = line_of(result.output, "typo_task")
    assert "error: task typo_task: unknown key 'metrc_list'; did you mean metric_list?" in line
    assert line_of(result.output, "good_mc").endswith("  ok")


def test_validate_reports_a_misspelt_column(folder):
    write_task(folder, "typo.yaml", "column_typo", "{generator: !function rows.make, size: 3, seed: 0}",
               doc_to_text="questoin", answer_extraction=None)
    result = invoke("--include-path", str(folder), "--validate")
    assert result.exit_code == 1
    assert ("error: task column_typo: doc_to_text 'questoin' is not a column of the rows; did you mean question?"
            in line_of(result.output, "column_typo"))


def test_validate_checks_items_after_the_first(folder):
    write_task(folder, "late.yaml", "bad_last_row",
               "{generator: !function rows.make_with_a_bad_last_row, size: 7, seed: 0}")
    result = invoke("--include-path", str(folder), "--validate")
    assert result.exit_code == 1
    assert "error: item bad_last_row-6 (#6): the gold answer scores 0.0" in line_of(result.output, "bad_last_row")


def test_validate_checks_that_a_wrong_answer_scores_wrong(folder):
    # one option only: every reply names it, so no answer can be wrong and the task is broken
    write_task(folder, "single.yaml", "one_option", "{generator: !function rows.make, size: 3, seed: 0}",
               doc_to_choice='"{{ options[:1] }}"', doc_to_target='"0"', answer_type="choice",
               answer_extraction="[final_solution]")
    result = invoke("--include-path", str(folder), "--validate")
    assert "error: item one_option-0 (#0): a wrong answer scores 1.0" in line_of(result.output, "one_option")
    assert result.exit_code == 1


def test_validate_spreads_the_checked_items():
    assert _spread(3) == [0, 1, 2]
    assert _spread(9) == [0, 2, 4, 6, 8]
    assert _spread(100) == [0, 25, 50, 74, 99]  # round(49.5) = 50 and round(74.25) = 74


def test_unknown_key_fails_at_run_start_with_one_line(folder, tmp_path):
    write_typo_task(folder)
    # an unused loopback port: the embedded model is never started, and the task check comes first
    result = subprocess.run(
        [sys.executable, "-m", "madeval", "--tasks", "typo_task", "--include-path", str(folder),
         "--base-url", "http://127.0.0.1:9/v1", "--output-path", "out", "--cache", "off"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("madeval: error: task typo_task: unknown key 'metrc_list'; did you mean metric_list?")
    assert not (tmp_path / "out").exists()
