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


@pytest.fixture
def folder(tmp_path, monkeypatch):
    """Task files: a good generated task, a mirror task, a declared-size task without data."""
    tasks_dir = tmp_path / "tasks"
    tasks_dir.mkdir()
    write(tasks_dir, "rows.py", ROWS_PY)
    write(tasks_dir, "good.yaml", """
        task: good_mc
        dataset: {generator: !function rows.make, size: 7, seed: 0}
        doc_to_text: question
        doc_to_choice: options
        doc_to_target: gold
        answer_type: choice
        answer_extraction: [final_solution]
    """)
    write(tasks_dir, "mirrored.yaml", """
        task: from_file
        dataset: {path: someone/qa, split: test, mirror: qa/test.jsonl}
        doc_to_text: question
        doc_to_target: answer
        answer_type: yes_no
        answer_extraction: [yes_no]
    """)
    write(tasks_dir, "declared.yaml", """
        task: gated_one
        dataset: {path: someone/gated, split: train, mirror: gated/train.jsonl}
        doc_to_text: question
        doc_to_target: answer
        answer_type: yes_no
        answer_extraction: [yes_no]
        metadata: {rows: 42}
    """)
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


def test_tasks_lists_row_counts(folder):
    result = invoke("--include-path", str(folder))
    assert result.exit_code == 0
    assert line_of(result.output, "good_mc").split() == ["good_mc", "choice", "7"]  # generator size
    assert line_of(result.output, "from_file").split() == ["from_file", "yes_no", "9"]  # mirror rows
    assert line_of(result.output, "gated_one").split() == ["gated_one", "yes_no", "42"]  # declared
    listed = {row["name"]: row for row in json.loads(invoke("--include-path", str(folder), "--json").output)}
    assert (listed["good_mc"]["rows"], listed["from_file"]["rows"], listed["gated_one"]["rows"]) == (7, 9, 42)


def test_validate_good_tasks_pass_and_missing_data_is_skipped(folder):
    result = invoke("--include-path", str(folder), "--validate")
    assert line_of(result.output, "good_mc").endswith("  ok")
    assert line_of(result.output, "from_file").endswith("  ok")
    assert "skipped (no data: MADEVAL_DATA_DIR is set" in line_of(result.output, "gated_one")
    assert "has no file gated/train.jsonl" in line_of(result.output, "gated_one")
    assert result.exit_code == 0
    assert invoke("--include-path", str(folder), "--validate", "--strict").exit_code == 1


def test_validate_reports_a_key_typo_with_the_closest_key(folder):
    write(folder, "typo.yaml", """
        task: typo_task
        dataset: {generator: !function rows.make, size: 3, seed: 0}
        doc_to_text: question
        doc_to_target: answer
        answer_type: yes_no
        metrc_list: [{metric: accuracy}]
    """)
    result = invoke("--include-path", str(folder), "--validate")
    assert result.exit_code == 1
    line = line_of(result.output, "typo_task")
    assert "error: task typo_task: unknown key 'metrc_list'; did you mean metric_list?" in line
    assert line_of(result.output, "good_mc").endswith("  ok")


def test_validate_reports_a_misspelt_column(folder):
    write(folder, "typo.yaml", """
        task: column_typo
        dataset: {generator: !function rows.make, size: 3, seed: 0}
        doc_to_text: questoin
        doc_to_target: answer
        answer_type: yes_no
    """)
    result = invoke("--include-path", str(folder), "--validate")
    assert result.exit_code == 1
    assert ("error: task column_typo: doc_to_text 'questoin' is not a column of the rows; did you mean question?"
            in line_of(result.output, "column_typo"))


def test_validate_checks_items_after_the_first(folder):
    write(folder, "late.yaml", """
        task: bad_last_row
        dataset: {generator: !function rows.make_with_a_bad_last_row, size: 7, seed: 0}
        doc_to_text: question
        doc_to_target: answer
        answer_type: yes_no
        answer_extraction: [yes_no]
    """)
    result = invoke("--include-path", str(folder), "--validate")
    assert result.exit_code == 1
    assert "error: item bad_last_row-6 (#6): the gold answer scores 0.0" in line_of(result.output, "bad_last_row")


def test_validate_checks_that_a_wrong_answer_scores_wrong(folder):
    # one option only: every reply names it, so no answer can be wrong and the task is broken
    write(folder, "single.yaml", """
        task: one_option
        dataset: {generator: !function rows.make, size: 3, seed: 0}
        doc_to_text: question
        doc_to_choice: "{{ options[:1] }}"
        doc_to_target: "0"
        answer_type: choice
        answer_extraction: [final_solution]
    """)
    result = invoke("--include-path", str(folder), "--validate")
    assert "error: item one_option-0 (#0): a wrong answer scores 1.0" in line_of(result.output, "one_option")
    assert result.exit_code == 1


def test_validate_spreads_the_checked_items():
    assert _spread(3) == [0, 1, 2]
    assert _spread(9) == [0, 2, 4, 6, 8]
    assert _spread(100) == [0, 25, 50, 74, 99]  # round(49.5) = 50 and round(74.25) = 74


def test_unknown_key_fails_at_run_start_with_one_line(folder, tmp_path):
    write(folder, "typo.yaml", """
        task: typo_task
        dataset: {generator: !function rows.make, size: 3, seed: 0}
        doc_to_text: question
        doc_to_target: answer
        answer_type: yes_no
        metrc_list: [{metric: accuracy}]
    """)
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
