"""``--wandb-args`` reads the run's run.json with the leaderboard's checked reader: a broken one is
one line naming the file, before W&B is started (before: a JSONDecodeError traceback)."""

from __future__ import annotations

import pytest

from madeval.errors import UsageError
from madeval.export.wandb_log import log_run

pytest.importorskip("wandb")


@pytest.mark.parametrize(("content", "why"), [
    (b'{"settings": {"tasks": ["arith_mc"]', "is not valid JSON"),
    (b"\xff\xfe not text", "is not valid JSON"),
    (b"[" * 100_000 + b"]" * 100_000, "is not valid JSON"),
    (b'{"configurations": [1, 2]}', "is not a madeval run description (configurations is malformed)"),
    (b'"just a string"', "is not a madeval run description (the whole file is malformed)"),
])
def test_a_broken_run_json_is_one_line_before_wandb_starts(tmp_path, content, why):
    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "run.json").write_bytes(content)
    with pytest.raises(UsageError) as refused:
        log_run(folder, {"rows": []}, {"mode": "offline", "dir": str(tmp_path)})
    message = str(refused.value)
    assert message.startswith(f"{folder / 'run.json'} {why}")
    assert "\n" not in message and not (tmp_path / "wandb").exists()  # W&B never started


def test_a_missing_run_json_is_one_line(tmp_path):
    with pytest.raises(UsageError, match="is not a madeval run folder"):
        log_run(tmp_path, {"rows": []}, {"mode": "offline", "dir": str(tmp_path)})
