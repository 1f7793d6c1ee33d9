"""Task folders hold code (issue 12, defect 9): a ``!function`` that raises is reported, not a traceback,
and a task or group of ``--include-path`` that replaces one of the same name says so on stderr.

The task folders are real files in ``tmp_path``: YAML next to a Python module whose functions raise
when the module is imported, while the rows are made, while an item's prompt text is rendered, or
when the gold answer they returned is scored.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from madeval.cli.tasks_cmd import tasks
from madeval.core.plugins import registries
from madeval.errors import UsageError
from madeval.settings.config import RunSettings
from madeval.task.definition import load_tasks
from madeval.testing import core_registries

BUILTIN = Path(core_registries().task_sources[0][1])

HOSTILE_PY = '''
def rows(size, seed):
    return [{"question": f"Is {i} even?", "answer": ["yes", "no"][i % 2]} for i in range(size)]


def rows_then_fail(size, seed):
    for i in range(size):
        if i == 2:
            raise ZeroDivisionError("row generator gave up at row 2")
        yield {"question": f"Is {i} even?", "answer": "yes"}


def drop_everything(docs):
    raise KeyError("process_docs lost its key")


def text_of(doc):
    if doc["question"].startswith("Is 3 "):
        raise ValueError("cannot render the prompt of row 3")
    return doc["question"]


class Gold:
    """A gold answer that fits in a reply (``format``) but raises when scoring reads it (``str``)."""

    def __init__(self, text):
        self.text = text

    def __format__(self, spec):
        return self.text

    def __str__(self):
        raise RuntimeError("the gold answer refuses to be scored")


def hostile_gold(doc):
    return Gold(doc["answer"])


def leaves(doc):
    raise SystemExit(3)
'''

BROKEN_IMPORT_PY = '''
raise ImportError("this module breaks when it is imported")


def rows(size, seed):
    return []
'''


def task_yaml(name: str, **fields: str) -> str:
    body = {"dataset": "{generator: !function hostile.rows, size: 5, seed: 0}", "doc_to_text": "question",
            "doc_to_target": "answer", "answer_type": "yes_no", "answer_extraction": "[yes_no]", **fields}
    return f"task: {name}\n" + "".join(f"{key}: {value}\n" for key, value in body.items())


@pytest.fixture
def hostile_folder(tmp_path):
    """One good task and one task per way its code can raise."""
    folder = tmp_path / "hostile"
    folder.mkdir()
    (folder / "hostile.py").write_text(HOSTILE_PY)
    (folder / "broken.py").write_text(BROKEN_IMPORT_PY)
    tasks_ = {
        "fine_task": task_yaml("fine_task"),
        "raises_on_import": task_yaml("raises_on_import", dataset="{generator: !function broken.rows, size: 5}"),
        "raises_in_generator": task_yaml("raises_in_generator",
                                         dataset="{generator: !function hostile.rows_then_fail, size: 5}"),
        "raises_in_process_docs": task_yaml("raises_in_process_docs", process_docs="!function hostile.drop_everything"),
        "raises_in_prompt": task_yaml("raises_in_prompt", doc_to_text="!function hostile.text_of"),
        "raises_in_scoring": task_yaml("raises_in_scoring", doc_to_target="!function hostile.hostile_gold",
                                       answer_type="text", answer_extraction="[]"),
        "exits": task_yaml("exits", doc_to_text="!function hostile.leaves"),
    }
    for name, text in tasks_.items():
        (folder / f"{name}.yaml").write_text(text)
    return folder


def line_of(output: str, name: str) -> str:
    return next(line for line in output.splitlines() if line.split()[:1] == [name])


def test_crash_validate_reports_each_raising_task_as_an_error_line_and_goes_on(hostile_folder, tmp_path, monkeypatch):
    monkeypatch.setenv("MADEVAL_DATA_DIR", str(tmp_path))  # built-ins with data are skipped: seconds, not 20 s
    result = CliRunner().invoke(tasks, ["--include-path", str(hostile_folder), "--validate"], catch_exceptions=False)
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert line_of(result.stdout, "fine_task").endswith("  ok")
    assert line_of(result.stdout, "arith_mc").endswith("  ok")  # the built-ins after them are still checked
    expected = {
        "raises_on_import": "ImportError: this module breaks when it is imported (",
        "raises_in_generator": "dataset.generator !function hostile.rows_then_fail raised ZeroDivisionError: "
                               "row generator gave up at row 2 (",
        "raises_in_process_docs": "process_docs !function hostile.drop_everything raised KeyError: "
                                  "'process_docs lost its key' (",
        "raises_in_prompt": "doc_to_text !function hostile.text_of raised ValueError: cannot render the prompt "
                            "of row 3 (",
        "raises_in_scoring": "scoring the gold answer raised RuntimeError: the gold answer refuses to be scored (",
        "exits": "doc_to_text !function hostile.leaves raised SystemExit: 3 (",
    }
    for name, message in expected.items():
        line = line_of(result.stdout, name)
        assert "  error: " in line and message in line, line
        assert "hostile.py:" in line or "broken.py:" in line, line  # where the task's code raised
    assert "item raises_in_scoring-0 (#0)" in line_of(result.stdout, "raises_in_scoring")


def test_hostile_run_with_a_raising_task_function_fails_with_one_line(hostile_folder):
    """What ``madeval run`` prints (one line, exit 2) instead of a traceback."""
    with pytest.raises(UsageError) as raised:
        load_tasks(RunSettings(tasks=["raises_in_prompt"], include_path=[str(hostile_folder)]), registries())
    message = str(raised.value)
    assert message.startswith("task raises_in_prompt: doc_to_text !function hostile.text_of raised ValueError: "
                              "cannot render the prompt of row 3 (")
    assert "\n" not in message
    # A module that failed to import is not left half-made in sys.modules: the same error every time.
    for _ in range(2):
        with pytest.raises(UsageError, match="ImportError: this module breaks when it is imported"):
            load_tasks(RunSettings(tasks=["raises_on_import"], include_path=[str(hostile_folder)]), registries())


@pytest.fixture
def replacing_folder(tmp_path):
    """A folder that replaces the built-in task ``arith_mc`` and the built-in group ``bbh``."""
    folder = tmp_path / "mine"
    folder.mkdir()
    generated = BUILTIN / "generated"
    (folder / "arith.py").write_text((generated / "arith.py").read_text())
    (folder / "arith_mc.yaml").write_text((generated / "arith_mc.yaml").read_text().replace("size: 1000", "size: 12"))
    (folder / "my_bbh.yaml").write_text("group: bbh\ntask: [arith_mc]\n")
    return folder


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("madeval: warning:")]


def test_hostile_include_path_replacing_a_builtin_warns_once_per_name_in_tasks(replacing_folder):
    result = CliRunner().invoke(tasks, ["--include-path", str(replacing_folder)], catch_exceptions=False)
    assert result.exit_code == 0
    warnings = _warnings(result.stderr)
    assert len(warnings) == 2, result.stderr
    task_line = next(w for w in warnings if "task arith_mc" in w)
    assert str(replacing_folder / "arith_mc.yaml") in task_line
    assert str(BUILTIN / "generated" / "arith_mc.yaml") in task_line and "built-in" in task_line
    # the built-in tag and the replacing group that now point at the new file
    assert task_line.endswith("groups and tags that name it now get the new one: bbh, generated")
    group_line = next(w for w in warnings if "group bbh" in w)
    assert str(replacing_folder / "my_bbh.yaml") in group_line and "built-in" in group_line
    assert not _warnings(result.stdout)


def test_hostile_include_path_replacing_a_builtin_warns_once_in_a_run(replacing_folder, sim, tmp_path):
    """A whole run (the index is read several times: tasks, groups, leaderboard) warns once per name."""
    result = subprocess.run(
        [sys.executable, "-m", "madeval", "--tasks", "arith_mc", "--include-path", str(replacing_folder),
         "--base-url", sim.base_url, "--limit", "2", "--output-path", str(tmp_path / "out"), "--cache", "off"],
        cwd=tmp_path, capture_output=True, text=True, timeout=180,
    )
    assert result.returncode == 0, result.stderr
    warnings = _warnings(result.stderr)
    assert sorted(w.split()[3:5] for w in warnings) == [["group", "bbh"], ["task", "arith_mc"]], result.stderr
    assert not _warnings(result.stdout)


def test_no_warning_without_a_replacement(tmp_path):
    folder = tmp_path / "own"
    folder.mkdir()
    (folder / "hostile.py").write_text(HOSTILE_PY)
    (folder / "own_task.yaml").write_text(task_yaml("own_task"))
    result = CliRunner().invoke(tasks, ["--include-path", str(folder)], catch_exceptions=False)
    assert result.exit_code == 0 and not _warnings(result.stderr) and "own_task" in result.stdout
