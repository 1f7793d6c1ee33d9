"""Synthetic agents: self-doubt under the self-check prompt, and conformity in Collective Improvement."""

from __future__ import annotations

import math
import subprocess
import sys
from collections import Counter

import pytest

from helpers import run_quietly
from madeval.core.transcript import Transcript
from madeval.records.folder import read_records
from madeval.settings.config import DebateConfig, RunSettings
from madeval.simulator import simulate
from madeval.simulator.agents import AgentProfile, SyntheticAgents
from madeval.simulator.truth import GoldIndex
from madeval.testing import registered
from madeval_madc import plugin as madc_plugin

QUESTION = "Which letter follows A?"
OPENING = f"Can you answer the following question as accurately as possible? {QUESTION} Explain your answer."
DOUBLE_CHECK = "Can you double check that your answer is correct. Answer in the format the task asks for: Answer."
PEERS = ("These are the solutions to the problem from other agents: \n\n One agent solution: ```Final Solution: C```"
         "\n\n One agent solution: ```Final Solution: C```\n\n Using the reasoning from other agents as additional "
         "advice, can you give an updated answer?")
SEEDS = range(3000)


@pytest.fixture(autouse=True)
def society_of_minds():
    """The self-check and update prompts are madeval-madc's (Du et al.): its simulator hook answers them."""
    with registered(madc_plugin):
        yield


def agents(kind: str = "choice", answer: str = "B", options: int = 4, **profile) -> SyntheticAgents:
    truth = GoldIndex()
    truth.add(QUESTION, kind, answer, options)
    return SyntheticAgents(truth, default=AgentProfile(**profile))


def reply(sim: SyntheticAgents, seed: int, *turns: str) -> str:
    """The answer after "Final Solution:" in the reply to a conversation: the opening, then per
    earlier turn (assistant text, user prompt) pairs given flat in ``turns``."""
    messages = [{"role": "user", "content": OPENING}]
    for i, text in enumerate(turns):
        messages.append({"role": "assistant" if i % 2 == 0 else "user", "content": text})
    text, _, _ = sim({"model": "m", "seed": seed, "messages": messages})
    return text.rsplit("Final Solution:", 1)[1].strip()


def test_self_doubt_zero_keeps_the_private_answer_under_the_self_check_prompt():
    sim = agents(accuracy=0.6, self_doubt=0.0)
    for seed in range(200):
        private = reply(sim, seed)  # the draft is the private answer
        assert reply(sim, seed, "Final Solution: D", DOUBLE_CHECK) == private
    assert sim.stats.kinds == {"draft": 200, "som_double_check": 200}


def test_self_doubt_one_always_abandons_the_current_answer_for_another_option_chosen_uniformly():
    sim = agents(accuracy=0.6, self_doubt=1.0)
    picked = Counter(reply(sim, seed, "Final Solution: D", DOUBLE_CHECK) for seed in SEEDS)
    assert set(picked) == {"A", "B", "C"}  # never D, the answer it was asked to check
    # Uniform over the three others: each count is binomial(3000, 1/3), sd = 25.8; allow 5 sd.
    assert all(abs(count - 1000) <= 5 * math.sqrt(3000 / 3 * 2 / 3) for count in picked.values())
    # The current answer is the agent's latest, here the correct one: it is always abandoned.
    assert all(reply(sim, seed, "Final Solution: B", DOUBLE_CHECK) != "B" for seed in range(300))


def test_self_doubt_is_a_probability_and_otherwise_the_private_answer():
    doubting, steady = agents(accuracy=0.6, self_doubt=0.3), agents(accuracy=0.6)
    changed = 0
    for seed in SEEDS:
        private = reply(steady, seed)
        answer = reply(doubting, seed, f"Final Solution: {private}", DOUBLE_CHECK)
        changed += answer != private
    # binomial(3000, 0.3): mean 900, sd 25.1
    assert abs(changed - 900) <= 5 * math.sqrt(3000 * 0.3 * 0.7)


def test_self_doubt_of_yes_no_and_number_items():
    yes_no = agents("yes_no", "yes", 0, accuracy=1.0, self_doubt=1.0)
    assert {reply(yes_no, seed, "Final Solution: Yes", DOUBLE_CHECK) for seed in range(50)} == {"No"}
    number = agents("number", "12", 0, accuracy=1.0, self_doubt=1.0)
    moved = {int(reply(number, seed, "Final Solution: 12", DOUBLE_CHECK)) - 12 for seed in range(400)}
    assert moved == {*range(-9, 0), *range(1, 10)}


def test_self_doubt_leaves_prompts_that_show_peers_alone():
    steady = agents(accuracy=0.6, conformity=0.5)
    doubting = agents(accuracy=0.6, conformity=0.5, self_doubt=1.0)
    for seed in range(300):
        assert reply(doubting, seed) == reply(steady, seed)
        assert reply(doubting, seed, "Final Solution: D", PEERS) == reply(steady, seed, "Final Solution: D", PEERS)


def test_simulator_command_refuses_a_self_doubt_outside_0_1(tmp_path):
    done = subprocess.run([sys.executable, "-m", "madeval", "simulator", "--self-doubt", "1.5", "--port", "9"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["madeval: error: --self-doubt must be between 0 and 1, got 1.5"]


def _collective_improvement(generated_tasks, tmp_path, conformity: float):
    """3 agents, Collective Improvement, two turns, simple voting after the second; the answer rows."""
    config = DebateConfig(paradigm="collective_improvement", decider="simple_voting",
                          decider_args={"vote_after_turns": 2}, agents=3, max_turns=2)
    with simulate(tasks=generated_tasks.values(), accuracy=0.4, conformity=conformity) as sim:
        settings = RunSettings(tasks=["arith_mc"], configurations=[config], limit=40, base_url=sim.base_url,
                               output_path=str(tmp_path / f"c{conformity}"), cache="off", transport="direct")
        result, _ = run_quietly(settings)
        kinds = dict(sim.agents.stats.kinds)
    assert result.outcome.finished == 40 and result.outcome.failed == 0
    rows = {r["unit"]["item"]: Transcript.from_dict(r["transcript"]).trajectory() for r in read_records(result.folder)}
    return rows, kinds


def test_collective_improvement_agents_read_the_bare_solutions_and_conform(generated_tasks, tmp_path):
    """CI shows "Current Solution: C" and "Participant 2: C" lines without "Final Solution:" markers.

    Each agent is shown all three turn-1 solutions, its own included. Conforming always
    (conformity 1), it adopts the most common one; with three different answers that is a tie among
    all, which goes to its own answer. So turn 2 is the turn-1 majority for every agent when there
    is one, else turn 1 unchanged. Without conformity every agent keeps its private answer.
    """
    blind, blind_kinds = _collective_improvement(generated_tasks, tmp_path, 0.0)
    conforming, kinds = _collective_improvement(generated_tasks, tmp_path, 1.0)
    assert kinds["agree"] + kinds["disagree"] == 40 * 3  # turn 2 is read as a debate turn, not a fresh draft
    assert kinds["disagree"] > 0
    moved = 0
    for item, (first, second) in conforming.items():
        assert blind[item] == [first, first]  # same private answers; no conformity, no change
        counts = Counter(first)
        answer, top = counts.most_common(1)[0]
        expected = [answer] * 3 if top >= 2 else first
        assert second == expected, (item, first, second)
        moved += second != first
    assert moved > 0  # some debates had a split majority that conformity closed
    assert blind_kinds["agree"] == 40 * 3 and "disagree" not in blind_kinds  # each keeps its own solution
