"""SQuAD 2.0 exact match and F1, by the rules of the official v2.0 evaluation script.

The rules (Rajpurkar et al. 2018, ``evaluate-v2.0.py``), implemented here from their description:

* ``normalize_answer``: lower case, remove punctuation, remove the articles "a", "an", "the",
  collapse white space.
* Gold answers are the item's answer texts that are not empty after normalisation; an item with
  none is unanswerable and its only gold answer is the empty string.
* Exact match: 1 when the normalised prediction equals a normalised gold answer.
* F1 over tokens (the normalised text split on white space): when either side has no tokens, F1
  is 1 if both have none and 0 otherwise; else the harmonic mean of the precision and recall of
  the shared tokens, counted with multiplicity.
* Both scores take the maximum over the gold answers, and are averaged over all items, over the
  answerable items (``HasAns_``) and over the unanswerable ones (``NoAns_``).

The extracted answer ``[UNKNOWN]`` (exactly that marker, outer white space aside: what the task
instruction asks for, 001 Appendix G) is the empty answer, i.e. an abstention. Nothing else is: a
reply "unknown" is the answer "unknown" (gold answer of dev item 571cac5d5efbb31900334dd3), and a
longer answer that mentions the marker is scored as the text it is. In a task's targets,
``[UNKNOWN]`` stands for "no gold answer". A prediction of ``None`` (nothing could be extracted)
scores 0 on every item, answerable or not: the denominator is always all items.
"""

from __future__ import annotations

import collections
from typing import Any, Sequence

from madeval.metrics.answers import normalize_answer
from madeval.metrics.base import Metric
from madeval.metrics.normal import normal_text
from madeval.metrics.text import references

UNKNOWN_MARKER = "[UNKNOWN]"


def answer_tokens(text: str) -> list[str]:
    """The tokens F1 counts: the normalised text split on white space."""
    return normalize_answer(text).split() if text else []


def exact_match(gold: str, prediction: str) -> int:
    """1 when the normalised texts are equal, else 0."""
    return int(normalize_answer(gold) == normalize_answer(prediction))


def token_f1(gold: str, prediction: str) -> float:
    """Token-overlap F1; 1 when both are empty, 0 when exactly one is."""
    gold_tokens, predicted_tokens = answer_tokens(gold), answer_tokens(prediction)
    if not gold_tokens or not predicted_tokens:
        return float(gold_tokens == predicted_tokens)
    common = collections.Counter(gold_tokens) & collections.Counter(predicted_tokens)
    shared = sum(common.values())
    if shared == 0:
        return 0.0
    precision = shared / len(predicted_tokens)
    recall = shared / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def gold_answers(texts: Sequence[str]) -> list[str]:
    """The gold answers that count: non-empty after normalisation, else ``[""]`` (unanswerable)."""
    kept = [text for text in texts if normalize_answer(text) and text != UNKNOWN_MARKER]
    return kept or [""]


def abstention_to_empty(prediction: str) -> str:
    """The extracted answer ``[UNKNOWN]`` (outer white space aside) means no answer: ``""``."""
    return "" if prediction.strip() == UNKNOWN_MARKER else prediction


def squad_v2_scores(prediction: str | None, golds: Sequence[str]) -> dict[str, float]:
    """Exact and F1 of one prediction, also under ``HasAns_`` or ``NoAns_`` as the item is."""
    answers = gold_answers(golds)
    # the official script: bool(qa["answers"]), the raw list, before normalisation drops any
    answerable = any(gold != UNKNOWN_MARKER for gold in golds)
    subset = "HasAns" if answerable else "NoAns"
    if prediction is None:
        exact, f1 = 0.0, 0.0
    else:
        predicted = abstention_to_empty(prediction)
        exact = float(max(exact_match(gold, predicted) for gold in answers))
        f1 = max(token_f1(gold, predicted) for gold in answers)
    return {"exact": exact, "f1": f1, f"{subset}_exact": exact, f"{subset}_f1": f1}


class SquadV2(Metric):
    """SQuAD 2.0 exact match and F1 (official v2 rules), overall, answerable (HasAns_) and not (NoAns_)."""


    def score(self, prediction: str | None, item: Any) -> dict[str, float]:
        """``exact``, ``f1`` and the same two under the item's subset prefix. Replies are read in
        NFKC (:func:`madeval.metrics.normal.normal_text`: ``1⁄3`` as ``1/3``), so the golds are
        too before the official rules compare them (an ASCII gold is unchanged)."""
        return squad_v2_scores(prediction, [normal_text(str(text)) for text in references(item)])
