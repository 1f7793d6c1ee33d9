"""Free-MAD's trajectory score: the worked example, ties, options, unparsed answers and replay."""

from __future__ import annotations

import asyncio
import random

import pytest

from madeval.core.components import DebateSetup, TaskPrompt
from madeval.core.plugins import registries
from madeval.debate.replay import replay
from madeval.errors import UsageError
from madeval.testing import ScriptedLLM, debate, letter
from madeval_freemad.score import parse_factor, parse_weights, score_trajectory

# methods.md 1.1: round 0 answers A, A, B; in round 1 agent 2 switches A -> C.
WORKED = [["A", "A", "B"], ["A", "C", "B"]]


def worked_script(turn, agent, purpose, messages):
    answers = WORKED[turn - 1]
    return f"I reason carefully. Final Solution: {answers[agent]}"


def test_freemad_worked_example_scores_a_375_b_30_c_15():
    scoring = score_trajectory(WORKED, (20, 25, 30, 20), parse_factor("inverse"))
    assert scoring.scores == {"A": 37.5, "B": 30.0, "C": 15.0}
    assert scoring.factors == [1.0, 0.5]
    assert scoring.leaders() == ["A"]
    rules = [(u["round"], u["agent"], u["answer"], u["delta"], u["rule"]) for u in scoring.updates]
    assert rules == [
        (0, 0, "A", 20.0, "initial"), (0, 1, "A", 20.0, "initial"), (0, 2, "B", 20.0, "initial"),
        (1, 0, "A", 10.0, "kept"), (1, 1, "A", -12.5, "abandoned"), (1, 1, "C", 15.0, "adopted"),
        (1, 2, "B", 10.0, "kept"),
    ]


def test_freemad_decider_picks_a_in_the_worked_example_debate():
    transcript, _ = debate(worked_script, responder="conformity", paradigm="som", decider="freemad_score",
                           agents=3, max_turns=2)
    decision = transcript.decision
    assert decision.success and decision.turn == 2 and decision.decider == "freemad_score"
    assert decision.details["winner"] == "A" and decision.details["scores"] == {"A": 37.5, "B": 30.0, "C": 15.0}
    assert letter(decision.answer) == "A"
    event = next(e for e in transcript.events if e["kind"] == "freemad_score")
    assert event["trajectory"] == WORKED and event["weights"] == [20.0, 25.0, 30.0, 20.0] and not event["tie"]


def test_freemad_later_rounds_weigh_less():
    # Three rounds: agent 1 switches A -> B in round 2 (f = 1/3): A 40 + 10 + 20/3 - 25/3, B 20 + 10 + 20/3 + 10.
    scoring = score_trajectory([["A", "A", "B"], ["A", "A", "B"], ["A", "B", "B"]])
    assert scoring.scores["A"] == pytest.approx(40 + 20 + 20 / 3 - 25 / 3)
    assert scoring.scores["B"] == pytest.approx(20 + 10 + 20 / 3 + 10)
    assert scoring.leaders() == ["A"]


def test_freemad_unparsed_answers_add_nothing_and_are_compared_with_the_last_parsed_one():
    scoring = score_trajectory([[None, "A", "B"], ["C", None, "B"], ["C", "A", "B"]])
    # agent 0: nothing, adopts C in round 1 (+15), keeps it in round 2 (+20/3);
    # agent 1: A (+20), nothing, A again = kept (+20/3); agent 2: B +20, +10, +20/3.
    assert scoring.scores == pytest.approx({"A": 20 + 20 / 3, "B": 20 + 10 + 20 / 3, "C": 15 + 20 / 3})
    assert score_trajectory([[None, None]]).leaders() == []


def test_freemad_ties_are_broken_from_the_debate_seed():
    def winner(seed):
        transcript, _ = debate(lambda t, a, p, m: ["Final Solution: A", "Final Solution: B"][a],
                               responder="conformity", paradigm="som", decider="freemad_score",
                               agents=2, max_turns=1, seed=seed)
        details = transcript.decision.details
        assert details["tie"] and details["leaders"] == ["A", "B"] and details["scores"] == {"A": 20.0, "B": 20.0}
        return details["winner"]

    winners = [winner(seed) for seed in range(12)]
    assert winners == [winner(seed) for seed in range(12)]  # the same seed, the same winner
    assert set(winners) == {"A", "B"}  # and both win for some seeds


def test_freemad_options_weights_factor_and_bad_values():
    assert parse_weights("10;0;5;1") == (10.0, 0.0, 5.0, 1.0)
    assert parse_weights([20, 25, 30, 20]) == (20.0, 25.0, 30.0, 20.0)
    assert [parse_factor("1;0.25")(k) for k in range(3)] == [1.0, 0.25, 0.25]
    assert parse_factor("halving")(2) == 0.25 and parse_factor("constant")(5) == 1.0
    # With w2 = w3 = 0 only initial and kept answers count; agent 0 switching A -> B changes nothing.
    transcript, _ = debate(lambda t, a, p, m: ["Final Solution: A", "Final Solution: B",
                                               "Final Solution: B"][a] if t == 1 else "Final Solution: B",
                           responder="conformity", paradigm="som", decider="freemad_score", agents=3,
                           max_turns=2, decider_args={"weights": "1;0;0;1", "factor": "constant"})
    assert transcript.decision.details["scores"] == {"A": 1.0, "B": 4.0}  # A 1; B 1 + 1, then kept twice
    deciders = registries().deciders
    with pytest.raises(UsageError, match=r"decider 'freemad_score': weights must be four numbers"):
        deciders.create("freemad_score", {"weights": "20;25;30"})
    with pytest.raises(UsageError, match="weights must be four numbers >= 0"):
        deciders.create("freemad_score", {"weights": "20;-25;30;20"})
    with pytest.raises(UsageError, match="factor must be one of inverse, constant, halving"):
        deciders.create("freemad_score", {"factor": "quadratic"})


def test_freemad_score_replays_on_a_stored_debate_exactly_as_live():
    live, _ = debate(worked_script, responder="conformity", paradigm="som", decider="freemad_score",
                     agents=3, max_turns=2, seed=5)
    stored, _ = debate(worked_script, responder="conformity", paradigm="som", decider="counting",
                       agents=3, max_turns=2, seed=5)
    built = registries()
    setup = DebateSetup(personas=[built.personas.create("none") for _ in range(3)],
                        responder=built.responders.create("conformity"), paradigm=built.paradigms.create("som"),
                        decider=built.deciders.create("freemad_score"), agents=3, max_turns=2)
    assert setup.decider.transcript_only
    replayed = asyncio.run(replay(setup, stored, TaskPrompt("Answer.", "What is 2 + 2?"),
                                  lambda t: ScriptedLLM(lambda *a: "", t), extract=letter, rng=random.Random(5)))
    assert replayed.decision == live.decision
    assert replayed.calls == []  # no new call: the score reads the transcript only
