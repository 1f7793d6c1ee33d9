"""What each debate did, turn by turn, and the same summed up per configuration and task.

* :mod:`.debate`: the facts of one debate (each agent's answer per turn, each turn's vote and
  whether it is right, unanimity, drift, the oracle gap): :func:`debate_facts`;
* :mod:`.scoring`: scores one agent's answer with the metric that scored the decision;
* :mod:`.board`: the leaderboard's ``dynamics`` list, one entry per (configuration, task, metric),
  with the paired test of the final decision against the vote of the first turn.
"""

from madeval.analysis.debate_facts import DebateFacts, TurnAnswers, debate_facts, turn_answers, turn_vote

__all__ = ["DebateFacts", "TurnAnswers", "debate_facts", "turn_answers", "turn_vote"]
