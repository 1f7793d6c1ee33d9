"""The simulator's agents are what they claim: a Condorcet check through the whole harness."""

from __future__ import annotations

import math

from helpers import run_quietly, settings_for
from madeval.records.folder import read_records

ITEMS = 3000
ACCURACY = 0.6
# P(majority of 3 independent voters is right) = p^3 + 3 p^2 (1 - p)
CONDORCET = ACCURACY**3 + 3 * ACCURACY**2 * (1 - ACCURACY)


def test_condorcet_three_independent_agents_match_the_jury_theorem(sim, tmp_path):
    assert abs(CONDORCET - 0.648) < 1e-12
    settings = settings_for(
        sim.base_url,
        tmp_path,
        tasks=["arith_yesno"],
        limit=ITEMS,
        paradigm="collective_refinement",
        decider="counting",
        max_turns=1,
        cache="off",
    )
    result, printed = run_quietly(settings)
    row = result.rows[0]
    assert row["items"] == ITEMS and row["decision_success_rate"] == 1.0
    standard_error = math.sqrt(CONDORCET * (1 - CONDORCET) / ITEMS)
    assert abs(row["score"] - CONDORCET) < 3 * standard_error, (row["score"], standard_error)

    records = list(read_records(result.folder))
    answers = [m["answer"] == r["target"] for r in records for m in r["transcript"]["messages"]]
    assert len(answers) == 3 * ITEMS
    single = sum(answers) / len(answers)
    assert abs(single - ACCURACY) < 3 * math.sqrt(ACCURACY * (1 - ACCURACY) / len(answers))
    # Independence: agreement between agents 1 and 2 is p^2 + (1-p)^2 on two-option items.
    pairs = [r["transcript"]["messages"][0]["answer"] == r["transcript"]["messages"][1]["answer"] for r in records]
    expected = ACCURACY**2 + (1 - ACCURACY) ** 2
    assert abs(sum(pairs) / ITEMS - expected) < 3 * math.sqrt(expected * (1 - expected) / ITEMS)
    assert "arith_yesno" in printed
