"""Free-text metrics: BLEU (sacrebleu), ROUGE (rouge-score), METEOR (nltk), BERTScore, and any
Hugging Face ``evaluate`` metric by id.

All are computed per item against the item's references (its target: one text or a list) and
reported on a 0-1 scale like every madeval score (sacrebleu's BLEU is divided by 100). Per-item
scores make paired comparisons between configurations possible; BLEU per item is sacrebleu's
``sentence_bleu`` (exponential smoothing), so its mean over items is not corpus BLEU.
A prediction of ``None`` (an empty reply) scores 0.
"""

from __future__ import annotations

import functools
from typing import Any

from madeval.errors import UsageError
from madeval.metrics.base import Metric
from madeval.metrics.models import DEFAULT_MODEL_LAYERS, default_model_path, install_hint, quiet_transformers
from madeval.metrics.wordnet import wordnet
from madeval.util.install import import_optional


def references(item: Any) -> list[str]:
    """The reference texts of an item (its target as a list)."""
    target = item.target
    if isinstance(target, (list, tuple)):
        return [str(t) for t in target]
    return [] if target is None else [str(target)]


class Bleu(Metric):
    """Sentence BLEU from sacrebleu against all references, divided by 100."""


    def __init__(self, tokenize: str = "13a", lowercase: bool = False):
        self.tokenize = tokenize
        self.lowercase = lowercase

    def score(self, prediction: str | None, item: Any) -> float:
        """sacrebleu's ``sentence_bleu(prediction, references).score / 100``."""
        if not prediction:
            return 0.0
        import sacrebleu  # heavy, optional: loaded on first use

        result = sacrebleu.sentence_bleu(prediction, references(item), tokenize=self.tokenize, lowercase=self.lowercase)
        return result.score / 100


class Rouge(Metric):
    """ROUGE-1/2/3/L F-measure from rouge-score (best over references)."""


    def __init__(self, types: str = "rouge1,rouge2,rouge3,rougeL", use_stemmer: bool = False):
        self.types = [t.strip() for t in types.split(",") if t.strip()]
        self.use_stemmer = use_stemmer

    @functools.cached_property
    def _scorer(self):
        from rouge_score import rouge_scorer  # heavy, optional: loaded on first use

        return rouge_scorer.RougeScorer(self.types, use_stemmer=self.use_stemmer)

    def score(self, prediction: str | None, item: Any) -> dict[str, float]:
        """One F-measure per ROUGE type (``rouge1``, ``rouge2``, ``rouge3``, ``rougeL``)."""
        if not prediction or not references(item):
            return {name: 0.0 for name in self.types}
        scores = self._scorer.score_multi(references(item), prediction)
        return {name: scores[name].fmeasure for name in self.types}


class Meteor(Metric):
    """METEOR from nltk (WordNet synonyms, offline) against all references."""


    def __init__(self, alpha: float = 0.9, beta: float = 3.0, gamma: float = 0.5):
        self.alpha, self.beta, self.gamma = alpha, beta, gamma
        self._wordnet = wordnet()  # fail at task load, not mid-run, when WordNet is missing

    @staticmethod
    def tokens(text: str) -> list[str]:
        """Word tokens as nltk's ``word_tokenize`` makes them (without its sentence splitter)."""
        from nltk.tokenize import NLTKWordTokenizer  # heavy, optional: loaded on first use

        return NLTKWordTokenizer().tokenize(text)

    def score(self, prediction: str | None, item: Any) -> float:
        """nltk's ``meteor_score(references, hypothesis)`` on word tokens."""
        if not prediction or not references(item):
            return 0.0
        from nltk.translate.meteor_score import meteor_score  # heavy, optional: loaded on first use

        return float(
            meteor_score(
                [self.tokens(ref) for ref in references(item)],
                self.tokens(prediction),
                alpha=self.alpha,
                beta=self.beta,
                gamma=self.gamma,
                wordnet=self._wordnet,
            )
        )


@functools.lru_cache(maxsize=4)
def bert_scorer(model: str, num_layers: int):
    """A bert-score ``BERTScorer`` for a local model folder (or, online, a hub id)."""
    library = import_optional("bert_score", lambda: f"BERTScore needs bert-score; {install_hint()}")  # heavy (torch)
    quiet_transformers()
    return library.BERTScorer(model_type=model, num_layers=num_layers)


class BertScore(Metric):
    """BERTScore F1 (also precision and recall) with a local model, no baseline rescaling."""


    def __init__(self, model: str = "", num_layers: int = DEFAULT_MODEL_LAYERS):
        self.model = model or default_model_path()
        self.num_layers = num_layers

    def score(self, prediction: str | None, item: Any) -> dict[str, float]:
        """``bertscore_f1``, ``bertscore_precision`` and ``bertscore_recall`` (best reference)."""
        refs = references(item)
        if not prediction or not refs:
            return {"bertscore_f1": 0.0, "bertscore_precision": 0.0, "bertscore_recall": 0.0}
        precision, recall, f1 = bert_scorer(self.model, self.num_layers).score([prediction], [refs])
        return {
            "bertscore_f1": float(f1[0]),
            "bertscore_precision": float(precision[0]),
            "bertscore_recall": float(recall[0]),
        }


class HuggingFaceEvaluate(Metric):
    """Any Hugging Face ``evaluate`` metric by id (needs the hub): ``{metric: evaluate, id: NAME}``.

    Each item is scored alone with ``compute(predictions=[p], references=[refs])``; ``key``
    picks the number to keep (default: every numeric value, named ``<id>_<key>``); ``compute``
    is a mapping of extra arguments for ``compute``.
    """


    def __init__(self, id: str = "", key: str = "", single_reference: bool = False, compute: dict | None = None):
        if not id:
            raise UsageError("metric 'evaluate' needs the option id: the Hugging Face evaluate metric name")
        self.id, self.key, self.single_reference = id, key, single_reference
        self.compute_options = dict(compute or {})
        try:
            import evaluate  # heavy, optional: loaded on first use

            self._metric = evaluate.load(id)
        except Exception as error:  # evaluate raises many kinds when offline
            raise UsageError(
                f"cannot load Hugging Face evaluate metric '{id}' ({type(error).__name__}); it needs the hub"
            ) from None

    def score(self, prediction: str | None, item: Any) -> dict[str, float]:
        """The metric's numeric results for this item."""
        refs = references(item)
        reference = refs[0] if self.single_reference else refs
        result = self._metric.compute(predictions=[prediction or ""], references=[reference], **self.compute_options)
        numbers = {k: float(v) for k, v in result.items() if isinstance(v, (int, float))}
        if self.key:
            return {f"{self.id}_{self.key}": numbers[self.key]}
        return {f"{self.id}_{k}": v for k, v in numbers.items()}
