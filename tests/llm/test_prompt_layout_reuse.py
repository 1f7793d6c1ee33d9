"""What a prefix cache can reuse of the MALLM prompts (issue 17), and why the rest is published layout.

Figure 11 (seed 000, Appendix G.1) prints one system prompt whose lines run persona, task, input,
"Current Solution:", "Discussion so far:" with the memory last, and the stage prompts (Figures
15-23) are "appended to the system prompt in Figure 11". madeval keeps that order; within it the
memory is rendered oldest first, one line per message, so as long as the current solution stays
and no turn drops out of the window an agent's next system prompt extends its previous one.
"""

from __future__ import annotations

from madeval.debate.prompts import mallm
from madeval.llm.prefix_reuse import prefix_reuse, prompt_tokens
from madeval.testing import debate

FIRST_DRAFT = "First draft. Final Solution: B"


def agreeing_after_the_first_draft(turn, agent, purpose, messages):
    """Agent 1 drafts in turn 1; every later message agrees, so the current solution never changes."""
    return FIRST_DRAFT if (turn, agent) == (1, 0) else f"[AGREE] turn {turn} agent {agent + 1}. Final Solution: B"


def second_agents_prompts(**paradigm_args):
    _, llm = debate(agreeing_after_the_first_draft, decider="counting", max_turns=4, paradigm_args=paradigm_args)
    return [llm.prompts(1, turn=turn)[0] for turn in (1, 2, 3, 4)]


def test_mallm_memory_only_grows_while_the_solution_stays_and_no_turn_drops_out():
    prompts = second_agents_prompts(visible_turns_in_memory=4)
    for earlier, later in zip(prompts, prompts[1:]):
        (old_system, old_user), (new_system, new_user) = earlier, later
        assert new_system["content"].startswith(old_system["content"] + "\n")
        assert new_user == old_user == {"role": "user", "content": mallm.SIMPLE_IMPROVE}
        # The whole earlier system prompt is reusable: everything but the appended lines and the
        # instruction after them (published placement: appended to the system prompt).
        reusable = prefix_reuse([prompt_tokens(earlier), prompt_tokens(later)]).reusable_tokens
        assert reusable == len(prompt_tokens([old_system]))
    last = prompts[-1][0]["content"]
    # Figure 11's wording and order, verbatim: persona, task, input, current solution, discussion.
    assert last.startswith("You take part in a discussion to solve a task.\n\nYour role: Participant 2\nTask: Answer.\n"
                           "Input: ")
    assert "\nCurrent Solution: First draft. Final Solution: B\nDiscussion so far: \n" in last
    assert last.index("Current Solution:") < last.index("Discussion so far:")
    # Oldest first, one line per message: 3 messages in each of turns 1-3, then agent 1 in turn 4.
    memory = last.split("Discussion so far: \n", 1)[1].splitlines()
    assert memory[0] == f"Participant 1: {FIRST_DRAFT}"
    assert memory[-1] == "Participant 1: [AGREE] turn 4 agent 1. Final Solution: B" and len(memory) == 10


def test_mallm_default_memory_window_drops_the_oldest_turn_so_the_discussion_restarts():
    # visible_turns_in_memory 2 (the default): in turn 4 turn 1 drops out, and with it the first
    # memory line, so turn 4's prompt no longer extends turn 3's (this is what the option changes).
    prompts = second_agents_prompts()
    turn3, turn4 = (p[0]["content"] for p in prompts[2:])
    assert turn3.split("Discussion so far: \n", 1)[1].startswith(f"Participant 1: {FIRST_DRAFT}")
    assert turn4.split("Discussion so far: \n", 1)[1].startswith("Participant 1: [AGREE] turn 2 agent 1.")
    assert not turn4.startswith(turn3)
    # What stays reusable is the system prompt up to the memory, plus "Participant", "1", ":" of
    # the first memory line (both start with agent 1's message).
    head = turn3.split("Discussion so far: \n", 1)[0] + "Discussion so far: \n"
    common = prefix_reuse([prompt_tokens(prompts[2]), prompt_tokens(prompts[3])]).reusable_tokens
    assert common == len(prompt_tokens([{"role": "system", "content": head}])) + 3


def test_bench_prefix_reuse_visible_turns_sets_the_built_in_paradigms_window_only():
    """``python -m bench prefix-reuse --visible-turns N``: the option, for the built-in paradigms."""
    from bench.prefix_reuse import PARADIGMS, configurations

    default = dict(configurations(5))
    lifted = dict(configurations(5, visible_turns=5))
    assert set(default) == set(lifted)
    for name in PARADIGMS:
        assert default[name].paradigm_args == {}
        assert lifted[name].paradigm_args == {"visible_turns_in_memory": 5}
    assert all(lifted[name] == default[name] for name in default if name not in PARADIGMS)  # presets: as given
