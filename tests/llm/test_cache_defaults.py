"""The response cache is opt-in, keyed on what the server reports about the model, reported where
results are read, and never makes a cached call look free (issue 24, item 1).

The scenario of the issue: a simulator at accuracy 0.1 on port P, a run; the simulator restarted
on the same port at accuracy 0.9, a run into a new folder. By default the second run scores the
new server's answers; with the cache on too, because what the server reports about its model
changed; and a cache that cannot tell (a server that reports nothing) says so.
"""

from __future__ import annotations

import json
import socket
from contextlib import contextmanager

from helpers import cache_key_record, run_quietly, settings_for
from madeval.simulator import AgentProfile, GoldIndex, SyntheticAgents, simulate
from madeval.simulator.http import SimulatorServer, run_in_thread


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def score(result) -> float:
    (row,) = [r for r in result.rows if r["metric"] == "accuracy"]
    return row["score"]


def run_against(port, tasks, accuracy, tmp_path, folder, **options):
    with simulate(tasks=tasks, accuracy=accuracy, port=port) as sim:
        result, text = run_quietly(settings_for(sim.base_url, tmp_path, tasks=["arith_mc"], limit=20,
                                                output_path=str(tmp_path / folder), **options))
        return result, text, sim.server.stats.requests


def test_a_restarted_server_is_scored_afresh_by_default(generated_tasks, tmp_path):
    port, tasks = free_port(), generated_tasks.values()
    low, _, _ = run_against(port, tasks, 0.1, tmp_path, "a")
    high, text, requests = run_against(port, tasks, 0.9, tmp_path, "b")
    # Computed by hand: 20 items, three agents right 90% of the time: the majority is right on
    # nearly every item; at 10% on nearly none. Before: the second run was served the first's
    # replies from the shared cache and scored exactly as the first.
    assert score(low) <= 0.3 and score(high) >= 0.7, (score(low), score(high))
    assert requests > 0 and "response cache" not in text
    described = json.loads((high.folder / "run.json").read_text())
    assert described["cache"] is None and described["cached_calls"]["cached"] == 0


def test_an_explicit_cache_is_keyed_on_what_the_server_reports(generated_tasks, tmp_path, capsys):
    port, tasks, cache = free_port(), generated_tasks.values(), str(tmp_path / "cache.sqlite")
    low, _, _ = run_against(port, tasks, 0.1, tmp_path, "a", cache=cache)
    high, text, _ = run_against(port, tasks, 0.9, tmp_path, "b", cache=cache)
    assert score(low) <= 0.3 and score(high) >= 0.7, (score(low), score(high))  # no stale replies
    assert "0 of " in text and "calls answered from the response cache" in text
    said = capsys.readouterr().err
    assert "its /models entry (fingerprint)" in said and "system_fingerprint fp_sim_" in said

    again, text, requests = run_against(port, tasks, 0.9, tmp_path, "c", cache=cache)
    assert score(again) == score(high)
    calls = again.board["cached_calls"]["calls"]
    assert calls > 0 and again.board["cached_calls"] == {"cached": calls, "calls": calls}
    assert requests == 1  # the probe that reads the fingerprint; every debate call came from the cache
    assert f"{calls} of {calls} calls answered from the response cache" in text
    assert f"Cache: {calls} of {calls} calls (100%) were answered from the response cache" in text
    described = json.loads((again.folder / "run.json").read_text())
    assert described["cached_calls"] == {"cached": calls, "calls": calls}
    assert described["cache"]["models"][0]["told_apart"] is True
    # The cost columns take the original calls' cost, never the free cache hit's.
    row_b, row_c = (next(r for r in result.rows if r["metric"] == "accuracy") for result in (high, again))
    assert row_c["tokens_per_item"] == row_b["tokens_per_item"]
    assert row_c["llm_s_per_item"] == row_b["llm_s_per_item"] and row_c["llm_s_per_item"] > 0


class Silent(SimulatorServer):
    """A server that reports nothing about its model: no /models details, no system_fingerprint."""

    def _fingerprint(self, model, key):
        return {}


class FingerprintOnly(SimulatorServer):
    """A server that reports its model only in each reply's system_fingerprint (as OpenAI does)."""

    def _fingerprint(self, model, key):
        return super()._fingerprint(model, key) if key == "system_fingerprint" else {}


@contextmanager
def served(server_class, tasks, accuracy, port):
    agents = SyntheticAgents(GoldIndex.from_tasks(tasks), default=AgentProfile(accuracy))
    with run_in_thread(server_class(agents, port=port)) as server:
        yield server


def test_a_cache_that_cannot_tell_says_so(generated_tasks, tmp_path, capsys):

    with served(Silent, generated_tasks.values(), 0.6, 0) as server:
        record = cache_key_record(server.base_url, tmp_path / "c.sqlite")
    said = capsys.readouterr().err
    assert "reports nothing about model simulator beyond its name" in said and "--cache off" in said
    assert record["models"][0]["told_apart"] is False


def test_a_changed_system_fingerprint_makes_stored_replies_misses(generated_tasks, tmp_path):
    port, tasks, cache = free_port(), generated_tasks.values(), str(tmp_path / "cache.sqlite")
    results = []
    for accuracy, folder in ((0.1, "a"), (0.9, "b")):
        with served(FingerprintOnly, tasks, accuracy, port) as server:
            results.append(run_quietly(settings_for(server.base_url, tmp_path, tasks=["arith_mc"], limit=20,
                                                    output_path=str(tmp_path / folder), cache=cache))[0])
    scores = [score(result) for result in results]
    assert scores[0] <= 0.3 and scores[1] >= 0.7, scores  # before: the second run got the first's replies
    assert results[1].board["cached_calls"]["cached"] == 0
