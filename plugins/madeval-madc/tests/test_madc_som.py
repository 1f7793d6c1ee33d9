"""The Society-of-Minds responder: Du et al.'s prompts, one conversation per agent; the madc preset."""

from __future__ import annotations

from madeval.metrics.debate import AnswerEntropy, DebateView
from madeval.testing import debate

DU_UPDATE_TAIL = (
    "\n\n Using the reasoning from other agents as additional advice, can you give an updated answer? "
    "Examine your solution and that other agents step by step. Put your answer in the form (X) at the end "
    "of your response."
)


def script(turn, agent, purpose, messages):
    return {0: "It is B. Final Solution: B", 1: "It is A. Final Solution: A", 2: "It is B. Final Solution: B"}[agent]


def test_madc_som_paper_prompts_are_du_et_al_verbatim():
    transcript, llm = debate(script, responder="som", paradigm="som", decider="counting", agents=3,
                             max_turns=2, responder_args={"answer_format": "paper"},
                             item_input="What is 2 + 2?\nA) 3\nB) 4")
    first = llm.prompts(0, turn=1)[0]
    assert first == [{"role": "user", "content": "Can you answer the following question as accurately as possible? "
                      "What is 2 + 2?\nA) 3\nB) 4 Explain your answer, putting the answer in the form (X) at the end "
                      "of your response."}]
    second = llm.prompts(0, turn=2)[0]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[1]["content"] == "It is B. Final Solution: B"  # its own first answer
    assert second[2]["content"] == (
        "These are the solutions to the problem from other agents: "
        "\n\n One agent solution: ```It is A. Final Solution: A```"
        "\n\n One agent solution: ```It is B. Final Solution: B```" + DU_UPDATE_TAIL
    )
    assert transcript.decision.answer == "B" and transcript.trajectory() == [["B", "A", "B"], ["B", "A", "B"]]


def test_madc_som_task_format_and_system_prompt():
    _, llm = debate(script, responder="som", paradigm="som", decider="counting", agents=2, max_turns=3,
                    responder_args={"system": "You are a helpful assistant."}, instruction="Say 'FINAL SOLUTION: X'.")
    third = llm.prompts(1, turn=3)[0]
    assert third[0] == {"role": "system", "content": "You are a helpful assistant."}
    assert [m["role"] for m in third] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert third[1]["content"].endswith("Explain your answer.\n\nSay 'FINAL SOLUTION: X'.")
    assert third[-1]["content"].endswith(
        "Examine your solution and that other agents step by step. Answer in the format the task asks for: "
        "Say 'FINAL SOLUTION: X'.")
    assert third[3]["content"] == third[-1]["content"]  # the same peer answer both turns


def test_madc_som_single_agent_gets_the_double_check_prompt():
    _, llm = debate(script, responder="som", paradigm="som", decider="counting", agents=1, max_turns=2,
                    responder_args={"answer_format": "paper"})
    assert llm.prompts(0, turn=2)[0][-1]["content"] == (
        "Can you double check that your answer is correct. Put your final answer in the form (X) at the end of "
        "your response.")


def test_madc_core_entropy_reads_the_som_trajectory():
    transcript, _ = debate(script, responder="som", paradigm="som", decider="counting", agents=3, max_turns=2)
    scores = AnswerEntropy().score_debate("B", None, DebateView(transcript, "choice", "B"))
    assert round(scores["answer_entropy"], 4) == 0.9183  # B, A, B in the last turn
    assert round(scores["answer_entropy_sum"], 4) == 1.8366  # and in both turns
    per_turn = AnswerEntropy(per_turn=True).score_debate("B", None, DebateView(transcript, "choice", "B"))
    assert round(per_turn["answer_entropy_turn1"], 4) == round(per_turn["answer_entropy_turn2"], 4) == 0.9183


def test_madc_preset_runs_on_the_simulator(generated_tasks, tmp_path):
    from madeval.evaluation import run
    from madeval.settings.config import RunSettings, debate_config
    from madeval.simulator import simulate

    with simulate(tasks=generated_tasks.values(), accuracy=0.6, conformity=0.7) as sim:
        settings = RunSettings(tasks=["arith_mc"], configurations=[debate_config({"preset": "madc"})], limit=20,
                               base_url=sim.base_url, output_path=str(tmp_path / "run"), cache="off",
                               transport="direct")
        result = run(settings, show_progress=False, out=__import__("io").StringIO())
        kinds = dict(sim.agents.stats.kinds)
    assert result.outcome.finished == 20 and result.outcome.failed == 0
    assert kinds == {"draft": 100, "som_update": 100}  # 5 agents x 20 items, one debate round
    row = result.rows[0]
    assert row["label"] == "madc" and row["mean_turns"] == 2.0
