"""``madeval rescore`` keys the response cache as a run does: on what the endpoint reports about each
model (its /models entry and system_fingerprint, madeval.run.cache_key), not only on the URL,
the model's name and the request. Before, a rescore against a restarted server with other agents
under the same name was answered with the old server's stored votes."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess

from helpers import madeval_in_process, run_quietly, settings_for
from madeval.simulator import simulate


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def rescore(folder, base_url, cache) -> subprocess.CompletedProcess:
    return madeval_in_process("rescore", folder, "--decider", "simple_voting:vote_after_turns=2", "--base-url",
                              base_url, "--cache", cache)


def votes(folder) -> int:
    lines = (folder / "rescored.jsonl").read_text().splitlines()
    return sum(json.loads(line)["new_calls"] for line in lines)


def test_rescore_keys_the_cache_on_what_the_server_reports(generated_tasks, tmp_path):
    port, cache, tasks = free_port(), tmp_path / "cache.sqlite", generated_tasks.values()
    with simulate(tasks=tasks, accuracy=0.1, port=port) as sim:
        run, _ = run_quietly(settings_for(sim.base_url, tmp_path, limit=6, cache="off", decider="counting",
                                          max_turns=4))
        copies = [shutil.copytree(run.folder, tmp_path / name) for name in ("a", "b", "c")]
        before = sim.server.stats.requests
        done = rescore(copies[0], sim.base_url, cache)
        assert done.returncode == 0, done.stderr
        assert votes(copies[0]) > 0 and sim.server.stats.requests - before == 1 + votes(copies[0])  # a probe
        assert "replies of simulator@default are reused when" in done.stderr
        assert "its /models entry (fingerprint)" in done.stderr
    with simulate(tasks=tasks, accuracy=0.9, port=port) as sim:  # other agents, the same name and URL
        done = rescore(copies[1], sim.base_url, cache)
        assert done.returncode == 0, done.stderr
        # every vote asked of the new server: before, all came from the first server's stored votes
        assert sim.server.stats.requests == 1 + votes(copies[1]) and votes(copies[1]) > 0
        done = rescore(copies[2], sim.base_url, cache)  # the same server again: its votes are reused
        assert done.returncode == 0, done.stderr
        assert sim.server.stats.requests == 2 + votes(copies[1])
        rescored = [json.loads(line) for line in (copies[2] / "rescored.jsonl").read_text().splitlines()]
        made = [(r["transcript"]["calls"], r["new_calls"]) for r in rescored]
        new = [call for calls, count in made for call in calls[len(calls) - count:]]  # the votes
        assert new and all(call["cached"] for call in new)
