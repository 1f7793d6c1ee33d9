"""Every writer of a folder goes through one safe way to open, write and replace a file (issue 33,
item 9): the viewer, the export, the batch journal and the file exchange. Links planted at the
names they used to write (``debates.html.tmp``, ``.NAME.partial.eval``), at ``batches.jsonl`` or at
an exchange output file are never written, appended or read through. Real links in a real folder:
what another local user could plant in /tmp."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
import tracemalloc

import pytest

from helpers import madeval_in_process, run_quietly, settings_for
from madeval.errors import UsageError
from madeval.llm.batch.journal import JOURNAL_NAME, BatchJournal

SECRET = b"a file of the user's that madeval must never touch\n"


@pytest.fixture
def finished_run(sim, tmp_path):
    result, _ = run_quietly(settings_for(sim.base_url, tmp_path, limit=3, cache="off"))
    return result.folder


def madeval(*args) -> subprocess.CompletedProcess:
    return madeval_in_process(*args)


def test_hostile_links_at_the_viewer_s_names_are_replaced_never_written_through(finished_run, victim):
    """Before: the page was written through ``debates.html.tmp`` into the victim, and the link
    itself was renamed to ``debates.html``."""
    for name in ("debates.html.tmp", "debates.html.debates.tmp", "debates.html"):
        os.symlink(victim, finished_run / name)
    done = madeval("view", finished_run)
    assert done.returncode == 0, done.stderr
    assert victim.read_bytes() == SECRET
    page = finished_run / "debates.html"
    assert not page.is_symlink() and page.is_file()
    assert "<!DOCTYPE html>" in page.read_text(encoding="utf-8")[:200]
    leftovers = sorted(p.name for p in finished_run.iterdir() if p.name.startswith(".debates.html"))
    assert leftovers == []  # the page's own temporary file is gone; the planted links are left as they were
    assert (finished_run / "debates.html.tmp").is_symlink()


def test_hostile_link_at_the_export_s_old_temporary_name_is_never_written_through(finished_run, victim, tmp_path):
    pytest.importorskip("inspect_ai.log")
    output = tmp_path / "out" / "run.eval"
    output.parent.mkdir()
    os.symlink(victim, output.parent / ".run.partial.eval")
    os.symlink(victim, output)
    done = madeval("export", finished_run, "--format", "inspect", "--output", output)
    assert done.returncode == 0, done.stderr
    assert victim.read_bytes() == SECRET
    assert not output.is_symlink() and output.stat().st_size > 0
    assert sorted(p.name for p in output.parent.iterdir()) == [".run.partial.eval", "run.eval"]


def test_hostile_folder_holding_only_a_batches_jsonl_link_is_no_run_folder(sim, tmp_path, victim):
    """Before: accepted as a run folder (and the journal was read and appended through the link)."""
    folder = tmp_path / "run"
    folder.mkdir()
    os.symlink(victim, folder / JOURNAL_NAME)
    with pytest.raises(UsageError, match=f"holds {JOURNAL_NAME} but no run.json: it is not a madeval run folder"):
        run_quietly(settings_for(sim.base_url, tmp_path, limit=2, cache="off"))
    assert victim.read_bytes() == SECRET
    assert sorted(p.name for p in folder.iterdir()) == [JOURNAL_NAME]


def test_hostile_batches_jsonl_link_in_a_run_folder_is_refused_on_resume(finished_run, sim, tmp_path, victim):
    os.symlink(victim, finished_run / JOURNAL_NAME)
    with pytest.raises(UsageError, match=f"{JOURNAL_NAME} is a symbolic link"):
        run_quietly(settings_for(sim.base_url, tmp_path, limit=3, cache="off"))
    assert victim.read_bytes() == SECRET


def test_the_batch_journal_never_reads_or_appends_through_a_link(tmp_path, victim):
    victim.write_text(json.dumps({"input_file": "file-x", "custom_ids": ["a"]}) + "\n")
    before = victim.read_bytes()
    os.symlink(victim, tmp_path / JOURNAL_NAME)
    with pytest.raises(UsageError, match=f"{JOURNAL_NAME} is a symbolic link"):
        BatchJournal(tmp_path)
    (tmp_path / JOURNAL_NAME).unlink()
    journal = BatchJournal(tmp_path)  # no journal yet: nothing earlier
    assert journal.earlier == {}
    os.symlink(victim, tmp_path / JOURNAL_NAME)  # planted after it opened the folder
    with pytest.raises(UsageError, match="is a symbolic link"):
        journal.uploaded("file-y", ["b"])
    assert victim.read_bytes() == before
    (tmp_path / JOURNAL_NAME).unlink()
    journal.uploaded("file-y", ["b"])
    assert BatchJournal(tmp_path).earlier["b"].input_file == "file-y"


def test_hostile_exchange_output_linked_to_dev_zero_is_refused_in_bounded_memory(tmp_path):
    """Before: read whole (2.4 GB in seconds). Here in a process limited to 1 GB of address space,
    which the old reading would have ended with a MemoryError traceback."""
    script = textwrap.dedent(f"""
        import asyncio, os, resource
        from pathlib import Path
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        from madeval.errors import UsageError
        from madeval.llm.batch.exchange import FileExchange

        folder = Path({str(tmp_path)!r})
        exchange = FileExchange(folder, 1 << 20)

        async def main():
            name = await exchange.upload(b'{{"custom_id": "a"}}\\n', ["a"])
            os.symlink("/dev/zero", folder / (name + ".output.jsonl"))
            await exchange.collect(name)

        try:
            asyncio.run(main())
        except UsageError as error:
            print("refused:", error)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "refused:" in done.stdout and "output.jsonl is a symbolic link; madeval does not follow links" \
        in done.stdout, done.stdout
    assert "remove it from the exchange folder" in done.stdout


def test_an_exchange_output_file_is_read_a_line_at_a_time(tmp_path):
    """A 40 MB output line (over the 1 MiB reply bound) is never held whole: the call fails as a
    reply over the bound, the other line is read. Before: the file was read whole (40 MB and more)."""
    from madeval.llm.batch.exchange import FileExchange
    from madeval.llm.batch.settings import BatchSettings

    exchange = FileExchange(tmp_path, 1 << 20)
    exchange.settings = BatchSettings(poll_s=0.01)
    small = {"custom_id": "b", "response": {"status_code": 200, "body": {
        "choices": [{"message": {"role": "assistant", "content": "bee"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3}}}}

    async def main():
        name = await exchange.upload(b"two request lines\n" * 2, ["a", "b"])
        with open(tmp_path / f"{name}.output.jsonl", "wb") as out:
            out.write(b'{"custom_id": "a", "response": {"status_code": 200, "body": "' + b"x" * (40 << 20) + b'"}}\n')
            out.write(json.dumps(small).encode() + b"\n")
        tracemalloc.start()
        try:
            outcomes = await exchange.collect(name)
            return outcomes, tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    outcomes, peak = asyncio.run(main())
    assert sorted(outcomes) == ["a", "b"]
    assert isinstance(outcomes["a"], Exception) and "reply over 1 MiB" in str(outcomes["a"])
    assert outcomes["b"][0] == "bee"
    assert peak < 8 << 20, peak  # a line's bound (1 MiB + 64 KiB) and the reading, never the 40 MB line
