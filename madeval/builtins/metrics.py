"""Built-in metrics, registered through the same hook a third-party plugin uses.

A prediction is the answer the task's extractor chain pulled out of the debate's final answer,
or ``None`` when nothing could be extracted. ``None`` always scores 0: the denominator of every
metric is all items, never only the answered ones. The implementations live in
:mod:`madeval.metrics`; their heavy libraries load only when a task scores with them.
"""

from __future__ import annotations

from typing import Any

from madeval.core.hookspecs import hookimpl
from madeval.metrics.base import Metric
from madeval.metrics.debate import AnswerDiversity, AnswerEntropy, GoldLikelihood
from madeval.metrics.math import integer_value, math_equal
from madeval.metrics.normal import normal_text
from madeval.metrics.squad import SquadV2
from madeval.metrics.text import BertScore, Bleu, HuggingFaceEvaluate, Meteor, Rouge


def _as_number(value: Any) -> float | None:
    try:
        return float(normal_text(str(value)).replace(",", "").strip())
    except ValueError:
        return None


def same_answer(prediction: Any, target: Any) -> bool:
    """Equal as numbers when both are numbers, else equal ignoring case and outer whitespace; both
    read in NFKC with ASCII digits (a full-width "Ｂ" is "B", :mod:`madeval.metrics.normal`)."""
    if prediction is None or target is None:
        return False
    left, right = _as_number(prediction), _as_number(target)
    if left is not None and right is not None:
        return abs(left - right) <= 1e-9 * max(1.0, abs(right))
    return normal_text(str(prediction)).strip().casefold() == normal_text(str(target)).strip().casefold()


def _targets(item: Any) -> list[Any]:
    return list(item.target) if isinstance(item.target, (list, tuple)) else [item.target]


class Accuracy(Metric):
    """1 when the extracted answer equals the target (letters, yes/no, numbers), else 0."""


    def score(self, prediction: str | None, item: Any) -> float:
        return 1.0 if any(same_answer(prediction, t) for t in _targets(item)) else 0.0


class MathEquivalence(Metric):
    """1 when the answer equals the target after math normalisation or as a sympy expression."""


    def score(self, prediction: str | None, item: Any) -> float:
        return 1.0 if any(math_equal(prediction, str(t)) for t in _targets(item)) else 0.0


class IntegerMatch(Metric):
    """1 when the answer and the target are the same integer ("025" = "25"), as AIME is graded."""


    def score(self, prediction: str | None, item: Any) -> float:
        value = integer_value(prediction)
        return 1.0 if value is not None and any(value == integer_value(str(t)) for t in _targets(item)) else 0.0


@hookimpl
def register_metrics(register):
    """The built-in metrics."""
    register("accuracy", Accuracy, aliases=("acc",))
    register("math_equivalence", MathEquivalence, aliases=("math_equal",))
    register("integer_match", IntegerMatch)
    register("squad_v2", SquadV2, aliases=("squad",))
    register("bleu", Bleu, aliases=("sacrebleu",))
    register("rouge", Rouge)
    register("meteor", Meteor)
    register("bertscore", BertScore, aliases=("bert_score",))
    register("evaluate", HuggingFaceEvaluate, aliases=("hf_evaluate",))
    register("answer_diversity", AnswerDiversity, aliases=("answer_similarity",))
    register("answer_entropy", AnswerEntropy, aliases=("madc_entropy",))
    register("gold_likelihood", GoldLikelihood, aliases=("madc_log_likelihood",))
