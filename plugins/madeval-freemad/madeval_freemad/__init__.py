"""madeval-freemad: Free-MAD, consensus-free multi-agent debate (Cui et al., "Free-MAD: Consensus-Free
Multi-Agent Debate").

Components (registered by :mod:`madeval_freemad.plugin`):

* decider ``freemad_score``: the score over the whole answer trajectory (Algorithm 1);
* responders ``anti_conformity`` (Free-MAD-n) and ``conformity`` (Free-MAD-c);
* paradigm ``communication_attack``: a wrapper in which some agents stop receiving peers'
  messages (Appendix A);
* metric ``token_cost``: agents' prompt and completion tokens (Eq. 6);
* presets ``freemad_n`` and ``freemad_c``.

It builds on madeval-madc's Society-of-Minds responder and paradigm.
"""

__version__ = "0.1.0"
