"""Base class for metrics that read the whole debate, not only its final answer."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..components import Metric

if TYPE_CHECKING:
    from .debate import DebateView


class DebateMetric(Metric):
    """A metric computed from the debate: every agent's answers, per turn and at the end.

    ``Task.score`` calls :meth:`score_debate` with a :class:`madeval.metrics.debate.DebateView`
    when the transcript is known (always, in a run); without one (``madeval tasks --validate``)
    a debate metric reports nothing.
    """

    def score(self, prediction: str | None, item: Any) -> float:
        """Debate metrics need the transcript; use :meth:`score_debate`."""
        raise TypeError(f"metric {self.name} reads the debate: call score_debate")

    def score_debate(self, prediction: str | None, item: Any, debate: DebateView) -> float | dict[str, float]:
        """The score(s) of one finished debate."""
        raise NotImplementedError
