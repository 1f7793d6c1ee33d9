import madeval_lastword

from madeval.testing import debate, decided, registered


def test_the_last_speaker_wins_after_the_first_turn():
    replies = {(1, 0): "Final Solution: A", (1, 1): "Final Solution: A", (1, 2): "Final Solution: B"}
    with registered(madeval_lastword):
        transcript, _ = debate(replies, decider="last_word")
    assert (decided(transcript), transcript.decision.turn) == ("B", 1)
