"""Run settings: the options a run takes (:mod:`.config`), presets, sweep files, item sampling,
the leaderboard's options and the check of ``--wandb-args``.
"""
