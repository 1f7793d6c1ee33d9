"""A gated dataset (GPQA) that cannot be read says, in one line, how to get it.

The hub is never asked (``HF_HUB_OFFLINE=1``), so nothing waits on the network; the local-copy
path the message names is then checked to be the one madeval reads.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

from datasets.exceptions import DatasetNotFoundError

from madeval.core.plugins import registries
from madeval.settings.config import RunSettings
from madeval.task.definition import load_tasks
from madeval.task.sources import refused_as_gated


def offline_env(data_dir) -> dict[str, str]:
    return {**os.environ, "MADEVAL_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1", "MADEVAL_LOAD_PLUGINS": ""}


def test_gated_gpqa_without_access_or_copy_fails_in_one_line_saying_how_to_get_it(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "madeval", "--tasks", "gpqa", "--limit", "1", "--base-url", "http://127.0.0.1:9/v1",
         "--output-path", str(tmp_path / "out"), "--no-progress"],
        env=offline_env(data), capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1, done.stderr
    line = done.stderr
    assert line.startswith("madeval: error: task gpqa_")
    assert "(HF_HUB_OFFLINE is set)" in line and "Idavidrein/gpqa is a gated dataset" in line
    assert "accept its terms at https://huggingface.co/datasets/Idavidrein/gpqa" in line and "set HF_TOKEN" in line
    task = line.split("task ", 1)[1].split(":", 1)[0]
    assert f"put a local copy (JSON lines, the hub's columns) at {data / 'gpqa' / (task + '.jsonl')}" in line
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_the_local_copy_the_message_names_is_the_file_read(tmp_path, monkeypatch):
    monkeypatch.setenv("MADEVAL_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    copy = tmp_path / "gpqa" / "gpqa_diamond.jsonl"
    copy.parent.mkdir()
    rows = [{"Record ID": f"rec{i}", "Question": f"Which is right, {i}?", "Correct Answer": "right",
             "Incorrect Answer 1": "wrong 1", "Incorrect Answer 2": "wrong 2", "Incorrect Answer 3": "wrong 3"}
            for i in range(3)]
    copy.write_text("".join(json.dumps(row) + "\n" for row in rows))
    task = load_tasks(RunSettings(tasks=["gpqa_diamond"]), registries())["gpqa_diamond"]
    assert task.source == f"mirror {copy}"
    assert [item.id for item in task.items] == ["rec0", "rec1", "rec2"]
    for item in task.items:
        assert (item.choices["ABCD".index(item.target)] == "right"
                and sorted(item.choices) == ["right", "wrong 1", "wrong 2", "wrong 3"])


def test_a_hub_refusal_that_names_the_dataset_gated_is_recognised():
    # datasets' own wording (datasets/load.py) when the hub refuses a gated dataset.
    refusal = DatasetNotFoundError("Dataset 'Idavidrein/gpqa' is a gated dataset on the Hub. "
                                   "You must be authenticated to access it.")
    assert refused_as_gated(refusal)
    assert not refused_as_gated(DatasetNotFoundError("Dataset 'someone/typo' doesn't exist on the Hub."))
    assert not refused_as_gated(ConnectionError("x" * 5000 + " gated"))  # only the start of a long message
