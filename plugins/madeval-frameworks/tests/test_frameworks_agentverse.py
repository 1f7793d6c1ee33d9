"""AgentVerse: recruitment, the solver-first review loop, the evaluator's correctness and the answer."""

from __future__ import annotations

from madeval.testing import debate
from madeval_frameworks.agentverse import correctness, roles_from

ROLES = "1. a mathematician who checks arithmetic.\n2. a teacher of algebra\n3. a logician"


def make_script(reviews, evaluations, plans=("Plan. Final Solution: A", "Revised. Final Solution: B")):
    """``reviews[turn]`` lists each review round's replies per critic; the solver's n-th plan is ``plans[n]``."""
    state = {"plans": 0, "reviews": {}}

    def script(turn, agent, purpose, messages):
        if purpose == "recruit":
            return ROLES
        if purpose == "solve":
            state["plans"] += 1
            return plans[min(state["plans"], len(plans)) - 1]
        if purpose == "critique":
            round_ = state["reviews"].setdefault((turn, agent), 0)
            state["reviews"][(turn, agent)] += 1
            return reviews[turn][min(round_, len(reviews[turn]) - 1)][agent - 3]
        return evaluations[turn - 1]

    return script


def run(script, agents=5, max_turns=3):
    return debate(script, responder="agentverse", paradigm="agentverse", decider="agentverse_evaluator",
                  agents=agents, neutral=(0, 1), max_turns=max_turns)


def test_frameworks_agentverse_parsers():
    assert roles_from(ROLES) == ["a mathematician who checks arithmetic", "a teacher of algebra", "a logician"]
    assert correctness("Correctness: 1\nResponse: fine") == 1 and correctness("correctness: (0)") == 0
    assert correctness("no verdict") is None


def test_frameworks_agentverse_agreeing_critics_end_the_review_and_correctness_1_ends_the_task():
    reviews = {1: [["Looks right. [Agree]", "Same answer. [Agree]"]]}
    transcript, llm = run(make_script(reviews, ["Correctness: 1\nResponse: correct"]))
    stages = [(m.agent, m.stage) for m in transcript.messages]
    assert stages == [(0, "recruit"), (2, "solve"), (3, "critique"), (4, "critique"), (1, "evaluate")]
    decision = transcript.decision
    assert (decision.success, decision.turn, decision.answer,
            decision.reason) == (True, 1, "Plan. Final Solution: A", "evaluator_correct")
    solver = llm.prompts(2, turn=1)[0]
    assert solver[0]["content"].startswith("Solve the following math problem: \nAnswer.\n\nWhat is 2 + 2?")
    assert solver[-1]["content"].startswith("You are a mathematician who checks arithmetic. "
                                            "Using the information in the chat history")
    critic = llm.prompts(4, turn=1)[0]
    assert critic[0]["content"].startswith("You are a logician. You are in a discussion group")
    assert critic[1] == {"role": "user", "content": "[Solver]: Plan. Final Solution: A"}
    assert critic[-1]["content"].endswith('end your response with a special token "[Agree]".')
    evaluator = llm.prompts(1, turn=1)[0]
    assert evaluator[0]["content"].endswith("Solution: \n```\nPlan. Final Solution: A\n```")
    assert evaluator[0]["content"].startswith("Experts: a mathematician who checks arithmetic\n"
                                              "a teacher of algebra\na logician\n")
    recruiter = llm.prompts(0, turn=1)[0]
    assert ("You can recruit 3 expert in different fields." in recruiter[0]["content"]
            and "No advice yet." in recruiter[0]["content"])


def test_frameworks_agentverse_objections_make_the_solver_revise_at_most_three_times():
    objection = ["Wrong: it is B.", "[Agree]"]
    reviews = {1: [objection, objection, objection], 2: [["[Agree]", "[Agree]"]]}
    transcript, llm = run(make_script(reviews,
                                      ["Correctness: 0\nResponse: check the sum", "Correctness: 1\nResponse: ok"]))
    first = [(m.agent, m.stage) for m in transcript.messages if m.turn == 1]
    assert first == [(0, "recruit"), (2, "solve")] + [(3, "critique"), (4, "critique"),
                                                      (2, "solve")] * 3 + [(1, "evaluate")]
    assert transcript.decision.turn == 2 and transcript.decision.answer == "Revised. Final Solution: B"
    # The evaluator's advice reaches the role assigner and the group in the next iteration.
    assert ("Here are some suggestion:\nCorrectness: 0\nResponse: check the sum"
            in llm.prompts(0, turn=2)[0][0]["content"])
    history = [m["content"] for m in llm.prompts(2, turn=2)[0][1:-1]]
    assert history[:2] == ["[Solver]: Revised. Final Solution: B",
                           "[Evaluator]: Correctness: 0\nResponse: check the sum"]
    # An agreeing critic backs the solver's plan; an objecting one proposes nothing.
    critiques = [m for m in transcript.messages if m.stage == "critique" and m.turn == 1]
    assert [m.agreement for m in critiques[:2]] == [False, True] and critiques[1].answer == "A"


def test_frameworks_agentverse_without_acceptance_returns_the_last_plan():
    reviews = {t: [["[Agree]"]] for t in (1, 2)}
    transcript, _ = run(make_script(reviews, ["Correctness: 0\nResponse: no"] * 2), agents=4, max_turns=2)
    decision = transcript.decision
    assert (decision.success, decision.reason,
            decision.answer) == (False, "max_turns_last_plan", "Revised. Final Solution: B")
