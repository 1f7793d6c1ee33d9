"""A question the simulator does not know is an error the client sees (issue 24, item 2).

Chosen over a warning alone: a run against a simulator of other tasks must not get a score at all
(at ce2f287 a simulator of ``generated`` scored ``mmlu_pro`` 15% with letters A-D for ten-option
items, silently). The unit fails with the server's HTTP 400, which the client does not retry and
the run's last words quote as something a re-run will not fix; the simulator warns once on stderr
and counts every such request in ``GET /stats``.
"""

from __future__ import annotations

import json
import urllib.request

import pytest

from madeval.cli.main import main
from madeval.simulator import GoldIndex, SyntheticAgents, simulate


def stats(sim) -> dict:
    url = sim.base_url.removesuffix("/v1") + "/stats"
    with urllib.request.urlopen(url, timeout=10) as reply:
        return json.loads(reply.read())


def test_a_run_of_tasks_the_simulator_does_not_know_fails_loudly(generated_tasks, tmp_path, capsys):
    with simulate(tasks=[generated_tasks["arith_yesno"]], accuracy=0.6) as sim:
        with pytest.raises(SystemExit) as ended:
            main(["--tasks", "arith_mc", "--limit", "4", "--base-url", sim.base_url, "--no-progress",
                  "--output-path", str(tmp_path / "out")])
        counted = stats(sim)["unknown_questions"]
    said = capsys.readouterr()
    assert ended.value.code == 1
    assert "0 units run, 0 already done, 4 failed" in said.out  # no score for a run the server cannot judge
    last = said.err.strip().splitlines()[-1]
    assert "a re-run will not fix them" in last and "quotes none of them" in last, last
    assert "run the same command again" not in last
    assert "a request quotes none of the" in said.err  # the simulator's own warning, once
    assert said.err.count("simulator: warning") == 1
    assert counted >= 4


def test_what_the_simulator_answers_without_a_known_question(generated_tasks):
    from madeval.llm.probe import PROBE_MESSAGES
    from madeval.simulator.agents import UnknownQuestion

    item = generated_tasks["arith_mc"].items[0]
    known = GoldIndex.from_tasks([generated_tasks["arith_mc"]])
    def ask(agents, text):
        return agents({"model": "m", "seed": 1, "messages": [{"role": "user", "content": text}]})
    strict = SyntheticAgents(known)
    with pytest.raises(UnknownQuestion):
        ask(strict, "What is the capital of France? A) Paris B) Rome")
    assert "Final Solution:" in ask(strict, item.input)[0]  # a known question is answered
    assert ask(strict, PROBE_MESSAGES[0]["content"])[0] == "OK"  # madeval's probe call
    assert ask(strict, "Now generate a participant to discuss the following task:\nTask: x.")[0]  # no gold needed
    assert strict.stats.unknown_questions == 2  # the question and the persona prompt quote none
    assert "Final Solution:" in ask(SyntheticAgents(known, unknown="answer"), "What is 2 + 2?")[0]
    assert "Final Solution:" in ask(SyntheticAgents(GoldIndex()), "What is 2 + 2?")[0]  # knows none: answers
    with pytest.raises(ValueError):
        SyntheticAgents(known, unknown="guess")


def test_indexes_of_the_same_tasks_know_the_same_golds_and_grow_apart(generated_tasks):
    """A task's keys and golds are made once and shared; each index still has its own questions."""
    tasks = [generated_tasks["arith_mc"], generated_tasks["arith_yesno"]]
    first, second = GoldIndex.from_tasks(tasks), GoldIndex.from_tasks(tasks)
    by_hand = GoldIndex()
    for task in tasks:
        for item in task.items:
            by_hand.add(item.input, task.answer_type, item.target, len(item.choices or ()))
    assert len(first) == len(second) == len(by_hand) == 5000
    assert first.digest() == second.digest() == by_hand.digest()
    mc, yes_no = tasks[0].items[7], tasks[1].items[8]
    assert first.lookup(mc.input).answer == mc.target and first.lookup(mc.input).options == 4
    assert second.lookup(f"Question: {yes_no.input}\nAnswer yes or no.").answer == yes_no.target
    first.add("What is the capital of France?", "text", ["Paris", "paris"])
    assert first.lookup("What is the capital of France?").answer == "Paris"
    assert second.lookup("What is the capital of France?") is None and len(second) == 5000
