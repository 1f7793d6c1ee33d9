"""What is checked and said before a run's first call, so that a run never works for nothing.

:mod:`.before_run` checks what needs only the settings and the plan (leaderboard options, item
counts larger than a task); :mod:`.cache_key` opens the response cache and says what it is keyed on;
:mod:`.estimate` estimates a run's calls and time and asks before a long one; :mod:`.wandb_args`
checks ``--wandb-args`` (the logging itself comes after the run).
"""
