"""Never paid twice (issue 33): a provider's faults after a batch was made must not send its lines again.

Each case runs on the simulator's Batches API given the fault, and counts the lines billed: every
line of every batch created (``lines_submitted``), whether the client learnt of the batch or not.
"""

from __future__ import annotations

import json

import pytest
import test_batch_transport as shared
from test_batch_transport import FAST, MEMORY, calls_of, records, settings

from helpers import run_quietly

batch_sim = shared.batch_sim  # the simulator fixture of the batch transport's tests


def warnings(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("madeval: warning: batch ")]


@pytest.mark.parametrize("kind", ["refused", "not-json", "cut-short"])
def test_an_output_file_that_cannot_be_used_is_read_again_not_its_lines_sent_again(batch_sim, tmp_path, capfd, kind):
    """The first round's output file is refused 10 times (more than the 8 downloads tried before), or
    served 10 times as a proxy's HTML page or cut in half: the batch's lines are paid for, so the
    file is downloaded again until it reads whole, with one warning line for the streak and one when
    it reads again. Before, every line of the batch was sent (and paid) again, and the HTML page or
    the cut file gave no warning at all."""
    with batch_sim(bad_downloads=10, bad_download=kind) as server:
        result, _ = run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch",
                                         batch_options=FAST, limit=4))
        counts = server.stats.batches
    rows = records(tmp_path / "run")
    assert counts["downloads_spoilt"] == 10 and result.outcome.failed == 0 and len(rows) == 4
    assert counts["lines_submitted"] == calls_of(rows)  # before: the first round's 4 lines billed twice or more
    assert counts["batches_created"] == max(row["chain"] for row in rows)
    assert not any(call["errors"] for row in rows for call in row["transcript"]["calls"])
    said = warnings(capfd.readouterr().err)
    cause = {"refused": "its output file file-sim-", "not-json": "its files yield 0 of the 4 lines its request_counts "
             "say (1 line not JSON or cut short)", "cut-short": "of the 4 lines its request_counts say"}[kind]
    assert len(said) == 2 and cause in said[0], said
    assert "reading its files again for up to its window of 24h (its lines are paid for: they are not sent again)" \
        in said[0]
    assert said[1].endswith("its files can be read whole again")


def test_an_output_file_that_never_reads_whole_fails_its_calls_in_one_line_without_sending_them(batch_sim, tmp_path,
                                                                                                capfd):
    """An output file never served whole: after the batch's window (0.3 s here) of reading it again,
    its calls fail with one error each (not retried, though 3 attempts are allowed) and one warning
    line; the 4 billed lines are never sent again."""
    with batch_sim(bad_downloads=10_000, bad_download="not-json") as server:
        result, _ = run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch",
                                         batch_options={**FAST, "window": "0.3s"}, limit=4, max_attempts=3))
        counts = server.stats.batches
    assert result.outcome.failed == 4 and counts["batches_created"] == 1 and counts["lines_submitted"] == 4
    said = warnings(capfd.readouterr().err)
    assert len(said) == 2 and "reading its files again for up to its window of 0.3s" in said[0], said
    assert said[1].endswith("its files yield 0 of the 4 lines its request_counts say (1 line not JSON or cut short), "
                            "still after its window of 0.3s; its lines are paid for: not sent again (4 calls fail)")
    errors = [json.loads(line)["error"] for line in (tmp_path / "run" / "errors.jsonl").read_text().splitlines()]
    assert len(errors) == 4 and all("its lines are paid for: not sent again" in error for error in errors)


def test_output_lines_naming_a_custom_id_never_sent_are_said_once_a_batch(batch_sim, tmp_path, capfd):
    """Every output file holds 3 lines for requests never sent: they are ignored, and each batch says
    so in one warning line. Before, nothing was said (the README promised it)."""
    with batch_sim(unknown_lines=3) as server:
        result, _ = run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch",
                                         batch_options=FAST, limit=4))
        counts = server.stats.batches
    rows = records(tmp_path / "run")
    assert result.outcome.failed == 0 and counts["lines_submitted"] == calls_of(rows)
    said = warnings(capfd.readouterr().err)
    assert len(said) == counts["batches_created"] > 1
    assert all(line.endswith(": output lines that 3 name a custom_id it was not sent (ignored)") for line in said)


def test_without_request_counts_a_file_with_lines_not_json_is_a_fault_and_a_short_clean_one_is_not(batch_sim, capfd):
    """A provider that gives no request_counts (a proxy): files missing lines while holding lines
    that are not JSON are read again for the window, then those calls fail; files that are merely
    short (a cancelled batch: the lines it never reached) are read as they are, the missing lines
    left to be sent again."""
    import asyncio
    from types import SimpleNamespace

    from madeval.llm.batch.provider import ProviderBatches
    from madeval.llm.batch.settings import BatchSettings
    from madeval.llm.wire import FatalError

    answer = {"id": "r", "custom_id": "a", "response": {"status_code": 200, "body": {
        "choices": [{"message": {"content": "Final Solution: A"}}], "usage": {"prompt_tokens": 1,
                                                                            "completion_tokens": 1}}}}

    async def read(server, entries, extra=b""):
        output = server.batches._store("out.jsonl", entries)
        server.batches.files[output].content += extra
        batch = SimpleNamespace(id="batch_x", status="completed", request_counts=None, error_file_id=None,
                                output_file_id=output)
        service = ProviderBatches(server.base_url, "-", 30.0, 1 << 20)
        service.settings = BatchSettings(poll_s=0.05)
        try:
            return await service.read(batch, ["a", "b"], "0.3s")
        finally:
            await service.close()

    with batch_sim() as server:
        spoilt = asyncio.run(read(server, [answer], b'{"custom_id": "b", "respo'))
        short = asyncio.run(read(server, [answer]))
    assert spoilt["a"][0] == "Final Solution: A" and isinstance(spoilt["b"], FatalError)
    assert "its files hold 1 line not JSON or cut short, and 1 of its 2 lines" in str(spoilt["b"])
    assert short == {"a": ("Final Solution: A", 1, 1)}
    said = warnings(capfd.readouterr().err)
    assert len(said) == 2 and said[1].endswith("(1 calls fail)"), said


def test_a_creation_that_made_the_batch_but_answered_500_is_found_not_made_again(batch_sim, tmp_path, capfd):
    """The first round's creation makes its batch and answers HTTP 500: the file's batches are looked
    up (the first two lists refused, asked again) and that batch is waited for. Before, the batch was
    created again over the same file: the round's 6 lines billed twice."""
    with batch_sim(lost_creations=1, refuse_lists=2) as server:
        result, _ = run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch",
                                         batch_options=FAST))
        counts = server.stats.batches
    rows = records(tmp_path / "run")
    assert result.outcome.failed == 0 and counts["creations_lost"] == 1 and counts["lists_refused"] == 2
    assert counts["lines_submitted"] == calls_of(rows)  # before: + 6
    assert counts["batches_created"] == max(row["chain"] for row in rows)
    said = [line for line in capfd.readouterr().err.splitlines() if "warning" in line and "caps each" not in line]
    assert len(said) == 4, said
    # no Retry-After: 1 s, at most poll_s (FAST: 0.01 s)
    assert "batch creation failed (HTTP 500); its file's batches are looked up in 0.01 s before it is created again " \
        "(1 of 4)" in said[0]
    assert "cannot be listed (HTTP 503); asking again for up to its window of 24h" in said[1]
    assert said[2].endswith("can be listed again") and "was made over file" in said[3]
    entries = [json.loads(line) for line in (tmp_path / "run" / "batches.jsonl").read_text().splitlines()]
    assert [entry["refused"] for entry in entries if "refused" in entry] == ["creation"]
    assert sum("batch" in entry for entry in entries) == counts["batches_created"]


def test_a_creation_that_made_nothing_is_made_again_once_the_list_proves_it(batch_sim, tmp_path):
    """Two creations answered HTTP 500 that made nothing: the list proves it each time (it reaches
    batches older than the file, or its end), so the batch is created again, and billed once."""
    with batch_sim(refuse_creations=2) as server:
        result, _ = run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch",
                                         batch_options=FAST))
        counts = server.stats.batches
    rows = records(tmp_path / "run")
    assert result.outcome.failed == 0 and counts["creations_refused"] == 2
    assert counts["lines_submitted"] == calls_of(rows)
    assert counts["batches_created"] == max(row["chain"] for row in rows)


def test_a_lost_creation_whose_batches_cannot_be_listed_fails_its_calls_without_sending_them(batch_sim, tmp_path,
                                                                                           capfd):
    """The lost creation's file cannot be looked up (every list refused) for its window of 0.3 s: its
    calls fail with one line each (not retried, though 3 attempts are allowed), never sent again;
    the batch made stays the only one billed."""
    with batch_sim(lost_creations=1, refuse_lists=10**6) as server:
        result, _ = run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch",
                                         batch_options={**FAST, "window": "0.3s"}, limit=2, max_attempts=3))
        counts = server.stats.batches
    assert result.outcome.failed == 2 and counts["batches_created"] == 1 and counts["lines_submitted"] == 2
    errors = [json.loads(line)["error"] for line in (tmp_path / "run" / "errors.jsonl").read_text().splitlines()]
    assert len(errors) == 2 and all("its batches could not be listed for its window of 0.3s (HTTP 503); its lines "
                                    "are not sent again" in error for error in errors), errors


def test_a_resume_whose_lookup_fails_asks_again_instead_of_sending_the_lines_again(batch_sim, tmp_path, capfd):
    """Killed between creating the first batch and journaling it (the journal keeps the upload): the
    resumed run looks the file's batches up, the first three lists refused. Before, one failed list
    meant "never submitted" and the first round's 6 lines were sent (and paid) again. A resume that
    cannot list within the window fails those calls instead, and the next one finds the batch."""
    folder = tmp_path / "run"
    with batch_sim(completion_delay_s=60) as server:
        command = ["--tasks", "arith_mc", "--limit", "6", "--cache", "off", "--base-url", server.base_url,
                   "--paradigm", "memory", "--max-turns", "3", "--decider", "simple_voting", "--concurrency", "256",
                   "--transport", "batch", "--batch-options", "flush_s=0.05,poll_s=0.02", "--output-path",
                   str(folder)]
        journal = shared.kill_once_a_batch_is_journaled([shared.sys.executable, "-m", "madeval", *command], folder)
        journal.write_text(journal.read_text().splitlines(keepends=True)[0])  # the upload only
        assert server.stats.batches["lines_submitted"] == 6
        server.batches.options.completion_delay_s = 0.01
        server.batches.options.refuse_lists = 10**6
        capfd.readouterr()
        result, _ = run_quietly(settings(server.base_url, folder, [MEMORY], transport="batch",
                                         batch_options={**FAST, "window": "0.3s"}))
        assert result.outcome.failed == 6 and server.stats.batches["lines_submitted"] == 6
        assert "its lines are not sent again" in capfd.readouterr().err
        server.batches.options.refuse_lists = server.stats.batches["lists_refused"] + 3
        result, _ = run_quietly(settings(server.base_url, folder, [MEMORY], transport="batch", batch_options=FAST))
        counts = server.stats.batches
    rows = records(folder)
    assert result.outcome.failed == 0 and len(rows) == 6
    assert counts["lines_submitted"] == calls_of(rows)  # the killed run's six lines were not sent again
    assert counts["batches_created"] == max(row["chain"] for row in rows)
    said = capfd.readouterr().err
    assert said.count("cannot be listed (HTTP 503); asking again") == 1 and said.count("can be listed again") == 1
