"""Built-in per-item metrics.

A prediction is the answer the task's extractor chain pulled out of the debate's final answer,
or ``None`` when nothing could be extracted. ``None`` always scores 0: the denominator of every
metric is all items, never only the answered ones.
"""

from __future__ import annotations

from typing import Any

from .. import hookimpl
from ..components import Metric


def _as_number(value: Any) -> float | None:
    try:
        return float(str(value).replace(",", "").strip())
    except ValueError:
        return None


def same_answer(prediction: Any, target: Any) -> bool:
    """Equal as numbers when both are numbers, else equal ignoring case and outer whitespace."""
    if prediction is None or target is None:
        return False
    left, right = _as_number(prediction), _as_number(target)
    if left is not None and right is not None:
        return abs(left - right) <= 1e-9 * max(1.0, abs(right))
    return str(prediction).strip().casefold() == str(target).strip().casefold()


class Accuracy(Metric):
    """1 when the extracted answer equals the target (letters, yes/no, numbers), else 0."""

    name = "accuracy"

    def score(self, prediction: str | None, item: Any) -> float:
        targets = item.target if isinstance(item.target, (list, tuple)) else [item.target]
        return 1.0 if any(same_answer(prediction, t) for t in targets) else 0.0


@hookimpl
def register_metrics(register):
    """The built-in metrics."""
    register("accuracy", Accuracy, aliases=("acc",))
