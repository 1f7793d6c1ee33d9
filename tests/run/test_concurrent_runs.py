"""Two writers on one run folder: the second process is refused with one line, and readers count
every unit once whatever is on disk (the folder lock, madeval/records/lock.py; madeval/records/folder.py)."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from collections import Counter

import pytest

from helpers import madeval_in_process, run_quietly, settings_for
from madeval.errors import UsageError
from madeval.records.folder import read_records
from madeval.simulator import simulate


def command(base_url: str, folder, limit: int = 30) -> list[str]:
    return [
        sys.executable, "-m", "madeval", "--tasks", "arith_mc", "--limit", str(limit), "--decider", "unanimity",
        "--concurrency", "4", "--base-url", base_url, "--output-path", str(folder), "--cache", "off",
        "--no-progress",
    ]


def keys_on_disk(folder) -> Counter:
    """How often each unit's record is on disk: every line must be a whole record."""
    lines = (folder / "records.jsonl").read_bytes().splitlines()
    return Counter(json.loads(line)["unit"]["key"] for line in lines)


def wait_for_records(folder, count: int, process, timeout_s: float = 120) -> None:
    path = folder / "records.jsonl"
    deadline = time.time() + timeout_s
    while time.time() < deadline and process.poll() is None:
        if path.exists() and path.read_bytes().count(b"\n") >= count:
            return
        time.sleep(0.01)
    raise AssertionError(f"no {count} records while the run was alive")


def first_exit(processes, timeout_s: float = 300) -> None:
    """Return once one of ``processes`` has exited."""
    deadline = time.time() + timeout_s
    while all(process.poll() is None for process in processes):
        if time.time() > deadline:
            raise AssertionError("no process exited")
        time.sleep(0.01)


def test_concurrent_runs_started_at_once_one_is_refused_and_each_unit_is_recorded_once(generated_tasks, tmp_path):
    folder = tmp_path / "run"
    # Slow replies (30 units take the winner 15 s or more) until the first process exits, so the
    # loser meets the lock however late it starts; then fast ones, so the winner needs no longer.
    with simulate(tasks=generated_tasks.values(), latency_s=0.5) as sim:
        processes = [subprocess.Popen(command(sim.base_url, folder), stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True) for _ in range(2)]
        first_exit(processes)
        sim.server.latency_s = 0.0
        outputs = [process.communicate(timeout=300) for process in processes]
    codes = [process.returncode for process in processes]
    assert sorted(codes) == [0, 2], outputs
    refused_out, refused_err = outputs[codes.index(2)]
    assert refused_out == ""
    assert len(refused_err.splitlines()) == 1, refused_err
    winner = processes[codes.index(0)]
    assert refused_err == f"madeval: error: {folder} is in use by another madeval process (pid {winner.pid}); " \
                          "wait for it to finish or choose another --output-path\n"
    keys = keys_on_disk(folder)
    assert len(keys) == 30 and set(keys.values()) == {1}
    board = json.loads((folder / "leaderboard.json").read_text())
    assert board["rows"][0]["units"] == 30 and board["records_read"]["duplicates"] == 0


def test_concurrent_run_and_rescore_are_refused_while_a_run_writes_the_folder(generated_tasks, tmp_path):
    folder = tmp_path / "run"
    with simulate(tasks=generated_tasks.values(), latency_s=0.05) as sim:
        first = subprocess.Popen(command(sim.base_url, folder, limit=20), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
        wait_for_records(folder, 1, first)
        sim.server.latency_s = 0.5  # the first run lasts seconds more: it still writes while the others try
        # The lock is held by another process (first): asking from this one is what a second command does.
        second = madeval_in_process(*command(sim.base_url, folder, limit=20)[3:])
        rescore = madeval_in_process("rescore", folder, "--decider", "counting", "--base-url", sim.base_url,
                                     "--cache", "off")
        sim.server.latency_s = 0.0
        assert first.wait(timeout=300) == 0, first.stderr.read()
    for refused in (second, rescore):
        assert refused.returncode == 2 and refused.stdout == ""
        assert refused.stderr.splitlines() == [
            f"madeval: error: {folder} is in use by another madeval process (pid {first.pid}); "
            "wait for it to finish or choose another --output-path"]
    assert not (folder / "rescored.jsonl").exists()
    keys = keys_on_disk(folder)
    assert len(keys) == 20 and set(keys.values()) == {1}


def test_concurrent_lock_held_elsewhere_refuses_an_in_process_run_before_it_writes(sim, tmp_path):
    folder = tmp_path / "run"
    folder.mkdir()
    holder = os.open(folder / "run.lock", os.O_RDWR | os.O_CREAT)  # another open file: another writer
    try:
        fcntl.flock(holder, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.write(holder, b"4242\n")
        with pytest.raises(UsageError, match=r"in use by another madeval process \(pid 4242\)"):
            run_quietly(settings_for(sim.base_url, tmp_path, limit=2, cache="off"))
        assert sorted(p.name for p in folder.iterdir()) == ["run.lock"]  # nothing written
    finally:
        os.close(holder)
    result, _ = run_quietly(settings_for(sim.base_url, tmp_path, limit=2, cache="off"))  # released: runs
    assert result.outcome.finished == 2


def test_concurrent_duplicate_records_count_once_in_resume_and_leaderboard(sim, tmp_path):
    settings = settings_for(sim.base_url, tmp_path, limit=6, cache="off")
    first, _ = run_quietly(settings)
    path = first.folder / "records.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    # What two writers left behind: units 1 and 4 recorded twice, the second copy with another score.
    twin = json.loads(lines[1])
    twin["metrics"]["accuracy"] = 1.0 - twin["metrics"]["accuracy"]
    path.write_bytes(b"".join(lines) + json.dumps(twin).encode() + b"\n" + lines[4])
    expected = sum(json.loads(line)["metrics"]["accuracy"] for line in lines) / 6  # the first copies

    again, printed = run_quietly(settings)
    assert (again.outcome.skipped, again.outcome.finished) == (6, 0)
    assert "2 duplicate records ignored" in printed.splitlines()[-1]
    assert [r["unit"]["key"] for r in read_records(first.folder)] == [json.loads(x)["unit"]["key"] for x in lines]

    shown = madeval_in_process("leaderboard", "show", first.folder)
    assert shown.returncode == 0, shown.stderr
    assert "Records: 2 duplicate records ignored; each unit counts once." in shown.stdout
    board = json.loads((first.folder / "leaderboard.json").read_text())
    row = board["rows"][0]
    assert (row["units"], row["items"]) == (6, 6) and abs(row["score"] - expected) < 1e-12
    assert board["records_read"]["duplicates"] == 2
