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
