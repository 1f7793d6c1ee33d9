"""Metric implementations; :mod:`madeval.builtins.metrics` registers them as built-in plugins.

Every module imports its heavy libraries (sacrebleu, rouge-score, nltk, sympy, torch,
bert-score, sentence-transformers, evaluate) inside functions, so nothing heavy is loaded until a
task actually scores with that metric.

A metric's ``score`` returns one float, or a mapping of named floats when it reports several
numbers (ROUGE-1/2/3/L; SQuAD's exact and F1 for all, answerable and unanswerable items). A name
that does not apply to an item is left out of that item's mapping (``HasAns_f1`` on an
unanswerable question), so its average runs over the items it applies to, as in the official
SQuAD v2 script. :func:`madeval.metrics.aggregate.task_scores` computes those averages.
"""
