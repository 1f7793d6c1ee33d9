"""The batch transport against two provider limits, on the simulator's Batches API (loopback only):
OpenAI's enqueued token limit, and output files too large to hold in memory."""

from __future__ import annotations

import json

import test_batch_transport as shared
from test_batch_transport import FAST, MEMORY, calls_of, records, settings

from helpers import run_quietly

batch_sim = shared.batch_sim  # the simulator fixture of the batch transport's tests

LIMIT_WARNING = "the provider's enqueued token limit was reached"


def answers(folder) -> list[tuple]:
    return sorted((row["unit"]["key"], row["prediction"], json.dumps(row["transcript"]["messages"]))
                  for row in records(folder))


def biggest_round(batch_sim, folder) -> int:
    """The prompt tokens of the largest batch of a run without a limit (its first round's, or later)."""
    with batch_sim() as server:
        run_quietly(settings(server.base_url, folder, [MEMORY], transport="batch", batch_options=FAST, limit=8))
        return server.stats.batches["most_tokens_enqueued"]


def test_batches_over_the_enqueued_token_limit_wait_for_this_runs_batches_and_all_finish(batch_sim, tmp_path,
                                                                                        capfd):
    """Batches of at most 2 lines, all ready at once, and a limit of about two of them: the others
    fail for the limit, wait for this run's batches to finish and are created again over the same
    request file (not uploaded again). The run ends with every debate as without the limit, no line
    answered twice, the limit never passed, and one warning line."""
    biggest_round(batch_sim, tmp_path / "free")
    capfd.readouterr()
    options = {**FAST, "max_lines": 2}
    with batch_sim(completion_delay_s=0.1) as server:
        run_quietly(settings(server.base_url, tmp_path / "free2", [MEMORY], transport="batch",
                             batch_options=options, limit=8))
        pairs = server.stats.batches["most_tokens_enqueued"]  # 4 batches of 2 first drafts out at once
    largest = max(call["prompt_tokens"] for row in records(tmp_path / "free") for call in row["transcript"]["calls"])
    limit = max(pairs // 2, largest)  # no request over the limit alone: that one would fail for good
    with batch_sim(completion_delay_s=0.1, enqueued_token_limit=limit) as server:
        result, _ = run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch",
                                         batch_options=options, limit=8))
        counts = server.stats.batches
    rows = records(tmp_path / "run")
    assert result.outcome.failed == 0 and len(rows) == 8
    assert counts["batches_over_token_limit"] > 0 and counts["most_tokens_enqueued"] <= limit
    assert counts["lines_submitted"] == counts["lines"] == calls_of(rows)  # nothing answered twice
    assert counts["files"] - counts["batches_completed"] == 0  # a refused batch is created again, not uploaded
    assert counts["batches_created"] == counts["batches_completed"] + counts["batches_over_token_limit"]
    assert answers(tmp_path / "run") == answers(tmp_path / "free")
    err = capfd.readouterr().err
    assert err.count(LIMIT_WARNING) == 1 and "Limit: " in err and " failed: " not in err


def test_a_batch_over_the_limit_alone_is_split_until_it_fits(batch_sim, tmp_path, capfd):
    """A limit of a third of the largest round: each such batch fails alone (nothing else out), is
    split in halves, and the halves fit (or wait for each other, or split again)."""
    unlimited = biggest_round(batch_sim, tmp_path / "free")
    capfd.readouterr()
    limit = unlimited // 3
    with batch_sim(enqueued_token_limit=limit) as server:
        result, _ = run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch",
                                         batch_options=FAST, limit=8))
        counts = server.stats.batches
        uploads = [f.content for f in server.batches.files.values() if f.purpose == "batch"]
    rows = records(tmp_path / "run")
    assert result.outcome.failed == 0 and counts["batches_over_token_limit"] > 0
    assert counts["most_tokens_enqueued"] <= limit
    assert all(content.endswith(b"\n") and b"\n\n" not in content for content in uploads)  # halves: one line each
    assert counts["lines_submitted"] == counts["lines"] == calls_of(rows)
    assert counts["files"] > max(row["chain"] for row in rows)  # halves are request files of their own
    assert answers(tmp_path / "run") == answers(tmp_path / "free")
    assert capfd.readouterr().err.count(LIMIT_WARNING) == 1


def test_a_single_request_over_the_limit_is_one_clear_error_not_retried(batch_sim, tmp_path, capfd):
    """A limit of 5 tokens (20 characters), below any prompt: the first round's batch is split down to
    single lines (log2 of its lines levels), each fails once for good with one error line."""
    with batch_sim(enqueued_token_limit=5) as server:
        result, _ = run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch",
                                         batch_options=FAST, limit=2, max_attempts=3, retry_delay=0.0))
        counts = server.stats.batches
    assert result.outcome.failed == 2 and counts["lines_submitted"] == 0
    # 2 first drafts: the pair, then each alone; the second half, refused while the first was still
    # out, waits for it and is tried once more alone
    assert counts["batches_over_token_limit"] == counts["batches_created"] in (3, 4)
    errors = [json.loads(line)["error"] for line in (tmp_path / "run" / "errors.jsonl").read_text().splitlines()]
    assert len(errors) == 2
    assert all("the request alone is over the provider's enqueued token limit (Enqueued token limit reached"
               in error and "Limit: 5 enqueued tokens" in error for error in errors), errors
    assert capfd.readouterr().err.count(LIMIT_WARNING) == 1


def test_output_files_are_streamed_to_the_run_folder_and_deleted_once_read(batch_sim, tmp_path, monkeypatch):
    """Every output file goes to a temporary file in the run folder (seen there while it is read),
    which is gone once its lines are handed out; one a killed process left is deleted at the start."""
    from madeval.llm.batch import lines, provider

    seen = []
    read = lines.read_file_outcomes

    def spy(path, *args):
        seen.append((path.parent, path.name, path.stat().st_size))
        return read(path, *args)

    monkeypatch.setattr(provider, "read_file_outcomes", spy)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / ".batch-download-killed.jsonl").write_bytes(b"x" * 100)  # a killed process's
    with batch_sim() as server:
        run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch", batch_options=FAST,
                             limit=4))
        counts = server.stats.batches
        sizes = sorted(len(f.content) for f in server.batches.files.values() if f.purpose == "batch_output")
    rows = records(tmp_path / "run")
    assert counts["lines_submitted"] == calls_of(rows) and len(seen) == counts["batches_completed"]
    assert {folder for folder, _, _ in seen} == {tmp_path / "run"}
    assert all(name.startswith(".batch-download-") for _, name, _ in seen)
    assert sorted(size for _, _, size in seen) == sizes  # each file whole, byte for byte
    assert not list((tmp_path / "run").glob(".batch-download-*"))


def test_an_output_file_over_the_disk_bound_is_one_line_and_nothing_is_paid_twice(batch_sim, tmp_path,
                                                                                monkeypatch, capfd):
    """With the file bound lowered to 1,000 bytes the first round's output (4 replies) is over it:
    one warning line, the batch's calls fail without a retry (sending them again would pay for the
    lines twice, and bring back as large a file), and no download is left in the run folder."""
    from madeval.llm.batch import provider

    monkeypatch.setattr(provider, "MAX_FILE_BYTES", 1000)
    with batch_sim() as server:
        result, _ = run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch",
                                         batch_options=FAST, limit=4, max_attempts=3, retry_delay=0.0))
        counts = server.stats.batches
    assert result.outcome.failed == 4 and counts["batches_created"] == 1 and counts["lines_submitted"] == 4
    warnings = [line for line in capfd.readouterr().err.splitlines() if "over the bound of 1,000" in line]
    assert len(warnings) == 1 and "not sent (and paid) again" in warnings[0]
    errors = [json.loads(line)["error"] for line in (tmp_path / "run" / "errors.jsonl").read_text().splitlines()]
    assert len(errors) == 4 and all("over the bound of 1,000" in error for error in errors)
    assert not list((tmp_path / "run").glob(".batch-download-*"))


def test_a_download_that_runs_past_its_bound_stops_there(batch_sim, tmp_path):
    """The bound also holds while streaming (an endpoint may give no size, or a false one): the
    download stops at it, whatever the file's length."""
    import asyncio

    import pytest

    from madeval.llm.batch.provider import FileTooLarge, ProviderBatches

    async def main(base_url):
        service = ProviderBatches(base_url, "-", 30.0, 1 << 20)
        try:
            file_id = await service.upload(b'{"custom_id": "a"}\n' * 1000, ["a"])
            target = tmp_path / "download.jsonl"
            await service._files.download(file_id, target, 100_000, 30.0)
            whole = target.stat().st_size
            with pytest.raises(FileTooLarge, match="is over 5,000 bytes"):
                await service._files.download(file_id, target, 5_000, 30.0)
            return whole
        finally:
            await service.close()

    with batch_sim() as server:
        assert asyncio.run(main(server.base_url)) == 19_000


def test_a_batch_that_meets_other_processes_batches_waits_for_room_instead_of_splitting(batch_sim):
    """Another process's batch of 990 tokens holds a limit of 1,000 for 1 s. This run's batch of 3
    short calls (its bytes, halved, well below 1,000 tokens) is refused with nothing of its own out:
    it is sent again every poll_s until the other batch finished, whole (no split, no upload again)."""
    import asyncio
    import time

    import openai
    from test_batch_simulator import request_file

    from madeval.llm.batch.settings import BatchSettings
    from madeval.llm.batch.transport import BatchTransport

    async def main(base_url):
        transport = BatchTransport(base_url, "-", 30.0)
        transport.configure_batches(BatchSettings(flush_s=0.02, poll_s=0.05), None)
        try:
            return await asyncio.gather(*(transport.chat("simulator", [
                {"role": "user", "content": f"Call {c}: A, B, C or D?"}], {}) for c in range(3)))
        finally:
            await transport.close()

    with batch_sim(completion_delay_s=1.0, enqueued_token_limit=1000) as server:
        server.behaviour.unknown = "answer"
        client = openai.OpenAI(base_url=server.base_url, api_key="-", max_retries=0)
        other = client.files.create(file=("other.jsonl", request_file(["x" * 3960])), purpose="batch")
        client.batches.create(input_file_id=other.id, endpoint="/v1/chat/completions", completion_window="24h")
        started = time.monotonic()
        replies = asyncio.run(main(server.base_url))
        took = time.monotonic() - started
        counts = server.stats.batches
    assert len(replies) == 3 and all(text for text, _, _ in replies)
    assert counts["batches_over_token_limit"] >= 2 and counts["files"] == 2  # the other's file and this run's one
    assert counts["lines_submitted"] == 1 + 3 and took >= 1.0
