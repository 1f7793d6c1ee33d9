"""Reading [AGREE]/[DISAGREE]: the cases MALLM's substring test gets wrong, and more."""

from __future__ import annotations

import pytest

from helpers import debate
from madeval.core.transcript import NO_AGREEMENT_MARKER
from madeval.debate.agreement import parse_agreement, strip_markers


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # explicit markers, then the verbs
        ("I cannot agree with this solution.", False),  # MALLM reads this as agreement
        ("The disagreement is resolved; [AGREE]", True),  # MALLM reads this as disagreement
        ("[AGREE] The solution is right.", True),
        ("[DISAGREE] The answer should be C.", False),
        ("[ disagree ] no", False),
        ("[DISAGREE] at first, but after checking: [AGREE]", False),  # the leading stance counts
        ("AGREE. The solution holds.", True),
        ("I agree with the current solution.", True),
        ("I don't fully agree with that.", False),
        ("We do not disagree on the facts.", True),
        ("I disagree.", False),
        ("There is broad agreement here.", None),  # nouns never count
        ("The answer is B.", None),
        # a negation before a marker or a verb flips it
        ("I cannot AGREE.", False),  # a bare word after a negation
        ("I do not AGREE with this answer.", False),
        ("I DO NOT AGREE", False),
        ("I cannot [AGREE] with this.", False),  # a bracketed marker after a negation
        ("I would **not** [AGREE] here.", False),
        ("I do not [DISAGREE].", True),  # a negated disagreement agrees
        ("I can't say I agree", False),  # two words between the negation and the verb
        ("I don’t agree.", False),  # curly apostrophe
        ("I see no reason to disagree.", True),
        ("I could not agree more", True),  # an idiom: emphatic agreement
        ("I couldn’t agree more with agent 2.", True),
        # a negation in another clause does not flip it
        ("No, [AGREE]", True),  # the negation ends with its clause
        ("Not sure at first. [AGREE]", True),
        ("I don't like the wording but [AGREE]", True),
        ("The solution is not wrong; I agree.", True),
        ("This is not the answer I expected, [AGREE]", True),
        # adversarial replies
        ("I agree with parts of it, but [DISAGREE]", False),  # a marker beats verbs around it
        ("[DISAGREE] I agree the reasoning is plausible, yet the answer is C.", False),
        ("I agree that the draft is well argued. DISAGREE", False),  # the bare word beats the verb
        ("**[AGREE]** The solution holds.", True),  # markdown bold
        ("**AGREE**", True),
        ("'AGREE'", True),  # the challenge round's exact word, quoted
        ("DISAGREE. The answer should be 5.", False),
        ("Answer only with [AGREE] or [DISAGREE]. [DISAGREE]", False),  # echoed listing skipped
        ("AGREE/DISAGREE: I agree.", True),
        ("If you agree with the final answer, respond with the exact word 'AGREE' to confirm. DISAGREE", False),
        ("I am not sure whether I agree.", None),
        ("Do you agree or disagree?", None),
    ],
)
def test_agreement_stance_is_read_from_markers_then_verbs(text, expected):
    assert parse_agreement(text)[0] is expected


def test_strip_markers_removes_only_the_markers():
    assert strip_markers("[DISAGREE] It is C. Final Solution: C") == "It is C. Final Solution: C"


@pytest.mark.parametrize(
    "text",
    [
        "If you agree with the current solution, answer with [AGREE]. The answer is B.",
        "Else, answer with [DISAGREE], explain why. I think B.",
        "If you agree, answer with 2.",
    ],
)
def test_echoes_of_the_instruction_take_no_stance(text):
    assert parse_agreement(text)[0] is None


def test_a_real_marker_after_an_echo_counts():
    assert parse_agreement("If you agree, answer with [AGREE]. So: [DISAGREE], it is C.")[0] is False


def test_agreement_notes_say_how_the_stance_was_read():
    assert parse_agreement("[AGREE] yes")[1] is None
    assert parse_agreement("I cannot [AGREE] with this.")[1] == "negated"
    assert parse_agreement("I cannot AGREE.")[1] == "no brackets; read the bare word; negated"
    assert parse_agreement("I agree.")[1] == "no marker; read the verb"
    assert parse_agreement("The answer is B.") == (None, NO_AGREEMENT_MARKER)


def test_agreement_challenge_reply_with_a_negated_bare_word_is_a_challenge():
    def script(turn, agent, purpose, messages):
        if purpose == "challenge":
            return "I cannot AGREE." if agent == 1 else "AGREE"
        if purpose == "challenge_answer":
            return "Final Solution: A"
        return "Final Solution: B" if agent == 0 else "[AGREE]"

    transcript, llm = debate(script, decider="unanimity", challenges=("plain",))
    results = next(e for e in transcript.events if e["kind"] == "challenge")["results"]
    assert [r["agrees"] for r in results] == [True, False, True]
    assert [r[1] for r in llm.requests if r[2] == "challenge_answer"] == [1]
    assert results[1]["new_answer"] == "A"


HUGE_AGREEMENT_REPLIES = {
    # (reply, expected reading); each took minutes before (a regex or a prefix copy per marker)
    "a million verbs": ("I agree. " * 1_000_000, True),
    "negated, then a million markers": ("I do not " + "[AGREE] " * 1_000_000, False),
    "ten million spaces, then the verb": (" " * 10_000_000 + "agree", True),
    "a listing echoed half a million times": ("agree or disagree " * 500_000, None),
}


@pytest.mark.parametrize("name", list(HUGE_AGREEMENT_REPLIES))
def test_hostile_agreement_of_a_huge_reply_is_read_without_rescanning(name):
    """Agreement is read on the event loop, so it must be linear in the reply: the echo and
    negation rules read a bounded window before each marker, only the first markers of a kind are
    read, and no pattern scans every space. 30 s guards against a hang (the old reading never
    finished the third reply); it is not a speed target (a 10 MB reply takes about a second)."""
    import signal

    reply, expected = HUGE_AGREEMENT_REPLIES[name]

    def expire(*_):
        pytest.fail("agreement still being read after 30 s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, 30.0)
    try:
        assert parse_agreement(reply)[0] is expected
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
