"""``madeval.testing.decided``: one way for a plugin's test to read what a debate decided, whatever kind
of decider decided it (issue 31, item 6). The documented ``letter(transcript.decision.answer)`` was
None for every decider that returns an answer rather than a whole reply."""

from __future__ import annotations

import pytest

from madeval.testing import core_registries, debate, decided, letter

#: Turn 1: agent 1 says A, agents 2 and 3 say B (agent 3 agreeing with agent 2); turn 2: all B, agreeing.
REPLIES = {
    (1, 0): "I think A. Final Solution: A",
    (1, 1): "[DISAGREE] It is B. Final Solution: B",
    (1, 2): "[AGREE] Final Solution: B",
}
#: Each voter backs solution 2 (agent 2's B) in the ballot form of its protocol.
BALLOTS = {"simple_voting": "2", "approval_voting": "2, 3", "ranked_voting": "2 3 1",
           "cumulative_voting": '{"2": 6, "3": 4}', "consensus_voting": "2"}
#: Options that let each decider decide within two turns.
OPTIONS = {**{name: {"vote_after_turns": 1} for name in BALLOTS}, "judge": {"after_turns": 1}}


def script(decider):
    """Replies of the debate above; votes by :data:`BALLOTS`, the judge picks B."""

    def reply(turn, agent, purpose, messages):
        if purpose == "vote":
            return BALLOTS[decider]
        if purpose == "judge":
            return "Having read the three: Final Solution: B"
        return REPLIES[(1, agent)] if turn == 1 else "[AGREE] Final Solution: B"

    return reply


#: madeval's own deciders (no installed plugin is loaded here: see core_registries).
BUILT_IN = sorted(entry.name for entry in core_registries().deciders.entries.values()
                  if entry.plugin.startswith("madeval.builtins."))


def test_every_built_in_decider_is_covered():
    assert set(BUILT_IN) == {"majority_consensus", "supermajority_consensus", "unanimity_consensus",
                             "hybrid_consensus", "counting", *BALLOTS, "judge"}


@pytest.mark.parametrize("decider", BUILT_IN)
def test_decided_reads_the_answer_of_every_built_in_decider(decider):
    transcript, _ = debate(script(decider), decider=decider, decider_args=OPTIONS.get(decider), max_turns=2)
    assert transcript.decision.success, transcript.decision
    assert decided(transcript) == "B"


def test_the_old_pattern_missed_the_deciders_that_return_an_answer():
    """Counting and the votes return ``B``; consensus and the judge a whole reply. Only ``decided``
    reads both."""
    counted, _ = debate(script("counting"), decider="counting", max_turns=2)
    voted, _ = debate(script("simple_voting"), decider="simple_voting", decider_args=OPTIONS["simple_voting"],
                      max_turns=2)
    agreed, _ = debate(script("majority_consensus"), decider="majority_consensus", max_turns=2)
    assert [t.decision.answer for t in (counted, voted)] == ["B", "B"]
    assert [letter(t.decision.answer) for t in (counted, voted, agreed)] == [None, None, "B"]
    assert [decided(t) for t in (counted, voted, agreed)] == ["B", "B", "B"]


def test_a_decision_with_no_readable_answer_is_none():
    """An answer no message of the debate gave, or none at all, reads as nothing (scored as wrong)."""
    transcript, _ = debate(lambda turn, agent, purpose, messages: "I am not sure.", decider="counting", max_turns=1)
    assert transcript.decision.answer is None and decided(transcript) is None
    judged, _ = debate(lambda turn, agent, purpose, messages: "Final Solution: B" if purpose != "judge" else "C",
                       decider="judge", decider_args={"after_turns": 1}, max_turns=1)
    assert judged.decision.answer == "C" and decided(judged) is None
