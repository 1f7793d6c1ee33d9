"""The routing key header (issue 17): what arrives at the simulator over loopback.

The expected keys are computed here from their definition (the first 16 hex digits of SHA-256 over
the unit's configuration id, task, item id and repeat, and the agent index or ``judge``, joined by
``\\x1f``), not by madeval's code, and compared with what the simulator counted per header value.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from contextlib import contextmanager
from pathlib import Path

import pytest

from helpers import run_quietly, settings_for
from madeval.errors import UsageError
from madeval.settings.config import checked
from madeval.simulator import AgentProfile, GoldIndex, SyntheticAgents
from madeval.simulator.http import SimulatorServer, run_in_thread

API_KEY = "sk-routing-test-0123456789"
# Weak agents and a turn limit of 3: debates that take several turns, so an agent calls more than once.
DEBATE = dict(limit=4, cache="off", max_turns=3, agents=3)


class HeaderRecordingServer(SimulatorServer):
    """The simulator, also keeping every header of every chat request it answered."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.chat_headers: list[dict[str, str]] = []

    def _handle(self, connection, method, target, headers, body):
        if method == "POST":
            self.chat_headers.append(dict(headers))
        super()._handle(connection, method, target, headers, body)


@contextmanager
def replica(generated_tasks, **options):
    """A simulator replica over the generated tasks, with weak agents (debates go on for turns)."""
    agents = SyntheticAgents(GoldIndex.from_tasks(generated_tasks.values()),
                             default=AgentProfile(accuracy=0.4, conformity=0.0, persuasion=0.0, self_doubt=0.0))
    with run_in_thread(HeaderRecordingServer(agents, **options)) as server:
        yield server


def expected_key(unit: dict, who=None) -> str:
    """The routing key by its definition; ``who``: an agent index, "judge", or None for a debate's key."""
    parts = [unit["config"], unit["task"], unit["item"], unit["repeat"]] + ([] if who is None else [who])
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()[:16]


def records(run_folder: Path) -> list[dict]:
    return [json.loads(line) for line in (run_folder / "records.jsonl").read_text().splitlines()]


def expected_counts(run_folder: Path, header: str, grain: str = "agent") -> Counter:
    """Requests per (header, key) that the run's records say were sent (no call was cached or retried)."""
    counts = Counter()
    for record in records(run_folder):
        for call in record["transcript"]["calls"]:
            assert call["attempts"] == 1 and not call["cached"]
            who = None if grain == "debate" else ("judge" if call["agent"] is None else call["agent"])
            counts[header.lower(), expected_key(record["unit"], who)] += 1
    return counts


def run_once(server, tmp_path: Path, name: str, **options) -> tuple[Path, Counter]:
    """Run into a fresh folder ``name``; return it and the routing keys the server saw during the run."""
    before = Counter(server.stats.routing_keys)
    folder = tmp_path / name
    result, _ = run_quietly(settings_for(server.base_url, tmp_path, output_path=str(folder), **DEBATE, **options))
    assert result.outcome.failed == 0
    return folder, Counter(server.stats.routing_keys) - before


@pytest.mark.parametrize("transport", ["aiohttp", "openai"])
def test_fleet_routing_key_per_agent_and_debate_stable_across_runs(generated_tasks, tmp_path, transport):
    with replica(generated_tasks) as server:
        folder, seen = run_once(server, tmp_path, "first", transport=transport, challenge=["wrong"])
        expected = expected_counts(folder, "X-Session-ID")
        assert seen == expected  # every call of an agent in a debate: that agent's key, and only it
        calls = [call for record in records(folder) for call in record["transcript"]["calls"]]
        assert any(call["agent"] is None for call in calls)  # the judge (the "wrong" challenge): its own key
        per_agent = Counter((json.dumps(r["unit"]),
                             c["agent"]) for r in records(folder) for c in r["transcript"]["calls"])
        assert max(per_agent.values()) >= 2  # some agent spoke more than once: one key held across turns
        # distinct debates and agents: as many keys as (debate, agent) pairs
        assert len(seen) == len(per_agent) == len({key for _header, key in seen})
        again, seen_again = run_once(server, tmp_path, "second", transport=transport, challenge=["wrong"])
        assert seen_again == seen  # the same command into a fresh folder sends the same keys


def test_fleet_routing_key_debate_grain_one_key_per_debate(generated_tasks, tmp_path):
    with replica(generated_tasks) as server:
        folder, seen = run_once(server, tmp_path, "run", routing_grain="debate")
    assert seen == expected_counts(folder, "X-Session-ID", grain="debate")
    assert len(seen) == len(records(folder)) == DEBATE["limit"]


def test_fleet_routing_key_header_off_sends_none(generated_tasks, tmp_path):
    with replica(generated_tasks) as server:
        folder, seen = run_once(server, tmp_path, "run", routing_header="off")
        assert seen == Counter()
        assert server.stats.requests == sum(len(r["transcript"]["calls"]) for r in records(folder)) > 0
        assert not any(name in headers for headers in server.chat_headers
                       for name in ("x-session-id", "x-smg-routing-key"))


def test_fleet_routing_key_custom_header_name(generated_tasks, tmp_path):
    with replica(generated_tasks, routing_headers=("X-SMG-Routing-Key", "X-Session-ID")) as server:
        folder, seen = run_once(server, tmp_path, "run", routing_header="X-SMG-Routing-Key")
    assert seen == expected_counts(folder, "X-SMG-Routing-Key")  # and no X-Session-ID besides it


@pytest.mark.parametrize("transport", ["aiohttp", "openai"])
def test_fleet_routing_key_api_key_only_in_authorization(generated_tasks, tmp_path, monkeypatch, transport):
    monkeypatch.setenv("MADEVAL_API_KEY", API_KEY)
    with replica(generated_tasks, api_key=API_KEY) as server:
        folder, seen = run_once(server, tmp_path, "run", transport=transport)
        sent = server.chat_headers
    assert seen == expected_counts(folder, "X-Session-ID")
    assert sent and all(headers["authorization"] == f"Bearer {API_KEY}" for headers in sent)
    leaks = [(name, value) for headers in sent for name, value in headers.items()
             if name != "authorization" and API_KEY in value]
    assert leaks == []


@pytest.mark.parametrize("name", ["X Session", "X-Session:", "Ключ"])
def test_fleet_routing_key_bad_header_name_refused(name):
    with pytest.raises(UsageError, match="routing_header must be an HTTP header name"):
        checked("routing_header", name)
    assert checked("routing_header", "off") == "off" and checked("routing_header", "X-My-Key") == "X-My-Key"
