"""A replica dies mid-run behind vllm-router (SIGKILL) and a new one joins mid-run (issue 17).

The router's own retries are turned off (``--disable-retries``), so the calls it cannot complete
reach madeval as errors: the run must still record every unit exactly once, with the failed
attempts in its calls' fault accounting (``attempts``, ``errors``), and the replica that joined
must get calls once the router admits it.
"""

from __future__ import annotations

import threading
import time

from test_fleet_routers import WEAK, needs
from test_fleet_routing import records

import madeval
from madeval.testing.fleet import Fleet

UNITS = 12
#: Each call takes 0.3 s and every debate runs 5 turns of 3 agents: the run lasts several seconds,
#: long enough to kill a replica after its first calls and to admit a new one well before the end.
REPLICA = [*WEAK, "--latency", "0.3"]
DEBATE = dict(paradigm="memory", agents=3, max_turns=5, decider="counting", limit=UNITS, retry_delay=0.2)


def served(fleet: Fleet) -> int:
    """Chat requests the live replicas have received so far."""
    return fleet.total("requests")


def test_fleet_replica_killed_mid_run(tmp_path):
    needs("vllm-router")
    finished: dict = {}
    with Fleet(tmp_path / "fleet", replicas=3, simulator_args=REPLICA, router_args=["--disable-retries"]) as fleet:
        newcomer = fleet.start_replica()  # started now, added to the router mid-run (a slow start can't miss the run)
        run = threading.Thread(target=lambda: finished.update(result=madeval.evaluate(
            "arith_mc", base_url=fleet.base_url, output_path=tmp_path / "run", cache="off", **DEBATE)))
        run.start()
        deadline = time.monotonic() + 60
        while served(fleet) < 20 and run.is_alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        victim = max(fleet.members, key=lambda replica: replica.stats()["requests"])  # one with calls in flight
        victim.kill()
        assert newcomer.stats()["requests"] == 0  # the router does not know it yet
        fleet.add_replica(newcomer)
        assert run.is_alive()  # the newcomer joined mid-run
        run.join(timeout=180)
        assert not run.is_alive()
        newcomer_calls = newcomer.stats()["requests"]
    result = finished["result"]
    assert (result.outcome.finished, result.outcome.failed) == (UNITS, 0)
    units = [record["unit"]["key"] for record in records(result.folder)]
    assert len(units) == len(set(units)) == UNITS  # every unit recorded exactly once
    calls = [call for record in records(result.folder) for call in record["transcript"]["calls"]]
    retried = [call for call in calls if call["attempts"] > 1]
    assert retried and all(len(call["errors"]) == call["attempts"] - 1 for call in retried)  # failures accounted
    assert newcomer_calls > 0  # the router sent calls to the replica it admitted mid-run
