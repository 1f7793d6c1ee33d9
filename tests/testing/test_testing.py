"""madeval.testing, the simulator's plugin hook, and the smallest plugin (examples/madeval-lastword) end to end."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from helpers import run_quietly, settings_for
from madeval import hookimpl
from madeval.core.plugins import registries
from madeval.records.folder import read_records
from madeval.simulator.agents import AgentProfile, SyntheticAgents
from madeval.simulator.truth import GoldIndex
from madeval.testing import registered
from madeval_madc import plugin as madc_plugin

LASTWORD = Path(__file__).resolve().parents[2] / "examples" / "madeval-lastword" / "madeval_lastword.py"
QUESTION = "Which letter follows A?"


@pytest.fixture(scope="module")
def lastword() -> types.ModuleType:
    """The example plugin's module, imported from its file as an installed package would be."""
    spec = importlib.util.spec_from_file_location("madeval_lastword", LASTWORD)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lastword_example_own_test_passes(tmp_path):
    """The example package's test, as its author runs it (the module importable, madeval installed)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(LASTWORD.parent), os.environ.get("PYTHONPATH", "")]),
           "MADEVAL_LOAD_PLUGINS": ""}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           str(LASTWORD.parent / "tests")],
                          cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0 and "1 passed" in done.stdout, done.stdout[-2000:]


def test_registered_adds_a_plugin_for_the_block_only(lastword):
    assert "last_word" not in registries().deciders.names()
    with registered(lastword):
        assert registries().deciders.resolve("last_word").plugin == "madeval_lastword"
    assert "last_word" not in registries().deciders.names()


def test_lastword_plugin_decides_after_the_first_turn_on_the_simulator(lastword, sim, tmp_path):
    """Every debate stops after turn 1 with the answer of that turn's last message (agent 3 of 3)."""
    with registered(lastword):
        result, _ = run_quietly(settings_for(sim.base_url, tmp_path, decider="last_word", limit=8, cache="off"))
    records = list(read_records(result.folder))
    assert len(records) == 8
    for record in records:
        transcript = record["transcript"]
        last = transcript["messages"][-1]
        assert (record["turns"], record["decision_success"],
                transcript["decision"]["decider"]) == (1, True, "last_word")
        assert (last["turn"], last["agent"]) == (1, 2)
        assert record["prediction"] == last["answer"]
    # The last speaker is not always the majority: some debate's answer is its first agent's minority.
    assert any(r["transcript"]["messages"][0]["answer"] != r["prediction"] for r in records)


def agents_knowing_the_question() -> SyntheticAgents:
    """Synthetic agents that always know the answer (B) to QUESTION."""
    truth = GoldIndex()
    truth.add(QUESTION, "choice", "B", 4)
    return SyntheticAgents(truth, default=AgentProfile(accuracy=1.0))


def ask(sim: SyntheticAgents, *messages: dict) -> str:
    return sim({"messages": list(messages), "seed": 1})[0]


def echo_plugin() -> types.ModuleType:
    """A plugin whose simulator hook answers the prompts that say "echo", with the private answer."""
    module = types.ModuleType("echo_plugin")

    @hookimpl
    def simulator_reply(prompt):
        return prompt.final("echo", prompt.private, lead="Echo.") if "echo" in prompt.lowered else None

    module.simulator_reply = simulator_reply
    return module


def test_simulator_asks_the_plugins_first_and_answers_the_rest_itself():
    sim = agents_knowing_the_question()
    echo = {"role": "user", "content": f"{QUESTION} Echo, please."}
    plain = {"role": "user", "content": QUESTION}
    with registered(echo_plugin()):
        assert ask(sim, echo) == "Echo. Final Solution: B"
        assert ask(sim, plain) == "Here is my solution. Final Solution: B"
    assert ask(sim, echo) == "Here is my solution. Final Solution: B"  # unregistered: madeval's own draft
    assert sim.stats.kinds == {"echo": 1, "draft": 2}


def test_society_of_minds_prompts_are_answered_by_the_madc_plugin_hook():
    """The update prompt shows two peers answering C; an agent that conforms always takes it."""
    truth = GoldIndex()
    truth.add(QUESTION, "choice", "B", 4)
    sim = SyntheticAgents(truth, default=AgentProfile(accuracy=1.0, conformity=1.0))
    update = {"role": "user", "content": "These are the solutions to the problem from other agents: \n\n One agent "
              "solution: ```Final Solution: C```\n\n One agent solution: ```Final Solution: C```"}
    conversation = ({"role": "user", "content": QUESTION},
                    {"role": "assistant", "content": "Final Solution: B"}, update)
    with registered(madc_plugin):
        assert ask(sim, *conversation) == "Here is my updated solution. Final Solution: C"
    assert sim.stats.kinds == {"som_update": 1}
    # Without madeval-madc, madeval's core does not know Du et al.'s prompt: an independent draft.
    assert ask(sim, *conversation) == "Here is my solution. Final Solution: B"
    assert sim.stats.kinds == {"som_update": 1, "draft": 1}


def test_madeval_testing_imports_without_pytest():
    """Plugin code may import madeval.testing's helpers where pytest is not installed."""
    code = "import sys, madeval.testing; sys.exit('pytest' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
