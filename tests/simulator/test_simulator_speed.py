"""The simulator as a server whose replies take time per token (``decode_s_per_token``,
``--decode-ms-per-token``), and its answer to madeval's speed probe: a reply that runs to its
max_tokens, as a chat model's story does (issue 31, item 5: the estimate times a reply's tokens)."""

from __future__ import annotations

import json
import time
import urllib.request

import pytest

from madeval.cli.main import main
from madeval.llm.probe import PROBE_PROMPT, SPEED_PROMPT
from madeval.simulator import simulate


def ask(sim, prompt: str, max_tokens: int) -> tuple[float, dict]:
    """Seconds and the JSON body of one chat request."""
    body = json.dumps({"model": "simulator", "messages": [{"role": "user", "content": prompt}],
                       "max_tokens": max_tokens}).encode()
    request = urllib.request.Request(sim.base_url + "/chat/completions", body, {"Content-Type": "application/json"})
    started = time.perf_counter()
    with urllib.request.urlopen(request, timeout=30) as reply:
        data = json.loads(reply.read())
    return time.perf_counter() - started, data


def test_a_reply_takes_its_tokens_time_and_the_speed_probe_runs_to_max_tokens():
    with simulate(latency_s=0.01, decode_s_per_token=0.01) as sim:
        story_s, story = ask(sim, SPEED_PROMPT, 25)
        ok_s, ok = ask(sim, PROBE_PROMPT, 8)
    assert story["usage"]["completion_tokens"] == 25 and len(story["choices"][0]["message"]["content"].split()) == 25
    assert ok["usage"]["completion_tokens"] == 1 and ok["choices"][0]["message"]["content"] == "OK"
    assert story_s >= 0.01 + 25 * 0.01 and ok_s >= 0.01 + 0.01  # 0.26 s and 0.02 s at least


def test_a_negative_decode_time_is_one_line(capsys):
    with pytest.raises(SystemExit) as ended:
        main(["simulator", "--decode-ms-per-token", "-1"])
    assert ended.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err == "madeval: error: --decode-ms-per-token must be at least 0, got -1.0"
