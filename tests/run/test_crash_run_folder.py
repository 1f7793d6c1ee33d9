"""Crashes and storage faults on a run folder, with real OS faults: SIGKILL, a broken line written
by someone else, a file-size limit (EFBIG, as a full disk gives ENOSPC) and, where mounting works,
a full and a read-only tmpfs. Each ends in one line and a resume that records every unit once."""

from __future__ import annotations

import json
import resource
import signal
import subprocess
from collections import Counter

import pytest
from test_concurrent_runs import command, keys_on_disk, wait_for_records

from helpers import madeval_in_process, run_quietly, settings_for
from madeval.records.folder import RecordSink, read_records
from madeval.simulator import simulate


def limited(size: int):
    """A preexec_fn: files of at most ``size`` bytes, and writes past it fail with EFBIG (not SIGXFSZ)."""
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    return apply


def assert_whole_lines(folder) -> int:
    """Every line of records.jsonl is a record and the file ends with a newline; how many lines."""
    data = (folder / "records.jsonl").read_bytes()
    assert data == b"" or data.endswith(b"\n")
    for line in data.splitlines():
        json.loads(line)
    return data.count(b"\n")


def test_crash_sigkill_releases_the_lock_and_the_resume_records_every_unit_once(generated_tasks, tmp_path):
    folder = tmp_path / "run"
    with simulate(tasks=generated_tasks.values(), latency_s=0.05) as sim:
        first = subprocess.Popen(command(sim.base_url, folder), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_for_records(folder, 5, first)
            # the lock's holder is another process; asking from this one is what a second command does
            refused = madeval_in_process(*command(sim.base_url, folder)[3:])
            assert refused.returncode == 2 and f"in use by another madeval process (pid {first.pid})" in refused.stderr
        finally:
            first.send_signal(signal.SIGKILL)
            first.wait()
        before = (folder / "records.jsonl").read_bytes()
        kept = before[: before.rfind(b"\n") + 1]  # a kill mid-write may leave one partial line
        assert 5 <= kept.count(b"\n") < 30, "the run must be killed mid-way"
        sim.server.latency_s = 0.0  # slow replies were for killing the run mid-way
        resumed = madeval_in_process(*command(sim.base_url, folder)[3:])
    assert resumed.returncode == 0, resumed.stderr  # the kernel dropped the killed run's lock
    done_before = kept.count(b"\n")
    assert f"{done_before} already done" in resumed.stdout
    assert (folder / "records.jsonl").read_bytes().startswith(kept)  # nothing written before was lost
    keys = keys_on_disk(folder)
    assert len(keys) == 30 and set(keys.values()) == {1}


def test_crash_broken_middle_line_is_skipped_reported_and_rerun(sim, tmp_path):
    settings = settings_for(sim.base_url, tmp_path, limit=6, cache="off")
    first, _ = run_quietly(settings)
    path = first.folder / "records.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    broken_key = json.loads(lines[2])["unit"]["key"]
    # Two writers interleaved: line 3 is the head of one record glued to invalid UTF-8 and a newline.
    lines[2] = lines[2][:40] + b"\xff\xfe" + lines[3][:25] + b"\n"
    path.write_bytes(b"".join(lines))

    shown = madeval_in_process("leaderboard", "show", first.folder)
    assert shown.returncode == 0, shown.stderr
    assert "Records: 1 broken line skipped (records.jsonl:3); each unit counts once." in shown.stdout
    assert json.loads((first.folder / "leaderboard.json").read_text())["rows"][0]["units"] == 5

    again, printed = run_quietly(settings)
    assert (again.outcome.skipped, again.outcome.finished) == (5, 1)
    assert printed.splitlines()[-1].startswith("1 units run, 5 already done, 0 failed; "
                                               "1 broken line skipped (records.jsonl:3); results in ")
    records = list(read_records(first.folder))
    assert len(records) == 6 and records[-1]["unit"]["key"] == broken_key
    assert again.rows[0]["units"] == 6


def test_crash_disk_full_while_recording_ends_in_one_line_and_a_resume_finishes(generated_tasks, tmp_path):
    folder = tmp_path / "run"
    with simulate(tasks=generated_tasks.values()) as sim:
        full = subprocess.run(command(sim.base_url, folder, limit=12), capture_output=True, text=True,
                              timeout=300, preexec_fn=limited(60_000))
        recorded = assert_whole_lines(folder)
        assert full.returncode == 1, full.stderr
        assert full.stderr.splitlines() == [
            f"madeval: error: cannot write {folder / 'records.jsonl'}: File too large; the {recorded} units "
            "recorded so far are kept: run the same command again to finish the run"]
        assert 0 < recorded < 12
        assert not (folder / "leaderboard.json").exists()

        resumed = madeval_in_process(*command(sim.base_url, folder, limit=12)[3:])  # no file-size limit here
    assert resumed.returncode == 0, resumed.stderr
    assert f"{12 - recorded} units run, {recorded} already done, 0 failed; results in" in resumed.stdout
    keys = keys_on_disk(folder)
    assert len(keys) == 12 and set(keys.values()) == {1}


def test_crash_disk_full_while_writing_the_leaderboard_keeps_every_record(generated_tasks, tmp_path):
    folder = tmp_path / "run"
    charts = tmp_path / "charts.yaml"  # the page holds the charts: the largest file by far
    charts.write_text("leaderboard: {charts: true}\n")
    with simulate(tasks=generated_tasks.values()) as sim:
        # Big enough for run.json and the records of 2 units; too small for the HTML page.
        full = subprocess.run(command(sim.base_url, folder, limit=2) + ["--config", str(charts)], capture_output=True,
                              text=True, timeout=300, preexec_fn=limited(100_000))
        assert full.returncode == 1 and len(full.stderr.splitlines()) == 1, full.stderr
        assert full.stderr.startswith(f"madeval: error: cannot write the leaderboard into {folder}")
        assert full.stderr.rstrip().endswith(f"File too large; every record is kept: run 'madeval leaderboard show "
                                             f"{folder}' when there is room")
        assert assert_whole_lines(folder) == 2
        resumed = madeval_in_process(*command(sim.base_url, folder, limit=2)[3:], "--config", charts)
    assert resumed.returncode == 0, resumed.stderr
    assert "0 units run, 2 already done, 0 failed" in resumed.stdout
    assert (folder / "leaderboard.html").stat().st_size > 100_000


def test_crash_a_record_that_cannot_be_written_is_cut_back_and_not_finished(tmp_path):
    from madeval.errors import StorageError

    sink = RecordSink(tmp_path / "run", {}, "f")
    unit = {"key": "k1", "config": "c", "task": "t", "item": "i", "repeat": 0}
    sink.write({"unit": unit, "text": "a"})
    resource_limit = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    size = (tmp_path / "run" / "records.jsonl").stat().st_size
    try:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size + 100, resource_limit[1]))
        with pytest.raises(StorageError, match="File too large; the 1 units recorded so far are kept"):
            sink.write({"unit": {**unit, "key": "k2"}, "text": "x" * 1000})
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, resource_limit)
        signal.signal(signal.SIGXFSZ, previous)
    assert sink.finished == {"k1"}
    assert (tmp_path / "run" / "records.jsonl").stat().st_size == size  # the first 100 bytes were cut back
    sink.write({"unit": {**unit, "key": "k3"}, "text": "\ud800 lone surrogate from a model"})
    sink.close()
    assert [r["unit"]["key"] for r in read_records(tmp_path / "run")] == ["k1", "k3"]
    assert list(read_records(tmp_path / "run"))[1]["text"] == "\ud800 lone surrogate from a model"


@pytest.fixture
def small_disk(tmp_path):
    """A 256 KiB tmpfs (skipped where this process may not mount)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(disk)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_crash_full_then_read_only_tmpfs_one_line_each_and_nothing_lost(generated_tasks, small_disk):
    folder = small_disk / "run"  # full, then read-only, for every process: the commands run in this one
    with simulate(tasks=generated_tasks.values()) as sim:
        full = madeval_in_process(*command(sim.base_url, folder, limit=20)[3:])
        assert full.returncode == 1 and len(full.stderr.splitlines()) == 1, full.stderr
        assert "No space left on device" in full.stderr and "Traceback" not in full.stderr
        recorded = assert_whole_lines(folder)
        assert 0 < recorded < 20

        subprocess.run(["mount", "-o", "remount,size=16m", str(small_disk)], check=True)  # space freed
        resumed = madeval_in_process(*command(sim.base_url, folder, limit=20)[3:])
        assert resumed.returncode == 0, resumed.stderr
        assert f"{recorded} already done" in resumed.stdout
        keys = keys_on_disk(folder)
        assert len(keys) == 20 and set(keys.values()) == {1}

        subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
        try:
            again = madeval_in_process(*command(sim.base_url, folder, limit=20)[3:])
            show = madeval_in_process("leaderboard", "show", folder)
            fresh = madeval_in_process(*command(sim.base_url, small_disk / "new", limit=2)[3:])
        finally:
            subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], check=True)
    for done in (again, show, fresh):
        assert done.returncode != 0 and len(done.stderr.splitlines()) == 1, done.stderr
        assert "Read-only file system" in done.stderr and "Traceback" not in done.stderr
    assert Counter(keys_on_disk(folder).values()) == {1: 20}


def test_crash_lines_that_are_not_records_are_skipped_and_counted_and_a_torn_tail_is_left(tmp_path):
    from madeval.records.folder import ReadReport

    record = {"unit": {"key": "k1"}, "metrics": {}}
    lines = [json.dumps(record), "[1, 2]", '{"unit": 3}', '{"unit": {"key": 7}}', "[" * 200_000 + "]" * 200_000,
             "\x00" * 64, json.dumps({**record, "metrics": {"accuracy": 1}}), json.dumps({"unit": {"key": "k2"}})]
    (tmp_path / "records.jsonl").write_text("\n".join(lines) + "\n" + '{"unit": {"key": "k3"', encoding="utf-8")
    report = ReadReport()
    records = list(read_records(tmp_path, report))
    assert [r["unit"]["key"] for r in records] == ["k1", "k2"] and records[0]["metrics"] == {}
    assert report.broken == [f"records.jsonl:{n}" for n in (2, 3, 4, 5, 6)] and report.duplicates == 1
    assert report.summary() == ("5 broken lines skipped (records.jsonl:2, records.jsonl:3, records.jsonl:4, ...), "
                                "1 duplicate record ignored")
