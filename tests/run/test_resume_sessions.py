"""A run resumed under other settings a resume may change (here the transport and concurrency): its
``run.json`` lists each session with its start time and those settings, ``settings`` stay the first
run's, and the readers that want the settings the run was last run with (W&B's config) take the last
session's. Before, run.json and W&B kept saying the first run's transport. On loopback, W&B offline."""

from __future__ import annotations

import datetime
import json

import pytest

from helpers import run_quietly
from madeval.records.folder import encode_line
from madeval.records.run_file import latest_settings
from madeval.settings.config import DebateConfig, RunSettings
from madeval.simulator.agents import AgentProfile, SyntheticAgents
from madeval.simulator.batches import BatchOptions
from madeval.simulator.http import SimulatorServer, run_in_thread
from madeval.simulator.truth import GoldIndex

MEMORY = DebateConfig(paradigm="memory", agents=3, max_turns=3, decider="simple_voting")


@pytest.fixture
def sim(generated_tasks):
    agents = SyntheticAgents(GoldIndex.from_tasks(generated_tasks.values()), default=AgentProfile(0.6, 0.3, 0.0, 0.0),
                             seed=0)
    with run_in_thread(SimulatorServer(agents, batch_options=BatchOptions(completion_delay_s=0.05))) as server:
        yield server


def settings(server, folder, **options) -> RunSettings:
    return RunSettings(**{"base_url": server.base_url, "configurations": [MEMORY], "output_path": str(folder),
                          "tasks": ["arith_mc"], "limit": 2, "cache": "off", **options})


def run_file(folder) -> dict:
    return json.loads((folder / "run.json").read_text())


def test_each_session_is_listed_with_its_transport_and_readers_take_the_last(sim, tmp_path, monkeypatch, capfd,
                                                                            request):
    wandb = pytest.importorskip("wandb")
    # W&B keeps process-wide settings from its first init: end them with the test, so a later test's
    # WANDB_MODE=offline is not read over by this one's mode=offline (it then asked for an API key)
    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_SILENT", "true")
    request.addfinalizer(wandb.teardown)
    given = []
    real_init = wandb.init

    def spy(**options):  # W&B itself runs (offline); the spy keeps the config it was given
        given.append(options.get("config"))
        return real_init(**options)

    monkeypatch.setattr(wandb, "init", spy)
    folder = tmp_path / "run"
    before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    run_quietly(settings(sim, folder, concurrency=4))
    first = run_file(folder)
    assert [s["settings"]["transport"] for s in first["sessions"]] == ["aiohttp"]
    assert first["sessions"][0]["settings"]["concurrency"] == 4
    assert "tasks" not in first["sessions"][0]["settings"]  # only what a resume may change
    records = (folder / "records.jsonl").read_bytes()

    wandb_dir = tmp_path / "wandb"
    wandb_dir.mkdir()
    run_quietly(settings(sim, folder, concurrency=8, transport="batch", batch_options={"flush_s": 0.05, "poll_s": 0.02},
                         wandb_args={"mode": "offline", "dir": str(wandb_dir)}))
    assert (folder / "records.jsonl").read_bytes() == records  # a resume: nothing ran again
    assert "this batch run" not in capfd.readouterr().err  # nothing left: no batch (before: 10 round trips)
    described = run_file(folder)
    sessions = described["sessions"]
    assert [(s["settings"]["transport"], s["settings"]["concurrency"]) for s in sessions] == [("aiohttp", 4),
                                                                                               ("batch", 8)]
    assert sessions[1]["settings"]["batch_options"] == {"flush_s": 0.05, "poll_s": 0.02}
    started = [datetime.datetime.fromisoformat(s["started"]) for s in sessions]
    assert before <= started[0] <= started[1] <= datetime.datetime.now(datetime.timezone.utc)
    assert described["settings"]["transport"] == "aiohttp"  # the first run's, as the fingerprint saw them
    assert latest_settings(described)["transport"] == "batch" and latest_settings(described)["tasks"] == ["arith_mc"]
    # W&B's config: the settings the run was last run with, and every session
    assert list(wandb_dir.glob("wandb/offline-run-*/run-*.wandb"))  # logged, offline
    (config,) = given
    assert config["transport"] == "batch" and config["concurrency"] == 8
    assert [s["settings"]["transport"] for s in config["sessions"]] == ["aiohttp", "batch"]


def test_a_folder_from_before_sessions_gets_its_first_run_listed_when_resumed(sim, tmp_path):
    folder = tmp_path / "run"
    run_quietly(settings(sim, folder, concurrency=4))
    older = run_file(folder)
    del older["sessions"]
    (folder / "run.json").write_bytes(encode_line(older))
    run_quietly(settings(sim, folder, concurrency=2))
    sessions = run_file(folder)["sessions"]
    assert [(s["started"] is None, s["settings"]["concurrency"]) for s in sessions] == [(True, 4), (False, 2)]


def test_latest_settings_read_a_hostile_run_json_without_failing():
    assert latest_settings({}) == {}
    assert latest_settings({"settings": [1], "sessions": "x"}) == {}
    base = {"settings": {"transport": "aiohttp", "tasks": ["t"]}}
    assert latest_settings({**base, "sessions": [{"settings": {"transport": "batch", "tasks": ["other"]}}]}) \
        == {"transport": "batch", "tasks": ["t"]}  # a session never changes a setting that changes results
    assert latest_settings({**base, "sessions": [{"settings": {"transport": "batch"}}, 7]}) == base["settings"]


CR = DebateConfig(paradigm="collective_refinement", agents=3, max_turns=3, decider="simple_voting")


def test_a_run_resumed_under_batch_is_told_of_the_units_it_has_left(sim, tmp_path, capfd):
    """Two configurations, 2 items each; the Memory debates are done, the Collective Refinement ones
    are not (their records taken out, as after a kill). The batch line counts what is left, by hand:
    at least 2 debates x 3 agents = 6 calls, up to 2 x (3 x (3 + 1) + 1) = 26, in CR's 4 to 6 round
    trips (1 step x 3 turns + the ballots, re-asked twice at most), not Memory's 10 to 12. Before: 12 to
    52 calls in 10 round trips."""
    folder = tmp_path / "run"
    run_quietly(settings(sim, folder, configurations=[MEMORY, CR]))
    described = run_file(folder)
    memory = next(cid for cid, c in described["configurations"].items() if c["paradigm"] == "memory")
    lines = (folder / "records.jsonl").read_text().splitlines(keepends=True)
    kept = [line for line in lines if json.loads(line)["unit"]["config"] == memory]
    assert len(kept) == 2 and len(lines) == 4
    (folder / "records.jsonl").write_text("".join(kept))
    capfd.readouterr()
    run_quietly(settings(sim, folder, configurations=[MEMORY, CR], transport="batch",
                         batch_options={"flush_s": 0.05, "poll_s": 0.02}))
    (line,) = [line for line in capfd.readouterr().err.splitlines() if line.startswith("madeval: this batch run")]
    assert "makes at least 6 calls (up to 26) for the 2 of its 4 units not done yet in 4 to 6 batch round" \
        in line, line
    assert len((folder / "records.jsonl").read_text().splitlines()) == 4
