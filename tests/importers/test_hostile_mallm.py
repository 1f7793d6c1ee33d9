"""``madeval import mallm`` on hostile files (issue 33, item 11): bounded in time and memory, one line
and exit status 2 for what it cannot read, nothing half-written, and what Python's JSON writer
writes (NaN, a byte order mark) read as MALLM wrote it.

Before: one long string took time quadratic in its length (100 MB: 43 s and 608 MB; a 1.5 MB gzip
of a 1.5 GB string did not finish in 4 minutes); 20,000 agents with ``"turns": 1000`` took over
3 GB; malformed ``votesEachTurn`` keys, ``alterations`` as a list and ``references`` as a number
ended in tracebacks; NaN and a byte order mark were refused as damaged; and an import killed by a
signal left its staging folder for good."""

from __future__ import annotations

import gzip
import json
import math
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_import_mallm import assert_refused, mallm_record, mirror_rows, write_json

from helpers import madeval_in_process
from madeval.core.plugins import registries
from madeval.importers import mallm
from madeval.importers.mallm import MAX_AGENTS, MAX_RECORD_BYTES, MAX_TURNS, records_of
from madeval.importers.writer import import_files
from madeval.records.folder import read_records
from madeval.settings.config import RunSettings
from madeval.task.definition import load_tasks


@pytest.fixture(scope="module")
def task():
    return load_tasks(RunSettings(tasks=["mmlu_pro"]), registries())["mmlu_pro"]


#: 2 GB of address space and 120 s of CPU: what an import of these files may take at most.
BOUNDED = 'ulimit -v 2000000; ulimit -t 120; exec "$@"'


def import_bounded(path: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", BOUNDED, "-", sys.executable, "-m", "madeval", "import", "mallm", str(path),
                           "--task", "mmlu_pro", "--output-path", str(out)], capture_output=True, text=True,
                          timeout=600)


def import_in_process(path: Path, out: Path) -> subprocess.CompletedProcess:
    """The same command in the test's process: for files that are small and odd rather than big (a
    regression there is a traceback or a wrong line, which this reports as well)."""
    return madeval_in_process("import", "mallm", path, "--task", "mmlu_pro", "--output-path", out)


def test_hostile_gzip_of_a_256_mb_string_is_refused_in_bounded_time_and_memory(tmp_path):
    """256 KB of gzip: the record passes the bound a quarter of the way in, and reading stops there."""
    text = json.dumps([mallm_record(mirror_rows(1)[0], "e1", [(1, 0, False, "A")], "A")])
    head, tail = text.split('"[DISAGREE] A"', 1)
    path = tmp_path / "bomb.json.gz"
    with gzip.open(path, "wb", compresslevel=9) as out:
        out.write(head.encode() + b'"')
        for _ in range(256):
            out.write(b"x" * (1 << 20))
        out.write(b'"' + tail.encode())
    assert path.stat().st_size < 1 << 20
    done = import_bounded(path, tmp_path / "out")
    assert_refused(done, f"bomb.json.gz: record 1 is larger than {MAX_RECORD_BYTES >> 20} MB of JSON", tmp_path / "out")


def test_a_record_is_read_in_time_linear_in_its_size(tmp_path, monkeypatch):
    """A 24 MB string between two small records: the characters the JSON reader is given to read add
    up to a few times the file (each record read again at most as its buffer doubles), not its square."""
    rows = mirror_rows(3)
    records = [mallm_record(row, f"e{n}", [(1, 0, False, "A")], "A") for n, row in enumerate(rows)]
    records[1]["globalMemory"][0]["message"] = "y" * (24 << 20)
    path = write_json(tmp_path / "long.json", records)
    scanned = []
    real = mallm.json.JSONDecoder.raw_decode

    def counting(self, text, index=0):
        scanned.append(len(text) - index)
        return real(self, text, index)

    monkeypatch.setattr(mallm.json.JSONDecoder, "raw_decode", counting)
    read = list(records_of(path))
    assert [r["exampleId"] for r in read] == ["e0", "e1", "e2"]
    assert len(read[1]["globalMemory"][0]["message"]) == 24 << 20
    size = path.stat().st_size
    assert size <= sum(scanned) <= 3 * size, (sum(scanned), size)


def test_hostile_many_agents_are_refused_and_a_turn_count_is_what_the_messages_show(tmp_path, task):
    rows = mirror_rows(2)
    many = mallm_record(rows[0], "e1", [(1, 0, False, "A")], "A")
    many["personas"] = [{"agentId": f"a{n}", "model": "m", "persona": f"P{n}", "personaDescription": ""}
                        for n in range(20_000)]
    many["turns"] = 1000
    done = import_bounded(write_json(tmp_path / "many.json", [many]), tmp_path / "out")
    assert_refused(done, f"many.json: record 1 has 20000 agents, more than the {MAX_AGENTS} madeval reads",
                   tmp_path / "out")
    speakers = mallm_record(rows[0], "e1", [(1, 0, False, "A")], "A")  # 3 persona entries
    for n in range(101):  # agents that speak without a persona entry count too
        speakers["globalMemory"].append({**speakers["globalMemory"][0], "agent_id": f"stranger-{n}"})
    done = import_in_process(write_json(tmp_path / "speakers.json", [speakers]), tmp_path / "out")
    assert_refused(done, "speakers.json: record 1 has 104 agents", tmp_path / "out")
    late = mallm_record(rows[1], "e2", [(1, 0, False, "A"), (MAX_TURNS + 1, 1, False, "B")], "A")
    done = import_in_process(write_json(tmp_path / "late.json", [late]), tmp_path / "out")
    assert_refused(done, f'globalMemory entry 1 has turn "{MAX_TURNS + 1}", not a turn number from 1 to {MAX_TURNS}',
                   tmp_path / "out")
    claimed = mallm_record(rows[1], "e3", [(1, 0, False, "A"), (2, 1, False, "A")], "A")
    claimed["turns"] = 1000  # two turns of messages
    import_files(registries().importers.create("mallm"), [write_json(tmp_path / "t.json", [claimed])], task,
                 tmp_path / "kept")
    (stored,) = read_records(tmp_path / "kept")
    assert stored["turns"] == 2 and stored["transcript"]["turns_used"] == 2


@pytest.mark.parametrize("key, shown", [("\u00b2", '"\\u00b2"'), ("9" * 5000, '"99999'), ("0", '"0"'),
                                        (str(MAX_TURNS + 1), f'"{MAX_TURNS + 1}"')])
def test_hostile_vote_turn_keys_are_one_line(tmp_path, key, shown):
    record = mallm_record(mirror_rows(1)[0], "e1", [(1, 0, False, "A")], "A",
                          votes={key: {"answers": ["A"], "alterations": {"public": {"votes": [0]}}}})
    done = import_in_process(write_json(tmp_path / "votes.json", [record]), tmp_path / "out")
    assert_refused(done, f"votes.json: record 1: votesEachTurn has key {shown}", tmp_path / "out")
    assert f"not a turn number from 1 to {MAX_TURNS}" in done.stderr


def test_hostile_fields_of_the_wrong_shape_are_left_out_not_a_traceback(tmp_path, task):
    row = mirror_rows(1)[0]
    record = mallm_record(row, "e1", [(1, 0, False, "A")], "A",
                          votes={"1": {"answers": ["A", 7], "alterations": ["public", {"votes": [0]}]},
                                 "2": {"answers": "A", "alterations": {"public": [0, 0]}},
                                 "3": {"answers": ["A"], "alterations": {"public": {"votes": 0, "most_voted": "x"}}}})
    record.update(references=42, personas={"agentId": "x"})
    import_files(registries().importers.create("mallm"), [write_json(tmp_path / "odd.json", [record])], task,
                 tmp_path / "out")
    (stored,) = read_records(tmp_path / "out")
    events = stored["transcript"]["events"]
    assert [e["turn"] for e in events] == [1, 2, 3]
    assert [s["text"] for s in events[0]["solutions"]] == ["A", ""] and events[1]["solutions"] == []
    assert all(b["abstained"] for e in events for b in e["ballots"])  # no readable ballot anywhere
    assert stored["transcript"]["decision"]["details"]["references"] == []
    assert stored["transcript"]["agents"][0]["persona"]["name"] == "Expert 0"  # from the message: no persona list


def test_nan_and_a_byte_order_mark_are_read_as_python_s_json_writer_wrote_them(tmp_path, task):
    rows = mirror_rows(2)
    records = [mallm_record(row, f"e{n}", [(1, 0, False, "Final Solution: A")], "A") for n, row in enumerate(rows)]
    records[0]["clockSeconds"] = float("nan")
    records[1].update(clockSeconds=float("inf"), metadata={"score": float("-inf")})
    text = json.dumps(records)  # Python's writer: NaN, Infinity, -Infinity
    assert "NaN" in text and "-Infinity" in text
    path = tmp_path / "nan.json"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    outcome = import_files(registries().importers.create("mallm"), [path], task, tmp_path / "out")
    assert outcome.added == 2
    stored = list(read_records(tmp_path / "out"))
    assert [r["wall_s"] for r in stored] == [None, None]  # not a duration
    assert [r["prediction"] for r in stored] == ["A", "A"]
    bom_only = tmp_path / "bom.json.gz"
    bom_only.write_bytes(gzip.compress(b"\xef\xbb\xbf" + json.dumps(records[:1]).encode()))
    assert len(list(records_of(bom_only))) == 1
    assert math.isnan(next(records_of(path))["clockSeconds"])


def big_file(path: Path, count: int) -> Path:
    rows = mirror_rows(50)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("[")
        for n in range(count):
            record = mallm_record(rows[n % 50], f"e{n}", [(1, 0, False, "Final Solution: A")], "A")
            handle.write(("," if n else "") + json.dumps(record))
        handle.write("]")
    return path


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGKILL])
def test_the_staging_folder_of_a_killed_import_is_removed_by_the_next_import(tmp_path, sent):
    out = tmp_path / "out"
    path = big_file(tmp_path / "big.json", 30_000)
    running = subprocess.Popen([sys.executable, "-m", "madeval", "import", "mallm", str(path), "--task", "mmlu_pro",
                                "--output-path", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        staged = []
        while time.monotonic() < deadline and running.poll() is None:  # until it has written some records
            staged = [p for p in tmp_path.iterdir() if p.name.startswith(".out.importing-")]
            if staged and (staged[0] / "records.jsonl").is_file() and (staged[0] / "records.jsonl").stat().st_size:
                break
            time.sleep(0.05)
        assert running.poll() is None and staged, "the import ended before it could be killed"
        running.send_signal(sent)
        running.wait(timeout=60)
    finally:
        running.kill()
    assert staged[0].is_dir() and not out.exists()  # left behind, as a kill leaves it
    small = write_json(tmp_path / "small.json", [mallm_record(mirror_rows(1)[0], "e1", [(1, 0, False, "A")], "A")])
    done = import_in_process(small, out)  # the next import: the kill above is what needed a process
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["big.json", "out", "small.json"]
    assert len(list(read_records(out))) == 1


def test_a_running_import_s_staging_folder_is_never_removed(tmp_path, task):
    """An import into the same folder that is still running holds its staging folder's lock."""
    from madeval.records import lock as folder_lock

    live = tmp_path / ".out.importing-live"
    live.mkdir()
    folder_lock.acquire(live)  # another import in this process: its lock is held
    try:
        small = write_json(tmp_path / "small.json", [mallm_record(mirror_rows(1)[0], "e1", [(1, 0, False, "A")], "A")])
        import_files(registries().importers.create("mallm"), [small], task, tmp_path / "out")
        assert live.is_dir()
    finally:
        folder_lock.release(live)
