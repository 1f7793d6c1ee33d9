"""The batch transport end to end on the simulator's Batches API (loopback only).

A run's batch round trips must equal its longest chain of dependent calls (the largest ``chain``
of its records), never its number of calls; its results must equal the ordinary transport's.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
import time

import pytest

from helpers import madeval_in_process, run_quietly
from madeval.settings.config import DebateConfig, RunSettings
from madeval.simulator.agents import AgentProfile, SyntheticAgents
from madeval.simulator.batches import BatchOptions
from madeval.simulator.http import SimulatorServer, run_in_thread
from madeval.simulator.truth import GoldIndex

# flush_s is the quiet time in which the calls a finished batch released must all arrive (a round split
# in two would add a batch): kept at 50 ms. The provider's turnaround and the polls only need to be > 0.
FAST = {"flush_s": 0.05, "poll_s": 0.01}


@pytest.fixture
def batch_sim(generated_tasks):
    """A simulator whose batches finish 10 ms after they are created."""

    def start(**options):
        agents = SyntheticAgents(GoldIndex.from_tasks(generated_tasks.values()),
                                 default=AgentProfile(0.6, 0.3, 0.0, 0.0), seed=0)
        return run_in_thread(SimulatorServer(agents, batch_options=BatchOptions(**{"completion_delay_s": 0.01,
                                                                                   **options})))
    return start


def settings(base_url, folder, configurations, **run_options) -> RunSettings:
    options = {"tasks": ["arith_mc"], "limit": 6, "cache": "off", "concurrency": 256, **run_options}
    return RunSettings(base_url=base_url, configurations=configurations, output_path=str(folder), **options)


def records(folder) -> list[dict]:
    return [json.loads(line) for line in (folder / "records.jsonl").read_text().splitlines()]


def calls_of(rows) -> int:
    return sum(row["calls"] for row in rows)


MEMORY = DebateConfig(paradigm="memory", agents=3, max_turns=3, decider="simple_voting")
RELAY = DebateConfig(paradigm="relay", agents=3, max_turns=3, decider="simple_voting")


@pytest.mark.parametrize("config", [MEMORY, RELAY], ids=["memory", "relay"])
def test_round_trips_equal_the_longest_dependency_chain(batch_sim, tmp_path, config):
    with batch_sim() as server:
        run_quietly(settings(server.base_url, tmp_path / "run", [config], transport="batch", batch_options=FAST))
        rows = records(tmp_path / "run")
        created = server.stats.batches["batches_created"]
    longest = max(row["chain"] for row in rows)
    print(f"{config.paradigm}: {calls_of(rows)} calls, longest chain {longest}, batches {created}")
    assert created == longest
    assert calls_of(rows) > 2 * longest  # batching gathered calls: far fewer round trips than calls
    assert server.stats.batches["lines_submitted"] == calls_of(rows)  # no call sent twice


def test_by_default_a_batch_holds_a_whole_round_of_ready_calls(batch_sim, tmp_path, capfd):
    """Without --concurrency a batch run's slots are a batch's lines: 80 Memory debates (agents speak in
    turn) start with 80 ready calls, more than the 64 slots of the other transports, and the run still
    needs exactly its longest chain of batches, without a warning."""
    with batch_sim() as server:
        run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch", batch_options=FAST,
                             limit=80, concurrency=None))
        counts = server.stats.batches
    rows = records(tmp_path / "run")
    first = [json.loads(line) for line in (tmp_path / "run" / "batches.jsonl").read_text().splitlines()][0]
    assert len(rows) == 80 and len(first["custom_ids"]) == 80
    assert counts["batches_created"] == max(row["chain"] for row in rows) == 10
    assert counts["lines_submitted"] == calls_of(rows)
    assert "caps each batch" not in capfd.readouterr().err


def test_an_explicit_concurrency_caps_each_batch_and_says_so_once(batch_sim, tmp_path, capfd):
    with batch_sim() as server:
        run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch", batch_options=FAST,
                             limit=6, concurrency=8))
        created = server.stats.batches["batches_created"]
    entries = [json.loads(line) for line in (tmp_path / "run" / "batches.jsonl").read_text().splitlines()]
    assert max(len(entry["custom_ids"]) for entry in entries if "custom_ids" in entry) <= 8
    assert created > max(row["chain"] for row in records(tmp_path / "run"))
    warnings = [line for line in capfd.readouterr().err.splitlines() if "caps each batch" in line]
    assert warnings == ["madeval: warning: --concurrency 8 caps each batch at 8 lines (more batch round trips "
                        "than the debates' longest chain); leave it out to fill batches up to max_lines=50000"]


def test_the_response_cache_sends_no_test_call_through_a_batch(batch_sim, tmp_path):
    """With --cache on the client identifies each model by a test call; through the batch transport
    that call would be a batch of its own before the run: it is not made."""
    with batch_sim() as server:
        run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch", batch_options=FAST,
                             limit=2, cache=str(tmp_path / "cache.sqlite")))
        counts = server.stats.batches
    rows = records(tmp_path / "run")
    assert counts["batches_created"] == max(row["chain"] for row in rows)
    assert counts["lines_submitted"] == calls_of(rows)
    keyed = json.loads((tmp_path / "run" / "run.json").read_text())["cache"]["models"]
    assert [model["system_fingerprint"] for model in keyed] == [None]


def test_a_sweep_through_batches_equals_the_ordinary_transport(batch_sim, tmp_path):
    with batch_sim() as server:
        run_quietly(settings(server.base_url, tmp_path / "batch", [MEMORY, RELAY], transport="batch",
                             batch_options=FAST))
        run_quietly(settings(server.base_url, tmp_path / "plain", [MEMORY, RELAY]))
    def outcome(folder):
        return sorted((row["unit"]["key"], row["prediction"], row["turns"], row["calls"], row["tokens"]["total"],
                       json.dumps(row["transcript"]["messages"])) for row in records(folder))
    batched, plain = outcome(tmp_path / "batch"), outcome(tmp_path / "plain")
    assert len(batched) == 12 and batched == plain
    assert json.loads((tmp_path / "batch" / "run.json").read_text())["settings"]["transport"] == "batch"


def test_configurations_share_identical_calls_through_batches_one_line_per_distinct_request(batch_sim, tmp_path):
    deciders = [DebateConfig(paradigm="memory", agents=3, max_turns=3, decider=decider)
                for decider in ("simple_voting", "majority_consensus", "unanimity_consensus")]
    with batch_sim() as server:
        batched, _ = run_quietly(settings(server.base_url, tmp_path / "batch", deciders, transport="batch",
                                          batch_options=FAST))
        lines = server.stats.batches["lines_submitted"]
        plain, _ = run_quietly(settings(server.base_url, tmp_path / "plain", deciders))
    paid = batched.board["paid"]
    assert lines == paid["made"] == plain.board["paid"]["made"] < paid["calls"]
    assert paid["calls"] == sum(row["calls"] for row in records(tmp_path / "batch"))
    def outcome(folder):
        return sorted((row["unit"]["key"], row["prediction"], row["turns"], row["calls"], row["tokens"]["total"],
                       json.dumps(row["transcript"]["messages"])) for row in records(folder))
    assert outcome(tmp_path / "batch") == outcome(tmp_path / "plain")


def test_failed_and_expired_lines_are_retried_in_later_batches(batch_sim, tmp_path):
    with batch_sim(fail_rate=0.3, seed=7) as server:
        run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch", batch_options=FAST,
                             retry_delay=0.0))
        failed = server.stats.batches["lines_failed"]
        rows = records(tmp_path / "run")
    assert failed > 0 and len(rows) == 6
    errors = [error for row in rows for call in row["transcript"]["calls"] for error in call["errors"]]
    assert len(errors) == failed and set(errors) == {"batch line server_error"}
    with batch_sim(expire_after_lines=4) as server:
        run_quietly(settings(server.base_url, tmp_path / "expired", [MEMORY], transport="batch",
                             batch_options=FAST, retry_delay=0.0))
        assert server.stats.batches["batches_expired"] > 0
        rows = records(tmp_path / "expired")
    assert len(rows) == 6 and not any(row.get("error") for row in rows)
    assert {e for row in rows for c in row["transcript"]["calls"] for e in c["errors"]} == {"batch line batch_expired"}


def test_a_batch_the_provider_cancels_part_way_keeps_its_answers_and_retries_the_rest(batch_sim, tmp_path):
    with batch_sim(cancel_after_lines=4) as server:
        run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch", batch_options=FAST))
        counts = server.stats.batches
    rows = records(tmp_path / "run")
    errors = [error for row in rows for call in row["transcript"]["calls"] for error in call["errors"]]
    assert len(rows) == 6 and not any(row.get("error") for row in rows) and counts["batches_cancelled"] > 0
    assert set(errors) == {"line missing from its batch"}
    assert counts["lines"] == calls_of(rows)  # every line answered once: the 4 a cancelled batch reached were kept
    assert counts["lines_submitted"] == calls_of(rows) + len(errors)


def test_failed_lines_retry_in_the_next_batch_so_rounds_stay_together(batch_sim, tmp_path):
    """A failed line is sent again at once (the batch's turnaround is the backoff), with the calls its
    batch released: a debate needs one more round per failed line of its own, and never a batch of
    its own (a jittered retry delay sent retries, then their debates, in batches of their own)."""
    with batch_sim(fail_rate=0.2, seed=5) as server:
        run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch", batch_options=FAST,
                             limit=20))
        counts = server.stats.batches
    rows = records(tmp_path / "run")
    rounds = [row["chain"] + sum(len(call["errors"]) for call in row["transcript"]["calls"]) for row in rows]
    assert len(rows) == 20 and counts["lines_failed"] > 0
    assert max(row["chain"] for row in rows) < counts["batches_created"] <= max(rounds)


def test_a_refused_upload_is_retried_with_its_round_kept_together(batch_sim, tmp_path, capfd):
    with batch_sim(refuse_uploads=2, retry_after_s=0.05) as server:
        run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch", batch_options=FAST))
        counts = server.stats.batches
    rows = records(tmp_path / "run")
    assert counts["uploads_refused"] == 2 and counts["batches_created"] == max(row["chain"] for row in rows)
    assert counts["lines_submitted"] == calls_of(rows)
    assert not any(call["errors"] for row in rows for call in row["transcript"]["calls"])
    warnings = [line for line in capfd.readouterr().err.splitlines() if "refused" in line]
    assert warnings == [f"madeval: warning: batch upload refused (HTTP 429); trying again in 0.05 s ({n} of 4)"
                        for n in (1, 2)]
    entries = [json.loads(line) for line in (tmp_path / "run" / "batches.jsonl").read_text().splitlines()]
    assert [(e["refused"], e["retry_in_s"]) for e in entries if "refused" in e] == [("upload", 0.05)] * 2


def test_a_provider_outage_while_waiting_sends_nothing_twice(batch_sim, tmp_path, capfd):
    """Twelve looks at batches refused in a row (a 503 outage of the Batch API) are waited out: the
    batches are still running, and sending their lines again would pay for them twice."""
    with batch_sim(refuse_looks=12) as server:
        run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch", batch_options=FAST))
        counts = server.stats.batches
    rows = records(tmp_path / "run")
    assert counts["looks_refused"] == 12 and counts["lines_submitted"] == calls_of(rows)
    assert counts["batches_created"] == max(row["chain"] for row in rows)
    err = capfd.readouterr().err
    assert err.count("its status cannot be read (HTTP 503); still waiting") == 1
    assert err.count("its status can be read again") == 1


def test_uploads_refused_for_good_fail_the_debates_within_the_retry_bound(batch_sim, tmp_path):
    with batch_sim(refuse_uploads=1000, retry_after_s=0) as server:
        result, _ = run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch",
                                         batch_options=FAST, max_attempts=2, limit=2))
        counts = server.stats.batches
    assert (result.outcome.failed, result.outcome.unfixable) == (2, 0)
    assert counts["uploads_refused"] == 2 * 4 and counts["files"] == counts["batches_created"] == 0
    errors = [json.loads(line)["error"] for line in (tmp_path / "run" / "errors.jsonl").read_text().splitlines()]
    assert all("batch not submitted: HTTP 429" in error for error in errors)


@pytest.mark.parametrize("lost_batch_line", [False, True], ids=["journaled", "killed-before-journaling-the-batch"])
def test_a_run_killed_between_submit_and_collect_resumes_without_submitting_again(batch_sim, tmp_path,
                                                                                  lost_batch_line):
    """The first batch is journaled, then the run is killed while waiting: the resumed run collects
    that batch, so every call is sent exactly once and the round trips stay the longest chain.
    ``lost_batch_line``: the journal keeps only the upload (as if killed between creating the batch
    and journaling it): the resumed run finds the batch by its input file."""
    folder = tmp_path / "run"
    with batch_sim(completion_delay_s=60) as server:
        command = [sys.executable, "-m", "madeval", "--tasks", "arith_mc", "--limit", "6", "--cache", "off",
                   "--base-url", server.base_url, "--paradigm", "memory", "--max-turns", "3",
                   "--decider", "simple_voting", "--concurrency", "256", "--transport", "batch",
                   "--batch-options", "flush_s=0.05,poll_s=0.02", "--output-path", str(folder)]
        journal = kill_once_a_batch_is_journaled(command, folder)
        if lost_batch_line:
            journal.write_text(journal.read_text().splitlines(keepends=True)[0])
        assert server.stats.batches["batches_created"] == 1 and server.stats.batches["lines"] == 0
        first_round = server.stats.batches["lines_submitted"]
        assert first_round == 6  # the six first drafts, not yet answered
        server.batches.options.completion_delay_s = 0.01  # the provider gets on with it
        run_quietly(settings(server.base_url, folder, [MEMORY], transport="batch", batch_options=FAST))
        rows = records(folder)
        counts = server.stats.batches
    assert len(rows) == 6
    assert counts["lines_submitted"] == calls_of(rows)  # the killed run's six lines were not sent again
    assert counts["batches_created"] == max(row["chain"] for row in rows)  # its batch was round one
    entries = [json.loads(line) for line in (folder / "batches.jsonl").read_text().splitlines()]
    assert sum("batch" in entry for entry in entries) == counts["batches_created"]  # one found is journaled too


def test_an_endpoint_without_the_batch_api_is_one_line_before_anything_is_written(batch_sim, tmp_path):
    with batch_sim() as server:
        server.batches = None  # a server with chat completions only
        done = madeval_in_process("--tasks", "arith_mc", "--limit", "2", "--cache", "off", "--base-url",
                                  server.base_url, "--transport", "batch", "--output-path", tmp_path / "run")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "does not serve the Batch API" in done.stderr
    assert not (tmp_path / "run").exists()


def test_a_failed_batch_is_one_warning_per_batch_and_its_calls_fail_within_the_retry_bound(batch_sim, tmp_path,
                                                                                         capfd):
    with batch_sim(fail_batches=True) as server:
        result, _ = run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch",
                                         batch_options=FAST, max_attempts=2, retry_delay=0.0, limit=2))
        created = server.stats.batches["batches_created"]
    assert result.outcome.failed == 2 and created == 2  # one batch of both first drafts, then one retry
    warnings = [line for line in capfd.readouterr().err.splitlines() if "failed: The batch failed" in line]
    assert len(warnings) == created
    errors = [json.loads(line)["error"] for line in (tmp_path / "run" / "errors.jsonl").read_text().splitlines()]
    assert all("batch failed: The batch failed (simulated)." in error for error in errors)


def test_a_request_file_never_holds_more_lines_than_allowed(batch_sim, tmp_path):
    with batch_sim() as server:
        run_quietly(settings(server.base_url, tmp_path / "run", [MEMORY], transport="batch",
                             batch_options={**FAST, "max_lines": 4}))
        counts = server.stats.batches
    rows = records(tmp_path / "run")
    entries = [json.loads(entry) for entry in (tmp_path / "run" / "batches.jsonl").read_text().splitlines()]
    sizes = [len(entry["custom_ids"]) for entry in entries if "custom_ids" in entry]
    assert max(sizes) == 4 and sum(sizes) == counts["lines_submitted"] == calls_of(rows)
    assert len(sizes) == counts["batches_created"] > max(row["chain"] for row in rows)


def answer_folder(folder, server, stop: threading.Event, answered: list) -> None:
    """A stand-in for a cluster loop running ``vllm run-batch -i X.jsonl -o X.output.jsonl.part`` and
    renaming the output when done: answers each request file with the simulator's chat logic."""
    while not stop.is_set():
        for request in sorted(folder.glob("*.jsonl")):
            if request.name.endswith(".output.jsonl"):
                continue
            output = request.with_name(request.name.removesuffix(".jsonl") + ".output.jsonl")
            if not output.exists():
                partial = output.with_suffix(".part")
                partial.write_bytes(server.batches.answer_file(request.read_bytes()))
                partial.rename(output)
                answered.append(request.name)
        time.sleep(0.02)


def test_file_exchange_serves_a_run_with_no_server(generated_tasks, tmp_path):
    exchange = tmp_path / "exchange"
    exchange.mkdir()
    agents = SyntheticAgents(GoldIndex.from_tasks(generated_tasks.values()),
                             default=AgentProfile(0.6, 0.3, 0.0, 0.0), seed=0)
    engine = SimulatorServer(agents)  # never started: only its chat logic answers the files
    stop, answered = threading.Event(), []
    worker = threading.Thread(target=answer_folder, args=(exchange, engine, stop, answered), daemon=True)
    worker.start()
    try:
        run_quietly(settings(exchange.as_uri(), tmp_path / "run", [MEMORY], transport="batch", model="simulator",
                             batch_options=FAST))
    finally:
        stop.set()
        worker.join()
    rows = records(tmp_path / "run")
    assert len(rows) == 6 and len(answered) == max(row["chain"] for row in rows)
    assert engine.stats.batches["lines"] == calls_of(rows)
    with batch_sim_plain(generated_tasks) as server:  # the same run over HTTP gives the same debates
        run_quietly(settings(server.base_url, tmp_path / "plain", [MEMORY]))
    def outcome(folder):
        return sorted((row["unit"]["item"], row["prediction"], json.dumps(row["transcript"]["messages"]))
                      for row in records(folder))
    assert outcome(tmp_path / "run") == outcome(tmp_path / "plain")


def batch_sim_plain(generated_tasks):
    agents = SyntheticAgents(GoldIndex.from_tasks(generated_tasks.values()),
                             default=AgentProfile(0.6, 0.3, 0.0, 0.0), seed=0)
    return run_in_thread(SimulatorServer(agents))


def test_a_missing_exchange_folder_is_one_line(tmp_path):
    done = madeval_in_process("--tasks", "arith_mc", "--limit", "2", "--model", "simulator",
                              "--base-url", (tmp_path / "nowhere").as_uri(), "--transport", "batch",
                              "--output-path", tmp_path / "run")
    assert done.returncode == 2 and "not a writable folder" in done.stderr
    assert not (tmp_path / "run").exists()


def test_file_exchange_resumes_a_killed_run_without_writing_a_request_twice(generated_tasks, tmp_path):
    exchange, folder = tmp_path / "exchange", tmp_path / "run"
    exchange.mkdir()
    command = [sys.executable, "-m", "madeval", "--tasks", "arith_mc", "--limit", "6", "--cache", "off",
               "--base-url", exchange.as_uri(), "--model", "simulator", "--paradigm", "memory", "--max-turns", "3",
               "--decider", "simple_voting", "--concurrency", "256", "--transport", "batch",
               "--batch-options", "flush_s=0.05,poll_s=0.02", "--output-path", str(folder)]
    kill_once_a_batch_is_journaled(command, folder)
    assert len(list(exchange.glob("*.jsonl"))) == 1  # the first round, written, never answered
    agents = SyntheticAgents(GoldIndex.from_tasks(generated_tasks.values()),
                             default=AgentProfile(0.6, 0.3, 0.0, 0.0), seed=0)
    engine = SimulatorServer(agents)
    stop, answered = threading.Event(), []
    worker = threading.Thread(target=answer_folder, args=(exchange, engine, stop, answered), daemon=True)
    worker.start()
    try:
        run_quietly(settings(exchange.as_uri(), folder, [MEMORY], transport="batch", model="simulator",
                             batch_options=FAST))
    finally:
        stop.set()
        worker.join()
    rows = records(folder)
    requests = [path for path in exchange.glob("*.jsonl") if not path.name.endswith(".output.jsonl")]
    assert len(rows) == 6 and len(requests) == len(answered) == max(row["chain"] for row in rows)
    assert sum(path.read_bytes().count(b"\n") for path in requests) == calls_of(rows)


def test_file_exchange_gives_up_after_the_window_and_a_resume_waits_again(generated_tasks, tmp_path, capfd):
    """No engine answers: after the window the round's calls fail with one warning line and the run
    ends, its request file journaled with its window. A resume asking a 24 h window still waits the
    journaled 0.3 s for that file (and writes nothing); one with an engine answering finishes, every
    request written once."""
    exchange, folder = tmp_path / "exchange", tmp_path / "run"
    exchange.mkdir()
    def run_with(window):
        return run_quietly(settings(exchange.as_uri(), folder, [MEMORY], transport="batch", model="simulator",
                                    batch_options={**FAST, "window": window}, limit=3))[0]
    started = time.monotonic()
    result = run_with("0.3s")
    assert 0.3 <= time.monotonic() - started < 30
    assert (result.outcome.finished, result.outcome.failed, result.outcome.unfixable) == (0, 3, 0)
    warnings = [line for line in capfd.readouterr().err.splitlines() if "warning" in line and "window" in line]
    assert len(warnings) == 1 and "no output file" in warnings[0] and "within its window of 0.3s" in warnings[0]
    errors = [json.loads(line)["error"] for line in (folder / "errors.jsonl").read_text().splitlines()]
    assert len(errors) == 3 and all("within its window of 0.3s" in error for error in errors)
    entries = [json.loads(line) for line in (folder / "batches.jsonl").read_text().splitlines()]
    assert [entry.get("window") for entry in entries] == [None, "0.3s"]  # the upload, then the batch
    def requests():
        return sorted(p for p in exchange.glob("*.jsonl") if not p.name.endswith(".output.jsonl"))
    assert len(requests()) == 1

    started = time.monotonic()
    result = run_with("24h")  # still nobody answers: the journaled window holds for the earlier file
    assert time.monotonic() - started < 30 and result.outcome.failed == 3 and len(requests()) == 1

    engine = SimulatorServer(SyntheticAgents(GoldIndex.from_tasks(generated_tasks.values()),
                                             default=AgentProfile(0.6, 0.3, 0.0, 0.0), seed=0))
    stop, answered = threading.Event(), []
    worker = threading.Thread(target=answer_folder, args=(exchange, engine, stop, answered), daemon=True)
    worker.start()
    try:
        result = run_with("24h")
    finally:
        stop.set()
        worker.join()
    rows = records(folder)
    assert result.outcome.failed == 0 and len(rows) == 3
    assert len(requests()) == len(answered) == max(row["chain"] for row in rows)
    assert sum(path.read_bytes().count(b"\n") for path in requests()) == calls_of(rows)


@contextlib.asynccontextmanager
async def quick_transport(base_url, folder=None, kind=None):
    """A batch transport on ``base_url`` (``kind``: a test-only subclass of it) that flushes and polls
    every 20 ms, its journal in ``folder`` (None: no journal); closed on leaving."""
    from madeval.llm.batch.settings import BatchSettings
    from madeval.llm.batch.transport import BatchTransport

    transport = (kind or BatchTransport)(base_url, "-", 30.0)
    transport.configure_batches(BatchSettings(flush_s=0.02, poll_s=0.02), folder)
    try:
        yield transport
    finally:
        await transport.close()


def kill_once_a_batch_is_journaled(command: list[str], folder):
    """Start ``command`` (a madeval run into ``folder``), SIGKILL it once its journal holds a
    submitted batch (within 60 s), and return the journal's path."""
    process = subprocess.Popen(command, env={**os.environ, "MADEVAL_LOAD_PLUGINS": ""},
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    journal = folder / "batches.jsonl"
    deadline = time.monotonic() + 60
    while not (journal.exists() and '"batch"' in journal.read_text()) and time.monotonic() < deadline:
        time.sleep(0.05)
    process.kill()
    process.wait()
    return journal


def test_a_resumed_transport_keeps_no_reply_of_an_earlier_batch_once_handed_out(batch_sim, tmp_path):
    """A resumed run's calls are answered from the earlier process's batches; each reply is taken out
    of its collected batch as it is handed over, so none stays for the rest of the run."""
    import asyncio

    def messages(round_, call):
        return [{"role": "user", "content": f"Round {round_}, call {call}: A, B, C or D?"}]

    async def rounds(base_url):
        async with quick_transport(base_url, tmp_path) as transport:
            replies = [await asyncio.gather(*(transport.chat("simulator", messages(r, c), {}) for c in range(5)))
                       for r in range(3)]
            return replies, transport.batches_created, [task.result() for task in transport._earlier.values()]

    with batch_sim(completion_delay_s=0.0) as server:
        server.behaviour.unknown = "answer"
        first, created, _ = asyncio.run(rounds(server.base_url))
        again, created_again, kept = asyncio.run(rounds(server.base_url))
        counts = server.stats.batches
    assert created == 3 and created_again == 0 and counts["lines_submitted"] == 15
    assert [[tuple(reply) for reply in round_] for round_ in again] == [[tuple(r) for r in round_] for round_ in first]
    assert len(kept) == 3 and kept == [{}, {}, {}]


def test_a_bug_in_one_batch_fails_only_that_batchs_calls(batch_sim):
    """A bug while one batch is awaited (injected by a test-only subclass, after the batch was created
    on the simulator) fails that batch's calls with one FatalError; the calls of another batch, in
    flight at the same time, get their replies. Before, every waiting call of the run failed."""
    import asyncio

    from madeval.llm.batch.transport import BatchTransport
    from madeval.llm.wire import FatalError

    class FirstBatchBreaks(BatchTransport):
        async def _wait(self, batch_id, window, custom_ids):
            if self.batches_created == 1:  # only the first batch, while the second is submitted
                await asyncio.sleep(0.3)
                raise KeyError("injected bug")
            return await super()._wait(batch_id, window, custom_ids)

    def ask(group, call):
        return [{"role": "user", "content": f"Group {group}, call {call}: A, B, C or D?"}]

    async def main(base_url):
        async with quick_transport(base_url, kind=FirstBatchBreaks) as transport:
            first = asyncio.gather(*(transport.chat("simulator", ask(1, c), {}) for c in range(3)),
                                   return_exceptions=True)
            await asyncio.sleep(0.15)  # the first batch is created and waited for
            second = asyncio.gather(*(transport.chat("simulator", ask(2, c), {}) for c in range(3)),
                                    return_exceptions=True)
            return await first, await second, transport.batches_created

    with batch_sim(completion_delay_s=0.6) as server:  # the second batch is still out when the bug hits
        server.behaviour.unknown = "answer"
        first, second, created = asyncio.run(main(server.base_url))
    assert created == 2
    assert all(isinstance(outcome, FatalError) and "KeyError: 'injected bug'" in str(outcome) for outcome in first)
    assert not any(isinstance(outcome, Exception) for outcome in second), second  # before: all FatalError
    assert all(text for text, _, _ in second)


def test_a_bug_while_gathering_a_batch_fails_its_pending_calls_instead_of_leaving_them_waiting(batch_sim):
    """A bug inside the quiet-time flusher (injected by a test-only subclass whose flush breaks) fails
    the calls it was gathering with one FatalError. Before, they waited forever (here: past 5 s)."""
    import asyncio

    from madeval.llm.batch.transport import BatchTransport
    from madeval.llm.wire import FatalError

    class FlushBreaks(BatchTransport):
        def _flush(self):
            raise KeyError("injected bug")

    async def main(base_url):
        async with quick_transport(base_url, kind=FlushBreaks) as transport:
            calls = (transport.chat("simulator", [{"role": "user", "content": f"Call {c}: A or B?"}], {})
                     for c in range(3))
            outcomes = await asyncio.wait_for(asyncio.gather(*calls, return_exceptions=True), 5.0)
            return outcomes, transport._pending, transport._flusher, transport.batches_created

    with batch_sim() as server:
        outcomes, pending, flusher, created = asyncio.run(main(server.base_url))
    assert len(outcomes) == 3
    assert all(isinstance(outcome, FatalError) and "KeyError: 'injected bug'" in str(outcome)
               for outcome in outcomes), outcomes
    assert pending == [] and flusher is None and created == 0


CR = DebateConfig(paradigm="collective_refinement", agents=3, max_turns=3, decider="simple_voting")
DEBATE = DebateConfig(paradigm="debate", agents=3, max_turns=3, decider="judge", decider_args={"after_turns": 2})


@pytest.mark.parametrize(("config", "least", "most"),
                         [(MEMORY, 10, 12), (RELAY, 10, 12), (CR, 4, 6), (DEBATE, 11, 17)],
                         ids=["memory", "relay", "collective_refinement", "debate"])
def test_a_batch_run_says_its_round_trips_and_window_without_a_probe(batch_sim, tmp_path, capfd, config, least,
                                                                     most):
    """Instead of a time from a probe call (meaningless per call, and a batch of its own), a batch run
    says the fewest and the most round trips it needs, worked out by hand: Memory and Relay 3 agents
    in turn x 3 turns + the ballots = 10, and a tie at the vote after turn 3 of 3 re-asks each ballot
    twice: 12; Collective Refinement 1 step x 3 turns + the ballots = 4 (at most 6); Debate (the draft
    + 2 rounds x 2 debaters = 5 steps a turn) x 2 turns + the judge's call = 11, at most 3 turns and
    two verdicts = 17. The simulator's batches are exactly the fewest: its debates all end at their
    first vote or verdict. Before: only the fewest was said."""
    with batch_sim() as server:
        run_quietly(settings(server.base_url, tmp_path / "run", [config], transport="batch",
                             batch_options={**FAST, "window": "2h"}))
        created, chats = server.stats.batches["batches_created"], server.stats.requests
    (line,) = [line for line in capfd.readouterr().err.splitlines() if line.startswith("madeval: this batch run")]
    assert f"in {least} to {most} batch round trips one after another" in line, line
    assert f"window of 2h (--batch-options window): {2 * least} to {2 * most} hours if each takes" in line, line
    assert created == least
    assert chats == 0  # no probe call: every call went through a batch


def test_the_batch_plan_of_a_consensus_debate_gives_its_true_bounds_in_days(batch_sim, tmp_path, capfd):
    """Memory, 3 agents, majority consensus, 10 turns (issue 33): a draft and one agreement can end a
    debate (2 calls one after another), three agents disagreeing for 10 turns make 30. Before, the
    plan said "at least 1 batch round trips ... 24.0 hours" while the records' chains ran 2 to 30.
    Every record's chain lies within the bounds said, and the batches never exceed the most."""
    consensus = DebateConfig(paradigm="memory", agents=3, max_turns=10, decider="majority_consensus")
    with batch_sim() as server:
        run_quietly(settings(server.base_url, tmp_path / "run", [consensus], transport="batch", batch_options=FAST,
                             limit=12))
        created = server.stats.batches["batches_created"]
    (line,) = [line for line in capfd.readouterr().err.splitlines() if line.startswith("madeval: this batch run")]
    assert "in 2 to 30 batch round trips one after another (the chain of dependent calls of a debate;" in line, line
    assert "window of 24h (--batch-options window): 2 to 30 days if each takes its whole window" in line, line
    chains = [row["chain"] for row in records(tmp_path / "run")]
    assert len(chains) == 12 and all(2 <= chain <= 30 for chain in chains)
    assert created == max(chains) <= 30
