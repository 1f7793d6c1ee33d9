"""Scoring parity: madeval's score of a final reply on an lm-eval task is lm-eval's own.

The reference side is lm-eval's evaluator path, called directly: ``construct_requests`` makes the
instances, their ``resps`` hold the replies, ``task.apply_filters()`` runs every ``filter_list``
pipeline over all of them and ``task.process_results`` scores each filter's output. madeval's
side is the path a finished debate takes (``task.extract`` then ``task.score``).
"""

from __future__ import annotations

import random

from madeval.simulator.agents import AgentProfile, SyntheticAgents
from madeval.simulator.truth import GoldIndex


def lm_eval_scores(task, items, replies):
    """lm-eval's per-item scores ``{"metric,filter": value}`` for ``replies[i]`` on ``items[i]``."""
    lm = task.lm_task
    instances = []
    for index, (item, reply) in enumerate(zip(items, replies)):
        made = lm.construct_requests(doc=item.doc, ctx="", metadata=(lm.config.task, index, 1))
        made.resps.append(reply)
        instances.append(made)
    lm._instances = instances  # what build_all_requests fills; apply_filters reads it
    lm.apply_filters()
    scores = []
    for made in instances:
        row = {}
        for name in made.filtered_resps:
            for metric, value in lm.process_results(made.doc, [made.filtered_resps[name]]).items():
                row[f"{metric},{name}"] = float(value)
        scores.append(row)
    return scores


def simulated_replies(task, items, seed=0):
    """Replies the simulator's agents (accuracy 0.5) give to each item's prompt."""
    agents = SyntheticAgents(GoldIndex.from_tasks([task]), default=AgentProfile(accuracy=0.5), seed=seed)
    return [agents({"messages": [{"role": "user", "content": item.input}], "seed": i})[0]
            for i, item in enumerate(items)]


def reply_forms(task, items):
    """Reply sets: gold-stating, wrong, malformed and hostile, and simulator-generated."""
    rng = random.Random(7)
    golds = [str(item.target) for item in items]
    return {
        "reference": [task.reference_reply(item) for item in items],
        "answer_is": [f"The answer is {g}." for g in golds],
        "hash_gold": [f"#### {g}" for g in golds],
        "wrong": [task.wrong_reply(item) for item in items],
        "hash_then_wrong": [f"#### {g}\nCheck: {rng.randint(1, 999)} more." for g in golds],
        "answer_is_paren": [f"So the answer is ({g})." for g in golds],
        "empty": ["" for _ in items],
        "malformed": [rng.choice(["####", "answer is (", "$$$,,,", "\u202e 1\u200b2", "9" * 400, "(Z)"])
                      for _ in items],
        "simulated": simulated_replies(task, items),
    }


def compare(task, items):
    """(replies compared, mismatching replies) over every reply form."""
    compared, mismatches = 0, []
    for form, replies in reply_forms(task, items).items():
        expected = lm_eval_scores(task, items, replies)
        for item, reply, want in zip(items, replies, expected):
            got = task.score(task.extract(reply, item), item)
            compared += 1
            if got != want:
                mismatches.append((form, item.id, reply[:80], got, want))
    return compared, mismatches


def test_lmeval_gsm8k_parity_every_item(lm_tasks):
    task = lm_tasks("lm_eval:gsm8k")
    items = task.items
    assert len(items) == 1319
    compared, mismatches = compare(task, items)
    assert compared == 9 * 1319
    assert mismatches == []
    assert task.metric_names == ["exact_match,strict-match", "exact_match,flexible-extract"]
    # the forms are not all alike: lm-eval's strict-match needs '####', flexible takes the last number
    first = items[0]
    assert task.score("The answer is 18.", first) == {"exact_match,strict-match": 0.0,
                                                       "exact_match,flexible-extract": 1.0}
    assert task.score("#### 18\nCheck: 25.", first) == {"exact_match,strict-match": 1.0,
                                                        "exact_match,flexible-extract": 0.0}


def test_lmeval_mmlu_pro_parity(lm_tasks):
    task = lm_tasks("lm_eval:mmlu_pro_math")
    items = task.items[:300]
    assert len(items) == 300
    compared, mismatches = compare(task, items)
    assert compared == 9 * 300
    assert mismatches == []
    assert task.metric_names == ["exact_match,custom-extract"]
    gold = items[0].target
    assert task.score(f"The answer is ({gold}).", items[0]) == {"exact_match,custom-extract": 1.0}


def test_lmeval_hostile_replies_score_quickly_on_their_beginning(lm_tasks):
    import time

    from madeval_lmeval.task import MAX_SCORED_CHARS

    task = lm_tasks("lm_eval:gsm8k")
    first = task.items[0]
    hostile = [
        "#### 18\n" + "9," * 2_000_000,  # 4 MB of number-like text after the answer
        "1 " * 2_000_000 + "#### 18",  # the answer beyond the scored beginning
        "\u0000\udcff" * 100_000 + "The answer is 18",
        "$" * 3_000_000,
    ]
    for reply in hostile:
        started = time.monotonic()
        got = task.score(reply, first)
        assert time.monotonic() - started < 10
        assert got == lm_eval_scores(task, [first], [reply[:MAX_SCORED_CHARS]])[0]
    assert task.score(hostile[1], first)["exact_match,strict-match"] == 0.0  # cut before '#### 18'
