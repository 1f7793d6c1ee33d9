"""Scoring one agent's parsed answer with the metric that scored the debate's decision.

A record stores the score of the decision only; the dynamics also need to know whether each
agent's answer, and each turn's vote, is right. :func:`answer_scorer` builds that scorer from the
registered metric of the same name (``accuracy``, ``math_equivalence``, ``integer_match`` or a
plugin's), applied with its default options to the answer and the record's gold target, exactly
as it scores a decision (``Metric.score(prediction, item)``). Debate metrics (which read the whole
debate) and metrics that report several numbers cannot score one answer alone.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from madeval.core.item import Item
from madeval.core.plugins import registries
from madeval.errors import UsageError
from madeval.metrics.base import DebateMetric

if TYPE_CHECKING:
    from madeval.core.registry import Registry


def answer_scorer(metric: str) -> Callable[[str, Any], float]:
    """A function ``(answer, target) -> score`` for the registered metric ``metric``; a UsageError
    says why when there is none (:func:`why_no_scorer`). Built once per metric for the plugins
    registered now."""
    found = registries().metrics
    cached = _BUILT.get(metric)
    if cached is None or cached[0] is not found:  # built for plugins no longer registered: again
        cached = _BUILT[metric] = (found, _scorer(metric, found))
    return cached[1]


#: metric name -> (the metric registry it was built from, its scorer)
_BUILT: dict[str, tuple[Registry, Any]] = {}


def _scorer(metric: str, found: Registry) -> Callable[[str, Any], float]:
    try:
        entry = found.resolve(metric)
    except UsageError:
        raise UsageError(f"metric {metric} is not a registered metric, so an agent's answer cannot be "
                         "scored with it") from None
    scorer = found.create(entry.name)
    if isinstance(scorer, DebateMetric):
        raise UsageError(f"metric {metric} scores the whole debate, not one answer")

    def score(answer: str, target: Any) -> float:
        value = scorer.score(answer, Item("", "", target))
        if isinstance(value, dict):
            raise UsageError(f"metric {metric} reports several numbers, not one score per answer")
        return float(value)

    return score


def why_no_scorer(metric: str) -> str | None:
    """Why ``metric`` cannot score an agent's answer alone (None: it can)."""
    try:
        answer_scorer(metric)
    except UsageError as error:
        return str(error)
    return None
