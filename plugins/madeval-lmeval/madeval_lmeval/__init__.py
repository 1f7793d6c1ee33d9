"""madeval-lmeval: lm-evaluation-harness tasks as debates (``madeval --tasks lm_eval:gsm8k``).

Tasks, prompts, filters and metrics are lm-eval's own, read through its ``TaskManager``
(:mod:`madeval_lmeval.lmeval_api`); items come from madeval's local mirrors
(:mod:`madeval_lmeval.mirrors`); :mod:`madeval_lmeval.task` adapts an lm-eval task to madeval's.
"""
