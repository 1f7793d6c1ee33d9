"""``leaderboard check --history FILE`` appends to a path the user gives: atomically, in turns with
other checks, and only to a madeval history. A path that is a folder, a FIFO, a link, unwritable,
or a file of another tool is one line and exit status 2 with nothing written; a torn or hostile
history still takes a whole entry, and ``leaderboard history`` skips what it cannot read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from helpers import madeval_in_process, run_quietly, settings_for
from madeval.leaderboard.history import FORMAT, read


@pytest.fixture(scope="module")
def board(sim, tmp_path_factory):
    """A run's leaderboard JSON, checked against itself (it passes)."""
    root = tmp_path_factory.mktemp("board")
    result, _ = run_quietly(settings_for(sim.base_url, root, limit=6, cache="off"))
    return result.folder / "leaderboard.json"


def check(board, history) -> subprocess.CompletedProcess:
    return madeval_in_process("leaderboard", "check", board, "--baseline", board, "--history", history,
                              "--commit", "c0ffee")


def check_in_a_process(board, history, env=None) -> subprocess.CompletedProcess:
    """The check in a process of its own, killed after 60 s: for a FIFO, which an open for writing
    would wait on for ever (so a regression fails the test instead of hanging it)."""
    return subprocess.run([sys.executable, "-m", "madeval", "leaderboard", "check", str(board), "--baseline",
                           str(board), *(("--history", str(history)) if history else ()), "--commit", "c0ffee",
                           *(("--format", "github") if env else ())],
                          capture_output=True, text=True, timeout=60, env=env)


def refused(done: subprocess.CompletedProcess, *words: str) -> None:
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("madeval: error: --history ") and all(word in line for word in words), line
    assert "| configuration" not in done.stdout  # refused before the check ran


def test_a_folder_a_fifo_and_a_link_are_refused_in_one_line(board, tmp_path):
    folder = tmp_path / "hist"
    folder.mkdir()
    refused(check(board, folder), "is a folder")  # before: a one-line StorageError with status 1
    assert list(folder.iterdir()) == []
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)
    refused(check_in_a_process(board, fifo), "is not a regular file")  # before: blocked for ever
    target = tmp_path / "elsewhere.jsonl"
    target.write_text("")
    (tmp_path / "link.jsonl").symlink_to(target)
    refused(check(board, tmp_path / "link.jsonl"), "is a symbolic link")
    assert target.read_text() == ""
    refused(check(board, target / "history.jsonl"), "is not a folder")


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in a read-only folder")
def test_an_unwritable_folder_is_refused_in_one_line(board, tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        refused(check(board, folder / "history.jsonl"), "cannot write in")
    finally:
        folder.chmod(0o700)
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("content", [
    b'{"rows": [1, 2, 3], "kind": "another tool\'s lines"}\n{"a": 1}\n',
    b"# My notes\nnot json at all\n",
    b"\xff\xfe\x00garbage",
])
def test_a_file_that_is_not_a_history_is_left_as_it_was(board, tmp_path, content):
    path = tmp_path / "notes.jsonl"
    path.write_bytes(content)
    refused(check(board, path), "holds no madeval history entry")  # before: appended to
    assert path.read_bytes() == content


def test_a_torn_or_hostile_history_takes_a_whole_entry(board, tmp_path):
    path = tmp_path / "history.jsonl"
    assert check(board, path).returncode == 0
    (first,) = read(path)[0]
    whole = path.read_bytes()
    hostile = [b"[" * 200_000 + b"]" * 200_000,  # nested past the parser's depth
               json.dumps({**first, "rows": ["not a row"]}).encode(),
               json.dumps({**first, "commit": 12345}).encode(),
               json.dumps({**first, "rows": [{**first["rows"][0], "score": "high"}]}).encode()]
    torn = whole[: len(whole) // 2]  # a writer killed half-way through its line, no newline
    path.write_bytes(whole + b"\n".join(hostile) + b"\n" + torn)
    assert check(board, path).returncode == 0  # before: the entry was glued to the torn line and lost
    entries, broken = read(path)
    assert [e["commit"] for e in entries] == ["c0ffee", "c0ffee"] and broken == len(hostile) + 1
    shown = madeval_in_process("leaderboard", "history", path, "-o", tmp_path / "out")
    assert shown.returncode == 0, shown.stderr
    assert "5 broken lines skipped" in (tmp_path / "out" / "history.md").read_text()


APPENDER = """
import sys
import time
from pathlib import Path
from madeval.leaderboard.history_file import append
Path(sys.argv[4] + "-" + sys.argv[2]).touch()  # madeval is imported: ready
while not Path(sys.argv[4]).exists():  # all start appending together
    time.sleep(0.005)
entry = {"format": "%s", "commit": sys.argv[2], "time": "2026-11-27T08:00:00+00:00", "passed": True,
         "rows": [{"label": "l" * 4000, "task": "t", "metric": "m", "status": "ok", "score": 0.5,
                   "ci_low": 0.4, "ci_high": 0.6, "bounded": True}]}
for index in range(int(sys.argv[3])):
    append(Path(sys.argv[1]), {**entry, "time": str(index)})
""" % FORMAT


def test_concurrent_appends_each_land_whole(tmp_path):
    """Four processes append thirty 4 KB entries each to one file through temporary files and renames:
    without the turns they take (the folder's flock), a rename would drop the entries another
    process wrote since it read the file."""
    path, go = tmp_path / "ci" / "history.jsonl", tmp_path / "go"
    jobs = [subprocess.Popen([sys.executable, "-c", APPENDER, str(path), f"job{job}", "30", str(go)])
            for job in range(4)]
    ready = [tmp_path / f"go-job{job}" for job in range(4)]
    deadline = time.monotonic() + 120
    while not all(path.exists() for path in ready) and time.monotonic() < deadline:
        time.sleep(0.02)  # until each has imported madeval and waits
    go.touch()
    assert [job.wait(timeout=120) for job in jobs] == [0, 0, 0, 0]
    entries, broken = read(path)
    assert broken == 0 and len(entries) == 120
    assert sorted((e["commit"], e["time"]) for e in entries) == sorted(
        (f"job{job}", str(index)) for job in range(4) for index in range(30))
    assert [p.name for p in path.parent.iterdir()] == ["history.jsonl"]  # no temporary file left


def summarise(board, summary, monkeypatch) -> subprocess.CompletedProcess:
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    return madeval_in_process("leaderboard", "check", board, "--baseline", board, "--format", "github",
                              "--commit", "c0ffee")


def test_the_job_summary_is_appended_whole_and_a_folder_or_fifo_is_refused(board, tmp_path, monkeypatch):
    summary = tmp_path / "summary.md"
    summary.write_text("## an earlier step\n")
    assert summarise(board, summary, monkeypatch).returncode == 0
    assert summarise(board, summary, monkeypatch).returncode == 0
    text = summary.read_text()
    assert text.startswith("## an earlier step\n## madeval leaderboard check at `c0ffee`: ✅ PASS\n")
    assert text.count("## madeval leaderboard check at `c0ffee`: ✅ PASS\n\n| configuration |") == 2

    def refused_summary(done, words):
        assert done.returncode == 2, done.stderr
        (line,) = done.stderr.splitlines()
        assert line.startswith("madeval: error: $GITHUB_STEP_SUMMARY ") and words in line, line
        assert "| configuration" not in done.stdout  # refused before the check ran

    folder = tmp_path / "step"
    folder.mkdir()
    refused_summary(summarise(board, folder, monkeypatch), "is a folder")  # before: IsADirectoryError, after the check
    assert list(folder.iterdir()) == []
    fifo = tmp_path / "fifo.md"
    os.mkfifo(fifo)
    refused_summary(check_in_a_process(board, None, env={**os.environ, "GITHUB_STEP_SUMMARY": str(fifo)}),
                    "is not a regular file")  # before: blocked for ever
    refused_summary(summarise(board, tmp_path / "missing" / "summary.md", monkeypatch), "is not a folder")


def test_a_history_rewritten_keeps_its_mode(board, tmp_path):
    path = tmp_path / "history.jsonl"
    assert check(board, path).returncode == 0
    assert path.stat().st_mode & 0o777 == 0o644  # a new one
    path.chmod(0o600)
    assert check(board, path).returncode == 0
    assert path.stat().st_mode & 0o777 == 0o600 and len(read(path)[0]) == 2  # before: 0644, readable by all
