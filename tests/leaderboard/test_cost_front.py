"""The cost-accuracy Pareto front (:mod:`madeval.leaderboard.cost`) on hand-made rows with ties,
and on a leaderboard built from a simulator run."""

from __future__ import annotations

from madeval.leaderboard.cost import mark_fronts, pareto_front


def test_cost_front_holds_exactly_the_non_dominated_rows_with_ties():
    points = [
        (0.70, 100.0),  # 0 front: the cheapest among the best at its cost
        (0.70, 100.0),  # 1 front: an exact tie with 0 (neither dominates the other)
        (0.70, 150.0),  # 2 off: 0 is as good for less
        (0.80, 300.0),  # 3 front
        (0.75, 300.0),  # 4 off: 3 is better for the same cost
        (0.60, 50.0),   # 5 front: the cheapest
        (0.60, 80.0),   # 6 off: 5 is as good for less
        (0.90, 1000.0), # 7 front: the best
        (0.90, 1200.0), # 8 off: 7 is as good for less
        (0.50, 50.0),   # 9 off: 5 is better for the same cost
    ]
    assert [i for i, on in enumerate(pareto_front(points)) if on] == [0, 1, 3, 5, 7]
    # and point by point, by the definition
    for i, (score, cost) in enumerate(points):
        dominated = any(s >= score and c <= cost and (s, c) != (score, cost) for s, c in points)
        assert pareto_front(points)[i] is (not dominated)


def test_cost_fronts_are_marked_per_cost_on_rows():
    rows = [
        {"score": 0.6, "tokens_per_item": 100.0, "calls_per_item": 1.0},
        {"score": 0.7, "tokens_per_item": 900.0, "calls_per_item": 5.0},
        {"score": 0.7, "tokens_per_item": 600.0, "calls_per_item": 9.0},
    ]
    mark_fronts(rows)
    assert [r["front_tokens_per_item"] for r in rows] == [True, False, True]
    assert [r["front_calls_per_item"] for r in rows] == [True, True, False]
    assert pareto_front([]) == [] and pareto_front([(0.5, 1.0)]) == [True]


def test_cost_chart_is_drawn_only_when_costs_differ():
    from madeval.leaderboard.charts import _cost

    def row(config, score, tokens, calls):
        return {"config": config, "label": config, "task": "t", "metric": "accuracy", "score": score,
                "ci_low": score - 0.1, "ci_high": score + 0.1, "tokens_per_item": tokens, "calls_per_item": calls,
                "front_tokens_per_item": True, "front_calls_per_item": True}

    board = {"configurations": {"a": {"label": "a"}, "b": {"label": "b"}}}
    assert _cost(board, [row("a", 0.5, 10.0, 1.0), row("b", 0.6, 10.0, 1.0)]) is None
    figure = _cost(board, [row("a", 0.5, 10.0, 1.0), row("b", 0.6, 30.0, 3.0)])
    assert [ax.get_title() for ax in figure.axes] == ["t: accuracy against tokens per item",
                                                      "t: accuracy against calls per item"]
