"""The response cache against hostile replies and damaged files (issue 25, items 4 and 5).

A reply with a lone surrogate is stored and keyed as records store it; a cache file that cannot be
used is one line naming it and what to do (exit 2, nothing written); damage found mid-run is a
cache miss, said once, and never a failed unit.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import stat

import pytest

from helpers import run_quietly, settings_for
from madeval.cli.main import main
from madeval.llm.cache import ResponseCache
from madeval.simulator import AgentProfile, GoldIndex, SyntheticAgents
from madeval.simulator.http import SimulatorServer, run_in_thread

BROKEN_EMOJI = "\ud83d"  # the first half of a surrogate pair: what a gateway that cuts an emoji in half sends


def test_hostile_lone_surrogate_reply_is_cached_and_served_like_records(generated_tasks, tmp_path):
    agents = SyntheticAgents(GoldIndex.from_tasks(generated_tasks.values()), default=AgentProfile(0.6))

    def cut_emoji(request):
        text, prompt_tokens, completion_tokens = agents(request)
        return f"{text} {BROKEN_EMOJI}", prompt_tokens, completion_tokens

    cache = str(tmp_path / "cache.sqlite")
    with run_in_thread(SimulatorServer(cut_emoji)) as server:
        first, _ = run_quietly(settings_for(server.base_url, tmp_path, limit=3, cache=cache,
                                            output_path=str(tmp_path / "a")))
        second, _ = run_quietly(settings_for(server.base_url, tmp_path, limit=3, cache=cache,
                                             output_path=str(tmp_path / "b")))
    # Before: every unit failed, on every run, as sqlite3 refused the text.
    assert (first.outcome.failed, second.outcome.failed) == (0, 0) and first.outcome.finished == 3
    calls = second.board["cached_calls"]["calls"]
    assert second.board["cached_calls"] == {"cached": calls, "calls": calls}
    messages = [{record["unit"]["key"]: record["transcript"]["messages"]
                 for record in map(json.loads, open(result.folder / "records.jsonl", encoding="utf-8"))}
                for result in (first, second)]
    assert messages[0] == messages[1]  # the cached replies are the very texts, broken emoji and all
    assert BROKEN_EMOJI in json.dumps(messages[1], ensure_ascii=False)


def run_cli(capsys, sim, tmp_path, cache: str) -> tuple[int, str, str]:
    try:
        main(["--tasks", "arith_mc", "--limit", "3", "--base-url", sim.base_url, "--no-progress",
              "--cache", cache, "-o", str(tmp_path / "out")])
        code = 0
    except SystemExit as ended:
        code = ended.code
    said = capsys.readouterr()
    return code, said.out, said.err


def one_line_refusal(capsys, sim, tmp_path, cache: str, expected: str) -> None:
    code, _, err = run_cli(capsys, sim, tmp_path, cache)
    assert code == 2, err
    (line,) = err.strip().splitlines()
    assert line.startswith("madeval: error: ") and cache in line and expected in line, line
    assert not (tmp_path / "out").exists()


def test_hostile_cache_file_of_garbage_is_one_line(sim, tmp_path, capsys):
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(os.urandom(8192))
    one_line_refusal(capsys, sim, tmp_path, str(garbage), "is not a usable SQLite file (file is not a database): "
                     "delete it, or give --cache another file, or --cache off")


def test_hostile_truncated_cache_file_is_one_line(sim, tmp_path, capsys):
    path = tmp_path / "cut.sqlite"
    cache = ResponseCache(path)
    for n in range(300):
        cache.put(f"k{n}", "x" * 500, 1, 1)
    cache.close()
    path.write_bytes(path.read_bytes()[:50])  # cut inside the header
    one_line_refusal(capsys, sim, tmp_path, str(path), "is not a usable SQLite file")


def test_hostile_cache_path_that_is_a_folder_is_one_line(sim, tmp_path, capsys):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    one_line_refusal(capsys, sim, tmp_path, str(folder), "is a folder")


def read_only_folder() -> str:
    """A folder no one can write, root included: sysfs is mounted read-only in containers and on hosts."""
    try:
        os.mkdir("/sys/madeval-test")
    except OSError as error:
        if error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return "/sys"
    else:
        os.rmdir("/sys/madeval-test")
    pytest.skip("no read-only folder to test with")


def test_hostile_read_only_home_and_unwritable_cache_are_one_line(sim, tmp_path, capsys, monkeypatch):
    read_only = read_only_folder()
    one_line_refusal(capsys, sim, tmp_path, f"{read_only}/cache.sqlite", "cannot write response cache")
    monkeypatch.delenv("MADEVAL_CACHE_DIR")
    monkeypatch.setenv("HOME", read_only)  # a read-only home (containers, HPC) and --cache on
    code, _, err = run_cli(capsys, sim, tmp_path, "on")
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"cannot make the folder of response cache {read_only}/.cache/madeval/responses.sqlite" in err
    assert "set MADEVAL_CACHE_DIR to a writable folder, give --cache another file, or --cache off" in err
    assert not (tmp_path / "out").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes a read-only file")
def test_hostile_read_only_cache_file_is_one_line(sim, tmp_path, capsys):
    locked = tmp_path / "locked"
    locked.mkdir()
    ResponseCache(locked / "cache.sqlite").close()
    for name in os.listdir(locked):
        os.chmod(locked / name, stat.S_IRUSR)
    os.chmod(locked, stat.S_IRUSR | stat.S_IXUSR)
    try:
        one_line_refusal(capsys, sim, tmp_path, str(locked / "cache.sqlite"), "cannot write response cache")
    finally:
        os.chmod(locked, stat.S_IRWXU)


def test_crash_cache_damaged_deep_in_the_file_is_a_miss_said_once(sim, tmp_path, capsys):
    path = tmp_path / "cache.sqlite"
    first, _ = run_quietly(settings_for(sim.base_url, tmp_path, limit=30, cache=str(path),
                                        output_path=str(tmp_path / "a")))
    size = path.stat().st_size
    page = 4096
    assert size >= 8 * page, size  # enough pages to damage some and keep the first
    with open(path, "r+b") as handle:  # every page after the first three (schema, table and index roots)
        handle.seek(3 * page)
        handle.write(os.urandom(size - 3 * page))
    with pytest.raises(sqlite3.DatabaseError):  # what the cache reads is really damaged
        with sqlite3.connect(path) as db:
            db.execute("SELECT COUNT(text) FROM replies").fetchone()
    capsys.readouterr()
    second, _ = run_quietly(settings_for(sim.base_url, tmp_path, limit=30, cache=str(path),
                                         output_path=str(tmp_path / "b")))
    err = capsys.readouterr().err
    # Before: most units failed, on every re-run, advised to run the same command again.
    assert second.outcome.failed == 0 and second.outcome.finished == 30
    assert err.count(f"response cache {path}: cannot read it") == 1, err
    assert [r["score"] for r in second.rows] == [r["score"] for r in first.rows]  # asked again, same seeds
