"""ChatEval's three communication strategies: who sees what, the summary prompt, the roles, the layout."""

from __future__ import annotations

import pytest

from madeval.errors import UsageError
from madeval.llm.prefix_reuse import prefix_reuse, prompt_tokens
from madeval.testing import debate
from madeval_frameworks.chateval import ROLES

QUESTION = "Question: Answer.\nWhat is 2 + 2?\nA) 3\nB) 4\n\n"


def script(turn, agent, purpose, messages):
    if purpose == "summarize":
        return f"Summary after round {turn}."
    return f"Round {turn}, agent {agent}. Final Solution: B"


def run(strategy, agents=3, neutral=0):
    return debate(script, responder="chateval", paradigm="chateval", decider="counting", persona="chateval",
                  agents=agents, neutral=range(neutral), max_turns=2, paradigm_args={"strategy": strategy})


def system(llm, agent, turn):
    return llm.prompts(agent, turn=turn)[0][0]["content"]


def test_frameworks_chateval_one_by_one_sees_everything_said_so_far():
    transcript, llm = run("one_by_one")
    assert [(m.turn, m.step, m.agent) for m in transcript.messages] == [(1, 0, 0), (1, 1, 1), (1, 2, 2),
                                                                        (2, 0, 0), (2, 1, 1), (2, 2, 2)]
    critic = system(llm, 1, 1)
    assert critic.startswith(QUESTION + "You are Critic, part of a group discussing this question.")
    assert ("Here's what's been said so far: [General Public]: Round 1, agent 0. Final Solution: B. "
            "In non-final rounds" in critic)
    assert system(llm, 0, 1).count("[") == 0 and "(nothing yet)" in system(llm, 0, 1)
    user = llm.prompts(2, turn=2)[0][1]["content"]
    assert user.endswith("This is round 2 of 2. This is the final round.\n\nNow it's your time to talk, "
                         "please make your talk short and clear, Scientist !")
    assert transcript.decision.answer == "B"


def test_frameworks_chateval_simultaneous_sees_only_earlier_rounds():
    _, llm = run("simultaneous")
    assert "(nothing yet)" in system(llm, 2, 1)
    second = system(llm, 2, 2)
    assert all(f"Round 1, agent {a}." in second for a in range(3)) and "Round 2" not in second


def test_frameworks_chateval_summary_replaces_the_history():
    transcript, llm = run("summarizer", agents=4, neutral=1)
    assert [m.agent for m in transcript.messages if m.turn == 1] == [1, 2, 3, 0]
    summary_prompt = llm.prompts(0, turn=2)[0][0]["content"]
    assert summary_prompt == (
        "Summarize the lines of the new lines which contains the currently observed chat history with other people.\n"
        "Based on the Current summary, you need to summarize from the New lines , add it onto the previous summary, "
        "and eventually return a New summary.\n\nNow, try to summarize the following record.\n\n"
        "Current summary:\nSummary after round 1.\n\nNew lines:\n"
        "Round 2, agent 1. Final Solution: B\nRound 2, agent 2. Final Solution: B\n"
        "Round 2, agent 3. Final Solution: B\n\n"
        "New summary:\n")
    second = system(llm, 1, 2)
    assert second.startswith(QUESTION + "You are General Public") and "said so far: Summary after round 1.." in second
    assert "Round 1, agent" not in second
    assert transcript.decision.details["answers"] == ["B", "B", "B"]  # the summarizer does not vote


def test_frameworks_chateval_layout_is_checked():
    with pytest.raises(UsageError, match=r"paradigm 'chateval' \(summarizer\) needs exactly 1 neutral agent"):
        run("summarizer")
    with pytest.raises(UsageError, match="strategy must be one of one_by_one, simultaneous, summarizer"):
        run("round_robin")


def test_frameworks_chateval_every_call_opens_with_the_question_and_the_history_only_grows():
    # The question leads (ChatEval's own template opens with it), so all calls share it; the
    # history sits inside the published role prompt, so an agent's next system prompt extends its
    # previous one up to the end of the history, and what follows it is new on every call.
    _, llm = run("one_by_one")
    calls = [prompt for _, _, _, prompt in llm.requests]
    assert all(prompt[0]["content"].startswith(QUESTION + "You are ") for prompt in calls)
    for agent, role in ((1, "Critic"), (2, "Scientist")):  # agent 0 sees "(nothing yet)" in round 1
        first, second = system(llm, agent, 1), system(llm, agent, 2)
        history = first.split("so far: ", 1)[1].split(". In non-final")[0]
        assert history.startswith("[General Public]: Round 1, agent 0.")
        assert first == QUESTION + ROLES[role].replace("{chat_history}", history)  # the role's words, verbatim
        up_to_history = first[: first.index(". In non-final rounds")]
        assert second.startswith(up_to_history + "\n[")  # the same history, then the lines said since
        reused = prefix_reuse([prompt_tokens(llm.prompts(agent, turn=1)[0]),
                               prompt_tokens(llm.prompts(agent, turn=2)[0])])
        assert reused.reusable_tokens == len(prompt_tokens([{"role": "system", "content": up_to_history}]))
    # Across agents: the question and "You are" are the common prefix of the first round's calls.
    firsts = [prompt_tokens(llm.prompts(agent, turn=1)[0]) for agent in range(3)]
    assert prefix_reuse(firsts).reusable_tokens == 2 * len(prompt_tokens([{"role": "system",
                                                                            "content": QUESTION + "You are"}]))
