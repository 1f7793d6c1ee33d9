"""madeval-madc: Society-of-Minds debate (Du et al.) with MADC's allocation strategies ("Key Decision-Makers
in Multi-Agent Debates").

Components (registered by :mod:`madeval_madc.plugin`):

* responder ``som``: Du et al.'s opening and update prompts, one conversation per agent;
* paradigm ``som``: simultaneous turns whose peer order follows an allocation strategy
  (``fixed``, ``random``, ``truth_first``, ``truth_last``, ``madc``);
* preset ``madc``: MADC's setting (one debate round, most-agreed answer last, majority of the
  last turn).

MADC's entropy and gold log-likelihood per turn are core metrics (``answer_entropy``,
``gold_likelihood``); this package does not duplicate them.
"""

__version__ = "0.1.0"
