"""One list says which ``/models`` fields tell a model apart, read by the response cache's keys, the
cache's warning and a run folder's fingerprint (madeval.llm.model_identity).

Before, the three disagreed: the cache keyed on vLLM's ``permission`` (a fresh random id and the
time of the request in every answer, so a vLLM model's replies were never reused by another run),
its warning counted ``parent`` as saying nothing about the model, and a resume looked only at
``root``, ``parent`` and ``max_model_len`` (a simulator restarted with other agents under the same
name was resumed into the old folder).
"""

from __future__ import annotations

import itertools
import socket
import uuid
from contextlib import contextmanager

import pytest

from helpers import cache_key_record, run_quietly, settings_for
from madeval.errors import UsageError
from madeval.llm.model_identity import served_identity
from madeval.records.folder import read_records
from madeval.simulator import AgentProfile, GoldIndex, SyntheticAgents, simulate
from madeval.simulator.http import SimulatorServer, run_in_thread

REQUEST_TIME = itertools.count(1_764_000_000)


def vllm_entry(model: str, parent: str | None) -> dict:
    """A ``/models`` entry as vLLM 0.6-0.10 writes it (``ModelCard``): ``created`` and each
    permission card's ``id`` and ``created`` are made afresh for every request."""
    now = next(REQUEST_TIME)
    return {"id": model, "object": "model", "created": now, "owned_by": "vllm", "root": f"/adapters/{model}",
            "parent": parent, "max_model_len": 4096,
            "permission": [{"id": f"modelperm-{uuid.uuid4().hex}", "object": "model_permission", "created": now,
                            "allow_create_engine": False, "allow_sampling": True, "organization": "*",
                            "group": None, "is_blocking": False}]}


class VLLMLike(SimulatorServer):
    """The simulator answering /models as vLLM serving a LoRA adapter over ``parent``, and
    sending no system_fingerprint (vLLM sends none)."""

    parent = "base-a"

    def model_entries(self):
        return [vllm_entry(model, self.parent) for model in (self.served or sorted(self._models))]

    def _fingerprint(self, model, key):
        return {}


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def vllm_like(tasks, accuracy: float, parent: str, port: int):
    server_class = type("Served", (VLLMLike,), {"parent": parent})
    agents = SyntheticAgents(GoldIndex.from_tasks(tasks), default=AgentProfile(accuracy))
    with run_in_thread(server_class(agents, port=port)) as server:
        yield server


def test_request_time_and_permission_cards_do_not_identify_a_model_but_the_parent_does():
    a, b = vllm_entry("adapter", "base-a"), vllm_entry("adapter", "base-a")
    assert a != b  # two readings of the same model differ in created and the permission card
    assert served_identity(a) == served_identity(b) == {"root": "/adapters/adapter", "parent": "base-a",
                                                       "max_model_len": 4096}
    assert served_identity(vllm_entry("adapter", "base-b")) != served_identity(a)
    assert served_identity({"id": "m", "object": "model", "created": 1, "owned_by": "openai"}) is None
    assert served_identity("not an entry") is None


def test_a_vllm_model_is_reused_from_the_cache_and_another_parent_is_not(generated_tasks, tmp_path, capsys):
    port, tasks, cache = free_port(), generated_tasks.values(), str(tmp_path / "cache.sqlite")
    runs = []
    for accuracy, parent, folder in ((0.1, "base-a", "a"), (0.1, "base-a", "b"), (0.9, "base-b", "c")):
        with vllm_like(tasks, accuracy, parent, port) as server:
            result, _ = run_quietly(settings_for(server.base_url, tmp_path, tasks=["arith_mc"], limit=10,
                                                 output_path=str(tmp_path / folder), cache=cache))
            runs.append((result, server.stats.requests))
    said = capsys.readouterr().err
    # Before: 0 of b's calls came from the cache (each /models answer had a new permission id).
    (a, _), (b, b_requests), (c, _) = runs
    calls = b.board["cached_calls"]["calls"]
    assert calls > 0 and b.board["cached_calls"] == {"cached": calls, "calls": calls}
    assert b_requests == 1  # the probe call
    predictions = [{r["unit"]["key"]: r["prediction"] for r in read_records(run.folder)} for run in (a, b)]
    assert predictions[0] == predictions[1]
    # The same adapter name over another base model is another model: no reply of base-a's.
    assert c.board["cached_calls"]["cached"] == 0
    assert "its /models entry (max_model_len, parent, root)" in said and "cannot tell" not in said


def test_a_model_reported_only_by_its_parent_is_told_apart(generated_tasks, tmp_path, capsys):
    """Before, ``parent`` counted as saying nothing: the run warned that the cache could not tell."""

    class ParentOnly(VLLMLike):
        def model_entries(self):
            return [{"id": "simulator", "object": "model", "created": 0, "owned_by": "vllm", "parent": "base-a"}]

    agents = SyntheticAgents(GoldIndex.from_tasks(generated_tasks.values()), default=AgentProfile(0.6))
    with run_in_thread(ParentOnly(agents)) as server:
        record = cache_key_record(server.base_url, tmp_path / "c.sqlite")
    assert record["models"][0]["told_apart"] is True
    assert record["models"][0]["models_entry"] == {"parent": "base-a"}
    assert "its /models entry (parent)" in capsys.readouterr().err


def test_resume_refuses_a_simulator_restarted_with_other_agents_under_the_same_name(generated_tasks, tmp_path):
    """The simulator's /models ``fingerprint`` (a digest of its agents' profile) is what it reports
    about its model: a folder of the 0.1 agents is not resumed against 0.9 agents on the same URL.
    Before, the resume ran the missing units against the new agents and mixed both in one row."""
    port = free_port()
    with simulate(tasks=generated_tasks.values(), accuracy=0.1, port=port) as sim:
        settings = settings_for(sim.base_url, tmp_path, limit=4, cache="off")
        first, _ = run_quietly(settings)
    records = first.folder / "records.jsonl"
    lines = records.read_text().splitlines(keepends=True)
    records.write_text("".join(lines[:2]))  # interrupted after two of the four units
    with simulate(tasks=generated_tasks.values(), accuracy=0.9, port=port):
        with pytest.raises(UsageError) as refused:
            run_quietly(settings)
    assert "model 'simulator' (fingerprint 'fp_sim_" in str(refused.value)
    assert len(list(read_records(first.folder))) == 2
    with simulate(tasks=generated_tasks.values(), accuracy=0.1, port=port):  # the same agents again: resumed
        again, _ = run_quietly(settings)
    assert (again.outcome.finished, again.outcome.skipped) == (2, 2)


def test_hostile_huge_models_entry_enters_keys_and_run_json_as_its_digest(generated_tasks, tmp_path):
    """A 2 MB ``/models`` entry (issue 33, item 13). Before: re-serialised into every call's cache key
    and written into run.json twice (4 MB here; 25 MB for a 12 MB entry). Now its digest, computed once:
    run.json stays small, a second run is answered from the cache, and an entry that differs by one
    character is another model."""
    import hashlib
    import json

    from madeval.llm.model_identity import MAX_IDENTITY_BYTES

    port, cache = free_port(), str(tmp_path / "cache.sqlite")

    def huge(blob: str):
        class Huge(VLLMLike):
            def model_entries(self):
                return [{"id": model, "object": "model", "created": 0, "owned_by": "vllm", "meta": {"blob": blob}}
                        for model in (self.served or sorted(self._models))]
        return Huge

    runs = []
    for blob, folder in (("x" * 2_000_000, "a"), ("x" * 2_000_000, "b"), ("y" + "x" * 1_999_999, "c")):
        agents = SyntheticAgents(GoldIndex.from_tasks(generated_tasks.values()), default=AgentProfile(0.6))
        with run_in_thread(huge(blob)(agents, port=port)) as server:
            result, _ = run_quietly(settings_for(server.base_url, tmp_path, tasks=["arith_mc"], limit=3,
                                                 output_path=str(tmp_path / folder), cache=cache))
            runs.append(result)
    run_file = runs[0].folder / "run.json"
    assert run_file.stat().st_size < 64 * 1024  # before: over 4 MB
    described = json.loads(run_file.read_text())
    identity = json.dumps({"meta": {"blob": "x" * 2_000_000}}, sort_keys=True, ensure_ascii=False).encode()
    digest = {"sha256": hashlib.sha256(identity).hexdigest(), "bytes": len(identity)}
    assert len(identity) > MAX_IDENTITY_BYTES
    assert described["cache"]["models"][0]["models_entry"] == digest
    assert described["cache"]["models"][0]["told_apart"] is True
    (model,) = described["models"]
    assert {key: model[key] for key in ("sha256", "bytes")} == digest
    first, second, changed = (run.board["cached_calls"] for run in runs)
    assert first["cached"] == 0 and second["cached"] == second["calls"] > 0  # the same entry: the same keys
    assert changed["cached"] == 0  # one character of 2 MB differs: another model
