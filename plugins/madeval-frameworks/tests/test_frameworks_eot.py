"""Exchange-of-Thought: communication tables, confidence, prompts and both stopping rules."""

from __future__ import annotations

from madeval.testing import debate
from madeval_frameworks.eot import PERSONAS, confidence, sources

ITEM = "What is 2 + 2?\nA) 3\nB) 4\nC) 5"


def test_frameworks_eot_communication_tables_match_the_code():
    table = {mode: [sources(mode, agent, 3) for agent in range(3)] for mode in ("memory", "report", "relay", "debate")}
    assert table == {
        "memory": [[1, 2], [0, 2], [0, 1]],
        "report": [[1, 2], [0], [0]],
        "relay": [[1], [2], [0]],
        "debate": [[1, 2], [2], [1]],
    }


def test_frameworks_eot_confidence_is_the_share_of_the_most_frequent_answer():
    assert confidence(["A"]) is None  # needs two answers
    assert confidence(["A", "B"]) == 0.5
    assert confidence(["A", "A", "B"]) == 2 / 3
    assert confidence(["A", None, None]) == 2 / 3  # unparsed answers count, as in the code


# Kitty keeps A, Ben keeps B, Peter answers C then B: nobody agrees for three turns.
ANSWERS = {0: ["A", "A", "A"], 1: ["B", "B", "B"], 2: ["C", "B", "B"]}


def disagree(turn, agent, purpose, messages):
    return f"Step by step.\nThe answer is {ANSWERS[agent][turn - 1]}. Final Solution: {ANSWERS[agent][turn - 1]}"


def test_frameworks_eot_prompts_add_confidence_from_the_second_communication_round():
    transcript, llm = debate(disagree, responder="eot", paradigm="eot", decider="eot_consistency",
                             persona="eot", agents=3, max_turns=3, paradigm_args={"mode": "debate"},
                             responder_args={"format_hint": " (A/B/C)"}, item_input=ITEM)
    first = llm.prompts(0, turn=1)[0]
    assert first[0] == {"role": "system", "content": PERSONAS["Kitty"]}
    assert first[1]["content"] == ("Please consider the example provided and think it step by step. \n"
                                   "Question: Answer.\nWhat is 2 + 2?\nA) 3\nB) 4\nC) 5")
    ben = llm.prompts(1, turn=2)[0][1]["content"]  # debate mode: Ben hears Peter only
    assert ben == (
        "Please consider the example provided and think it step by step.\n"
        "Question: Answer.\nWhat is 2 + 2?\nA) 3\nB) 4\nC) 5\n"
        "Your Solution: Step by step. The answer is B. Final Solution: B\n"
        "Here is a solution process from your friend:\n"
        "Peter's Solution: Step by step. The answer is C. Final Solution: C\n"
        "Based on your friend's solution, carefully re-examine your previous answer. Utilize your talent and critical "
        "thinking to provide a new step-by-step solution process.\nProvide the new solution directly, refrain from "
        "commenting on your friend's approach, and conclude by stating, \"the answer is (A/B/C).\"\n")
    kitty = llm.prompts(0, turn=3)[0][1]["content"]  # Kitty hears Ben and Peter, with confidence
    assert ("Ben's Solution: Step by step. The answer is B. Final Solution: B\n"
            "Ben's confidence in this solution is: 1.0\n" in kitty)
    assert ("Peter's Solution: Step by step. The answer is B. Final Solution: B\n"
            "Peter's confidence in this solution is: 0.5\n" in kitty)
    assert ("If your friend's confidence level is below 0.5, "
            "it suggests a high probability that the solution might be incorrect." in kitty)
    decision = transcript.decision
    assert (decision.success, decision.reason, decision.details["answer"]) == (False, "max_turns_most_frequent", "B")


def test_frameworks_eot_stops_when_all_agree_even_after_the_first_turn():
    transcript, llm = debate(lambda t, a, p, m: "Final Solution: B", responder="eot", paradigm="eot",
                             decider="eot_consistency", persona="eot", agents=3, max_turns=6)
    assert (transcript.decision.success, transcript.decision.turn,
            transcript.decision.reason) == (True, 1, "consistency")
    assert len(llm.requests) == 3


def test_frameworks_eot_similarity_variant_uses_difflib_ratios_of_replies_when_asked():
    replies = {0: "the answer is b because two and two make four", 1: "the answer is b because 2 and 2 make four",
               2: "i think it is c"}

    def script(turn, agent, purpose, messages):
        return replies[agent] if turn == 1 else replies[0]

    transcript, _ = debate(script, responder="eot", paradigm="eot", decider="eot_consistency", persona="eot",
                           agents=3, max_turns=3,
                           decider_args={"similarity": 0.85, "compare": "responses", "min_exchanges": 0},
                           extract=lambda text: text.split("is ")[1][0].upper() if "is " in text else None)
    checks = [e for e in transcript.events if e["kind"] == "eot_check"]
    assert checks[0]["agreed"] is False and min(checks[0]["ratios"]) < 0.85
    assert checks[1]["agreed"] is True and checks[1]["ratios"] == [1.0, 1.0, 1.0]
    assert transcript.decision.turn == 2 and transcript.decision.details["answer"] == "B"


# Replies worded alike whatever the answer (as the simulator's): C, C, D, then C, C, D again, then C, C, C.
ALIKE = {1: "CCD", 2: "CCD", 3: "CCC"}


def alike(turn, agent, purpose, messages):
    return f"Here is my updated solution. Final Solution: {ALIKE[turn][agent]}"


def test_frameworks_eot_similarity_compares_answers_after_an_exchange():
    transcript, llm = debate(alike, responder="eot", paradigm="eot", decider="eot_consistency", persona="eot",
                             agents=3, max_turns=3, decider_args={"similarity": 0.85})
    checks = [(e["turn"], e["agreed"], e["ratios"]) for e in transcript.events if e["kind"] == "eot_check"]
    # No check after the independent answers; then the lower-cased answers "c", "c", "d" are compared.
    assert checks == [(2, False, [1.0, 0.0, 0.0]), (3, True, [1.0, 1.0, 1.0])]
    assert (transcript.decision.success, transcript.decision.turn,
            transcript.decision.details["answer"]) == (True, 3, "C")
    assert "Peter's Solution: Here is my updated solution. Final Solution: D" in llm.prompts(0, turn=2)[0][1]["content"]
    # Whole replies, checked from turn 1, would have stopped before any exchange: C, C and D look alike.
    early, _ = debate(alike, responder="eot", paradigm="eot", decider="eot_consistency", persona="eot",
                      agents=3, max_turns=3,
                      decider_args={"similarity": 0.85, "compare": "responses", "min_exchanges": 0})
    assert early.decision.turn == 1 and min(early.events[-1]["ratios"]) > 0.85


def test_frameworks_eot_similarity_checks_after_an_exchange_even_when_all_agree_at_once():
    transcript, llm = debate(lambda t, a, p, m: "Final Solution: B", responder="eot", paradigm="eot",
                             decider="eot_consistency", persona="eot", agents=3, max_turns=3,
                             decider_args={"similarity": 0.85})
    assert (transcript.decision.success, transcript.decision.turn) == (True, 2)
    assert len(llm.requests) == 6


def test_frameworks_eot_similarity_preset_exchanges_on_the_simulator(generated_tasks, tmp_path):
    """On the simulator the preset holds a communication round, and agents that disagree keep talking."""
    import io

    from madeval.evaluation import run
    from madeval.records.folder import read_records
    from madeval.settings.config import RunSettings, debate_config
    from madeval.simulator import simulate

    with simulate(tasks=generated_tasks.values(), accuracy=0.5, conformity=0.5) as sim:
        settings = RunSettings(tasks=["arith_mc"], configurations=[debate_config({"preset": "eot_similarity"})],
                               limit=20, base_url=sim.base_url, output_path=str(tmp_path / "run"), cache="off",
                               transport="direct")
        result = run(settings, show_progress=False, out=io.StringIO())
        kinds = dict(sim.agents.stats.kinds)
    assert result.outcome.finished == 20 and result.outcome.failed == 0
    assert kinds["eot_update"] >= 20 * 3  # every debate has at least one communication round
    disagreeing = 0
    for record in read_records(result.folder):
        transcript = record["transcript"]
        first = [m["answer"] for m in transcript["messages"] if m["turn"] == 1]
        checks = [e for e in transcript["events"] if e["kind"] == "eot_check"]
        assert record["turns"] >= 2 and checks[0]["turn"] == 2
        for check in checks:  # a check passes exactly when all answers are the same letter
            assert check["agreed"] == (len(set(check["answers"])) == 1)
        disagreeing += len(set(first)) > 1
    assert disagreeing >= 5  # debates whose agents disagreed at first, then exchanged their solutions
