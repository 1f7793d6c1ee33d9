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
             "say (1 lines not JSON or cut short)", "cut-short": "of the 4 lines its request_counts say"}[kind]
    assert len(said) == 2 and cause in said[0], said
    assert "reading its files again for up to its window of 24h (its lines are paid for: they are not sent again)" \
        in said[0]
    assert said[1].endswith("its files can be read whole again")


def test_an_output_file_that_never_reads_whole_fails_its_calls_in_one_line_without_sending_them(batch_sim, tmp_path,
                                                                                                capfd):
    """An output file never served whole: after the batch's window (1 s here) of reading it again,
    its calls fail with one error each (not retried, though 3 attempts are allowed) and one warning
    line; the 4 billed lines are never sent again."""
    with batch_sim(bad_downloads=10_000, bad_download="not-json") as server:
        result, _ = run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch",
                                         batch_options={**FAST, "window": "1s"}, limit=4, max_attempts=3))
        counts = server.stats.batches
    assert result.outcome.failed == 4 and counts["batches_created"] == 1 and counts["lines_submitted"] == 4
    said = warnings(capfd.readouterr().err)
    assert len(said) == 2 and "reading its files again for up to its window of 1s" in said[0], said
    assert said[1].endswith("its files yield 0 of the 4 lines its request_counts say (1 lines not JSON or cut short), "
                            "still after its window of 1s; its lines are paid for: not sent again (4 calls fail)")
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
            return await service.read(batch, ["a", "b"], "1s")
        finally:
            await service.close()

    with batch_sim() as server:
        spoilt = asyncio.run(read(server, [answer], b'{"custom_id": "b", "respo'))
        short = asyncio.run(read(server, [answer]))
    assert spoilt["a"][0] == "Final Solution: A" and isinstance(spoilt["b"], FatalError)
    assert "its files hold 1 lines that are not JSON or cut short, and 1 of its 2 lines" in str(spoilt["b"])
    assert short == {"a": ("Final Solution: A", 1, 1)}
    said = warnings(capfd.readouterr().err)
    assert len(said) == 2 and said[1].endswith("(1 calls fail)"), said
