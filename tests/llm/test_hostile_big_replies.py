"""Big replies (issue 25, item 13): an endpoint that ignores ``max_tokens`` and sends 10 MB replies.
Such a reply is an endpoint fault: its bounded prefix is kept (in the record and in the prompts
that quote it) with a note and the original length, and the run's last line says so."""

from __future__ import annotations

import json
import re

from test_hostile_endpoint import check_finished, forks, run_madeval, truth  # noqa: F401 - forks, truth: fixtures

from madeval.simulator.agents import SyntheticAgents
from madeval.simulator.hostile import FILLER, HUGE_REPLY_BYTES, HostileServer
from madeval.simulator.http import run_in_thread

CUT = re.compile(r"reply of (\d+) characters cut to its first (\d+): longer than max_tokens=\d+ allows")


def test_hostile_reply_bound_by_hand():
    from madeval.llm.client import CHARS_PER_TOKEN, cut_reply, reply_bound

    assert reply_bound(1024) == 32 * 1024 == CHARS_PER_TOKEN * 1024
    assert reply_bound(24) == 4096 and reply_bound(None) == 32 * 1024
    text, note = cut_reply("x" * 5000, 24)
    assert text == "x" * 4096 + "\n[madeval: reply of 5000 characters cut to its first 4096: longer than " \
                   "max_tokens=24 allows (endpoint fault)]"
    assert note is not None and note in text
    assert cut_reply("y" * 4096, 24) == ("y" * 4096, None)


def test_hostile_10mb_replies_are_cut_and_the_records_stay_small(truth, forks, tmp_path):  # noqa: F811
    server = HostileServer(SyntheticAgents(truth, seed=0), ["10mb-reply"], rate=0.2, seed=3, interval_s=0.2)
    folder = tmp_path / "run"
    with run_in_thread(server):
        run = run_madeval(forks, server.base_url, folder, timeout_s=10.0)  # 10 MB on a busy machine: seconds
    check_finished(run, "a run against 10 MB replies")
    sabotaged = server.stats.sabotaged.get("10mb-reply", 0)
    assert sabotaged >= 2, "choose another seed: too few big replies"
    size = (folder / "records.jsonl").stat().st_size
    assert size < 2_000_000, f"records.jsonl holds {size} bytes"
    notes = []
    for line in (folder / "records.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        notes += [CUT.search(e) for call in record["transcript"]["calls"] for e in call["errors"] if CUT.search(e)]
        for message in record["transcript"]["messages"]:
            assert len(message["text"]) < 32 * 1024 + 200
    assert notes, "no recorded call notes a cut reply"
    for found in notes:
        assert int(found.group(1)) > HUGE_REPLY_BYTES and int(found.group(2)) == 32 * 1024
    cut = int(re.search(r"; (\d+) repl(?:y|ies) longer than max_tokens allows cut", run.stdout).group(1))
    assert len(notes) <= cut <= sabotaged
    assert FILLER in (folder / "records.jsonl").read_text(encoding="utf-8")  # the prefix is kept
