"""madeval behind the real routers (issue 17): simulator replicas on loopback, vllm-router or
sglang-router in front of them (:class:`madeval.testing.fleet.Fleet`), a madeval run through it.

What each replica served is read from its ``GET /stats``; what the run sent is read from its
records and the routing key's definition (``test_fleet_routing.expected_counts``). The routers
come with the ``fleet`` extra (``make install``); a test is skipped only when its router is missing.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from test_fleet_routing import expected_counts, records

import madeval
from madeval.testing.fleet import KEY_HEADER, KEY_POLICY, ROUTERS, Fleet, FleetError, router_binary

#: Weak agents: debates go on for several turns, so each routing key is sent more than once.
WEAK = ["--accuracy", "0.4"]


def needs(router: str) -> None:
    """Skip the test when ``router``'s binary is not installed."""
    if router_binary(router) is None:
        pytest.skip(f"{router} is not installed (the 'fleet' extra: make install)")


def run_through(fleet: Fleet, folder: Path, **options) -> Path:
    """A madeval run on ``arith_mc`` through the fleet's router into ``folder``; no unit may fail."""
    result = madeval.evaluate("arith_mc", base_url=fleet.base_url, output_path=folder, cache="off", **options)
    assert result.outcome.failed == 0
    return result.folder


def served_keys(stats: dict, header: str) -> list[dict[str, int]]:
    """Per replica: chat requests per routing key value of ``header``."""
    return [replica["routing_keys"].get(header.lower(), {}) for replica in stats.values()]


@pytest.mark.parametrize("router", ROUTERS)
def test_fleet_consistent_hash_pins_each_debate(tmp_path, router):
    needs(router)
    header = KEY_HEADER[router]
    with Fleet(tmp_path / "fleet", replicas=3, router=router, policy=KEY_POLICY[router], simulator_args=WEAK) as fleet:
        folder = run_through(fleet, tmp_path / "run", limit=8, max_turns=3, agents=3, routing_header=header)
        stats = fleet.stats()
    per_replica = served_keys(stats, header)
    assert all("404" not in replica["by_status"] for replica in stats.values())  # it answers all the router asks
    sent = expected_counts(folder, header)  # (header, key) -> calls, from the records
    assert max(sent.values()) >= 2  # some key was sent more than once: pinning had something to pin
    owners = Counter(key for keys in per_replica for key in keys)
    assert set(owners.values()) == {1}  # every key was served by exactly one replica
    served = Counter({(header.lower(), key): calls for keys in per_replica for key, calls in keys.items()})
    assert served == sent  # ... every one of its calls, and no other call
    assert sum(1 for keys in per_replica if keys) >= 2  # the work was spread over replicas


def computed_and_cached(fleet: Fleet) -> tuple[int, int]:
    """Prompt tokens computed (prefilled) and found in the prefix cache, summed over the replicas."""
    return fleet.total("prompt_tokens_computed"), fleet.total("prompt_tokens_cached")


def test_fleet_routing_key_beats_round_robin(tmp_path):
    needs("vllm-router")
    replica = [*WEAK, "--prefix-cache-tokens", "200000"]
    debate = dict(paradigm="memory", agents=3, max_turns=4, decider="counting", limit=6)  # every debate: 4 turns
    tokens, sent = {}, {}
    for policy in ("consistent_hash", "round_robin"):
        with Fleet(tmp_path / policy, replicas=3, policy=policy, simulator_args=replica) as fleet:
            folder = run_through(fleet, tmp_path / f"run-{policy}", **debate)
            tokens[policy] = computed_and_cached(fleet)
        sent[policy] = sum(call["prompt_tokens"] for r in records(folder) for call in r["transcript"]["calls"])
    # Both runs sent the same prompts (the same workload), and the replicas counted the same tokens
    # (the simulator's own tokens, madeval.llm.prefix_reuse.prompt_tokens, not the usage counts).
    assert sent["consistent_hash"] == sent["round_robin"]
    assert sum(tokens["consistent_hash"]) == sum(tokens["round_robin"])
    key_computed, key_cached = tokens["consistent_hash"]
    rr_computed, rr_cached = tokens["round_robin"]
    ratio = key_computed / rr_computed
    print(f"computed prompt tokens: consistent_hash {key_computed}, round_robin {rr_computed}, ratio {ratio:.2f}")
    assert key_computed < rr_computed and key_cached > rr_cached, (tokens, ratio)


def test_fleet_start_failure_names_the_log_and_leaves_no_process(tmp_path):
    needs("vllm-router")
    bad_replica = Fleet(tmp_path / "replica", replicas=2, simulator_args=["--accuracy", "2"])
    with pytest.raises(FleetError, match=r"exited; see .*replica-1-\d+\.log"):
        bad_replica.start()
    assert "--accuracy must be between 0 and 1" in bad_replica.members[0].log.read_text()
    bad_router = Fleet(tmp_path / "router", replicas=1, policy="no_such_policy")
    with pytest.raises(FleetError, match=r"vllm-router exited; see .*vllm-router\.log"):
        bad_router.start()
    assert "no_such_policy" in bad_router.router_log.read_text()
    for fleet in (bad_replica, bad_router):  # what was started is stopped and reaped
        assert fleet.members and all(replica.process.poll() is not None for replica in fleet.members)
