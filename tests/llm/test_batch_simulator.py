"""The simulator's Files and Batches API, read through the official openai client (loopback only)."""

from __future__ import annotations

import json
import time

import openai
import pytest

from madeval.simulator.batches import BatchOptions
from madeval.simulator.http import Faults, SimulatorServer, run_in_thread


def echo(request: dict) -> tuple[str, int, int]:
    """Reply with the last message reversed; tokens are the characters in and out."""
    text = request["messages"][-1]["content"]
    return text[::-1], len(text), len(text)


def request_file(contents: list[str]) -> bytes:
    lines = [{"custom_id": f"c{i}", "method": "POST", "url": "/v1/chat/completions",
              "body": {"model": "m", "messages": [{"role": "user", "content": text}]}}
             for i, text in enumerate(contents)]
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


def finished(client: openai.OpenAI, batch_id: str) -> openai.types.Batch:
    for _ in range(200):
        batch = client.batches.retrieve(batch_id)
        if batch.status in ("completed", "expired", "failed", "cancelled"):
            return batch
        time.sleep(0.01)
    raise AssertionError("the batch never finished")


def lines_of(client: openai.OpenAI, file_id: str | None) -> dict[str, dict]:
    if file_id is None:
        return {}
    text = client.files.content(file_id).text
    return {entry["custom_id"]: entry for entry in map(json.loads, text.splitlines())}


def serve(**options):
    return run_in_thread(SimulatorServer(echo, batch_options=BatchOptions(**options)))


def test_a_batch_answers_every_line_with_the_chat_logic():
    with serve(completion_delay_s=0.05) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="-", max_retries=0)
        upload = client.files.create(file=("in.jsonl", request_file(["abc", "hello"])), purpose="batch")
        assert upload.purpose == "batch" and upload.bytes == len(request_file(["abc", "hello"]))
        batch = client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                      completion_window="24h")
        assert batch.status == "in_progress" and batch.output_file_id is None
        batch = finished(client, batch.id)
        assert batch.status == "completed"
        assert (batch.request_counts.total, batch.request_counts.completed, batch.request_counts.failed) == (2, 2, 0)
        out = lines_of(client, batch.output_file_id)
        assert batch.error_file_id is None
        assert out["c0"]["response"]["status_code"] == 200 and out["c0"]["error"] is None
        assert out["c0"]["response"]["body"]["choices"][0]["message"]["content"] == "cba"
        assert out["c1"]["response"]["body"]["choices"][0]["message"]["content"] == "olleh"
        assert out["c1"]["response"]["body"]["usage"]["prompt_tokens"] == 5
        stats = json.loads(_stats(server))
        assert stats["batches"]["batches_created"] == 1 and stats["batches"]["lines"] == 2


def _stats(server) -> str:
    import urllib.request

    with urllib.request.urlopen(server.base_url.removesuffix("/v1") + "/stats") as reply:
        return reply.read().decode()


def test_failed_lines_go_to_the_error_file():
    with serve(fail_rate=1.0) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="-", max_retries=0)
        upload = client.files.create(file=("in.jsonl", request_file(["a", "b", "c"])), purpose="batch")
        batch = finished(client, client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                                       completion_window="24h").id)
        assert batch.status == "completed" and batch.output_file_id is None
        errors = lines_of(client, batch.error_file_id)
        assert sorted(errors) == ["c0", "c1", "c2"]
        assert {e["error"]["code"] for e in errors.values()} == {"server_error"}
        assert all(e["response"] is None for e in errors.values())


def test_an_expired_batch_keeps_its_partial_output():
    with serve(expire_after_lines=2) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="-", max_retries=0)
        upload = client.files.create(file=("in.jsonl", request_file(["a", "b", "c", "d"])), purpose="batch")
        batch = finished(client, client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                                       completion_window="24h").id)
        assert batch.status == "expired"
        assert sorted(lines_of(client, batch.output_file_id)) == ["c0", "c1"]
        errors = lines_of(client, batch.error_file_id)
        assert sorted(errors) == ["c2", "c3"]
        assert {e["error"]["code"] for e in errors.values()} == {"batch_expired"}


def test_a_fault_answer_is_an_error_line_with_its_status():
    server = SimulatorServer(echo, faults=Faults(server_error=1.0))
    with run_in_thread(server):
        client = openai.OpenAI(base_url=server.base_url, api_key="-", max_retries=0)
        upload = client.files.create(file=("in.jsonl", request_file(["a"])), purpose="batch")
        batch = finished(client, client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                                       completion_window="24h").id)
        entry = lines_of(client, batch.error_file_id)["c0"]
        assert entry["response"]["status_code"] == 500 and "error" in entry["response"]["body"]


def test_cancel_and_bad_input():
    with serve(completion_delay_s=30) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="-", max_retries=0)
        upload = client.files.create(file=("in.jsonl", request_file(["a"])), purpose="batch")
        batch = client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                      completion_window="24h")
        assert client.batches.cancel(batch.id).status == "cancelled"
        assert client.batches.retrieve(batch.id).output_file_id is None
        repeated = client.files.create(file=("in.jsonl", request_file(["a"]) * 2), purpose="batch")
        refused = client.batches.create(input_file_id=repeated.id, endpoint="/v1/chat/completions",
                                        completion_window="24h")
        assert refused.status == "failed" and "repeated" in refused.errors.data[0].message
        with pytest.raises(openai.BadRequestError):
            client.files.create(file=("in.jsonl", b"{}"), purpose="fine-tune")
        with pytest.raises(openai.NotFoundError):
            client.batches.retrieve("batch_nope")


@pytest.fixture
def simulator_cli():
    """Start ``madeval simulator`` with some flags as its own process on a loopback port; its base URL."""
    import subprocess
    import sys
    import urllib.request

    from madeval.llm.embedded import free_loopback_port

    started = []

    def start(*flags: str) -> str:
        port = free_loopback_port()
        process = subprocess.Popen([sys.executable, "-m", "madeval", "simulator", "--port", str(port), "--unknown",
                                    "answer", *flags], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started.append(process)
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        for _ in range(600):
            try:
                with opener.open(f"http://127.0.0.1:{port}/health", timeout=1):
                    return f"http://127.0.0.1:{port}/v1"
            except OSError:
                assert process.poll() is None, "the simulator exited"
                time.sleep(0.05)
        raise AssertionError("the simulator did not start")

    yield start
    for process in started:
        process.terminate()
        process.wait(timeout=30)


def test_the_simulator_cli_sets_the_batch_api_behaviour(simulator_cli):
    base_url = simulator_cli("--batch-delay", "0.5", "--batch-fail-rate", "0.5", "--batch-expire-after", "8",
                             "--batch-refuse-uploads", "1", "--seed", "3")
    client = openai.OpenAI(base_url=base_url, api_key="-", max_retries=0)
    contents = [f"question {n}" for n in range(10)]
    with pytest.raises(openai.RateLimitError) as refused:
        client.files.create(file=("in.jsonl", request_file(contents)), purpose="batch")
    assert refused.value.response.headers["retry-after"] == "1"
    upload = client.files.create(file=("in.jsonl", request_file(contents)), purpose="batch")
    created = time.monotonic()
    batch = client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h")
    assert batch.status == "in_progress"
    batch = finished(client, batch.id)
    assert time.monotonic() - created >= 0.5
    assert batch.status == "expired" and batch.request_counts.total == 10
    output, errors = lines_of(client, batch.output_file_id), lines_of(client, batch.error_file_id)
    codes = [entry["error"]["code"] for entry in errors.values()]
    assert codes.count("batch_expired") == 2 and sorted(errors)[-2:] == ["c8", "c9"]
    failed = codes.count("server_error")
    assert 0 < failed < 8 and len(output) + failed == 8  # the seeded draw failed some of the 8 lines reached


@pytest.mark.parametrize("flags, status", [(["--batch-cancel-after", "2"], "cancelled"), (["--batch-fail"], "failed")])
def test_the_simulator_cli_cancels_or_fails_batches(simulator_cli, flags, status):
    client = openai.OpenAI(base_url=simulator_cli(*flags), api_key="-", max_retries=0)
    upload = client.files.create(file=("in.jsonl", request_file(["a", "b", "c"])), purpose="batch")
    batch = finished(client, client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions",
                                                   completion_window="24h").id)
    assert batch.status == status and batch.error_file_id is None
    assert sorted(lines_of(client, batch.output_file_id)) == (["c0", "c1"] if status == "cancelled" else [])


@pytest.mark.parametrize("args", [["--batch-fail-rate", "1.5"], ["--batch-delay", "-1"],
                                  ["--batch-expire-after", "-2"], ["--batch-refuse-uploads", "-1"],
                                  ["--batch-refuse-looks", "-3"], ["--batch-enqueued-token-limit", "0"],
                                  ["--batch-fail", "--hostile", "trickle"], ["--batch-bad-downloads", "-1"],
                                  ["--batch-lost-creations", "-1"], ["--batch-refuse-lists", "-2"],
                                  ["--batch-refuse-creations", "-1"],
                                  ["--batch-unknown-lines", "-1"], ["--batch-bad-download", "lost"]])
def test_the_simulator_cli_refuses_a_bad_batch_flag_in_one_line(args, capsys):
    from madeval.cli.main import main

    with pytest.raises(SystemExit) as exit_:
        main(["simulator", "--port", "0", *args])
    error = capsys.readouterr().err
    assert exit_.value.code == 2 and error.count("\n") == 1 and (args[0] in error or "--hostile" in error), error


def submit(client: openai.OpenAI, contents: list[str]) -> openai.types.Batch:
    upload = client.files.create(file=("in.jsonl", request_file(contents)), purpose="batch")
    return client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h")


def submit_answered_500(client: openai.OpenAI, contents: list[str]) -> openai.types.FileObject:
    """Upload ``contents`` and ask for a batch of them, a creation the simulator must answer with HTTP 500;
    the upload."""
    upload = client.files.create(file=("in.jsonl", request_file(contents)), purpose="batch")
    with pytest.raises(openai.InternalServerError):
        client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h")
    return upload


def test_a_batch_over_the_enqueued_token_limit_fails_with_openais_error_shape():
    """Limit 10 tokens, a token per 4 characters: a batch of 8 (two 16-character lines) is enqueued;
    a second of 4 tokens would make 12 and fails as a whole, read through the client's own types
    (``openai.types.Batch``: errors.data[0].code and message); once the first finished, it fits."""
    with serve(completion_delay_s=0.3, enqueued_token_limit=10) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="-", max_retries=0)
        first = submit(client, ["x" * 16, "y" * 16])
        assert first.status == "in_progress"
        refused = submit(client, ["z" * 16])
        assert refused.status == "failed" and refused.output_file_id is None and refused.error_file_id is None
        error = refused.errors.data[0]
        assert error.code == "token_limit_exceeded"
        assert error.message.startswith("Enqueued token limit reached for m in organization ")
        assert "Limit: 10 enqueued tokens" in error.message
        assert finished(client, first.id).status == "completed"
        assert finished(client, submit(client, ["z" * 16]).id).status == "completed"
        # a batch alone over the limit fails even with nothing enqueued
        assert submit(client, ["w" * 44]).errors.data[0].code == "token_limit_exceeded"
        counts = server.stats.batches
    assert counts["batches_over_token_limit"] == 2 and counts["most_tokens_enqueued"] == 8


def test_the_simulator_cli_sets_the_enqueued_token_limit(simulator_cli):
    client = openai.OpenAI(base_url=simulator_cli("--batch-delay", "5", "--batch-enqueued-token-limit", "5"),
                           api_key="-", max_retries=0)
    assert submit(client, ["a" * 20]).status == "in_progress"  # 5 tokens: at the limit, not over
    assert submit(client, ["b" * 4]).errors.data[0].code == "token_limit_exceeded"


@pytest.mark.parametrize("kind", ["refused", "not-json", "cut-short"])
def test_the_first_downloads_of_an_output_file_can_be_spoilt(kind):
    """Two spoilt downloads of a finished batch's output file, then the file as it is: refused with a
    500, an HTML page with status 200, or its first half of bytes (a line cut in the middle)."""
    with serve(bad_downloads=2, bad_download=kind) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="-", max_retries=0)
        batch = finished(client, submit(client, ["abc", "hello", "third"]).id)
        whole = server.batches.files[batch.output_file_id].content
        assert whole.count(b"\n") == 3
        for _ in range(2):
            if kind == "refused":
                with pytest.raises(openai.InternalServerError):
                    client.files.content(batch.output_file_id)
            else:
                spoilt = client.files.content(batch.output_file_id).content
                assert spoilt == (b"<html><body><h1>502 Bad Gateway</h1></body></html>\n" if kind == "not-json"
                                  else whole[: len(whole) // 2])
        assert client.files.content(batch.output_file_id).content == whole
        assert client.files.content(batch.input_file_id).content == request_file(["abc", "hello", "third"])
        assert server.stats.batches["downloads_spoilt"] == 2


def test_a_lost_creation_makes_the_batch_and_answers_500():
    """The creation fails for the client, yet the batch exists, is listed over its file and is billed."""
    with serve(lost_creations=1) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="-", max_retries=0)
        upload = submit_answered_500(client, ["a", "b"])
        (made,) = client.batches.list().data
        assert made.input_file_id == upload.id and finished(client, made.id).status == "completed"
        counts = server.stats.batches
    assert counts["creations_lost"] == 1 and counts["batches_created"] == 1 and counts["lines_submitted"] == 2


def test_a_refused_creation_makes_nothing():
    with serve(refuse_creations=1) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="-", max_retries=0)
        submit_answered_500(client, ["a", "b"])
        assert client.batches.list().data == []
        assert submit(client, ["a"]).status == "in_progress"
        counts = server.stats.batches
    assert counts["creations_refused"] == 1 and counts["batches_created"] == 1 and counts["lines_submitted"] == 1


def test_the_list_of_batches_pages_and_can_be_refused():
    """45 batches listed 20 at a time, newest first, through the client's own paging (``after``); the
    first list asked is refused with a 503."""
    with serve(refuse_lists=1, completion_delay_s=30) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="-", max_retries=0)
        made = [submit(client, [f"q{n}"]).id for n in range(45)]
        with pytest.raises(openai.InternalServerError):
            client.batches.list()
        pages = client.batches.list(limit=20)
        assert [len(pages.data), pages.has_more] == [20, True]
        assert [batch.id for batch in pages] == made[::-1]  # the client asks the next pages
        assert server.stats.batches["lists_refused"] == 1


def test_unknown_lines_are_added_to_each_output_file():
    with serve(unknown_lines=2) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="-", max_retries=0)
        batch = finished(client, submit(client, ["a", "b"]).id)
        assert sorted(lines_of(client, batch.output_file_id)) == ["c0", "c1", "never-sent-0", "never-sent-1"]
        assert (batch.request_counts.total, batch.request_counts.completed) == (2, 2)


def test_the_simulator_cli_sets_the_pay_twice_faults(simulator_cli):
    client = openai.OpenAI(base_url=simulator_cli("--batch-bad-downloads", "1", "--batch-bad-download", "not-json",
                                                  "--batch-lost-creations", "1", "--batch-refuse-lists", "1",
                                                  "--batch-unknown-lines", "1"), api_key="-", max_retries=0)
    submit_answered_500(client, ["a"])
    with pytest.raises(openai.InternalServerError):
        client.batches.list()
    batch = finished(client, client.batches.list().data[0].id)
    assert client.files.content(batch.output_file_id).content.startswith(b"<html>")
    assert sorted(lines_of(client, batch.output_file_id)) == ["c0", "never-sent-0"]
