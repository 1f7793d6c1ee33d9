"""Base classes of metrics: :class:`Metric` scores a final answer, :class:`DebateMetric` the
whole debate (every agent's answers, per turn and at the end)."""

from __future__ import annotations

from madeval.core.item import Item
from madeval.metrics.view import DebateView


class Metric:
    """Scores one prediction against one item; per-item scores are averaged unless overridden."""

    #: The name it is registered under, set by :meth:`madeval.core.registry.Registry.create`.
    name: str
    higher_is_better = True

    def score(self, prediction: str | None, item: Item) -> float:
        """The score of ``prediction`` (``None``: nothing extracted) on ``item``."""
        raise NotImplementedError

    def aggregate(self, scores: list[float]) -> float:
        """Combine per-item scores into one number (the mean by default)."""
        return sum(scores) / len(scores) if scores else float("nan")


class DebateMetric(Metric):
    """A metric computed from the debate: every agent's answers, per turn and at the end.

    ``Task.score`` calls :meth:`score_debate` with a :class:`madeval.metrics.view.DebateView`
    when the transcript is known (always, in a run); without one (``madeval tasks --validate``)
    a debate metric reports nothing.
    """

    def score(self, prediction: str | None, item: Item) -> float:
        """Debate metrics need the transcript; use :meth:`score_debate`."""
        raise TypeError(f"metric {self.name} reads the debate: call score_debate")

    def score_debate(self, prediction: str | None, item: Item, debate: DebateView) -> float | dict[str, float]:
        """The score(s) of one finished debate."""
        raise NotImplementedError
