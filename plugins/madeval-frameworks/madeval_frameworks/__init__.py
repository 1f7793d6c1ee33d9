"""madeval-frameworks: published multi-agent debate frameworks as madeval presets.

Each preset bundles personas, responder, paradigm and decider under one name (``--preset NAME``):
``som`` (Du et al.), ``multi_persona`` (Liang et al.), ``eot`` and ``eot_similarity``
(Exchange-of-Thought), ``chateval``, ``chateval_simultaneous`` and ``chateval_summarizer``,
``agentverse`` and ``reconcile``. Components are added only where the built-in ones and
madeval-madc's Society-of-Minds components do not fit; see :mod:`madeval_frameworks.plugin`.
"""

__version__ = "0.1.0"
