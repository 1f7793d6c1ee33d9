"""``--wandb-args``: a finished run's leaderboard table, charts and ``run.json`` logged to Weights &
Biases (the optional ``wandb`` extra), as lm-eval's ``--wandb_args`` logs its results.

``--wandb-args project=NAME,name=...`` are ``wandb.init`` arguments; ``WANDB_MODE=offline`` keeps
everything on disk (``wandb sync`` uploads it later).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def log_run(folder: Path, board: dict[str, Any], args: dict[str, str]) -> None:
    """Log the leaderboard rows as a table, every chart as an image and ``run.json`` as an artifact.

    ``run.json`` is read by the leaderboard's checked reader, before W&B is started: one that is
    missing, not JSON or not a run description is a one-line UsageError naming the file."""
    from madeval.analysis.run_data import read_run_description  # not at import: config imports this module
    from madeval.records.run_file import SESSIONS_KEY, latest_settings

    described = read_run_description(folder)
    # the settings the run was last run with (a resume may change its transport, limits, ...), and
    # each session's, rather than run.json's settings, which stay the first run's
    config = latest_settings(described)
    if isinstance(described.get(SESSIONS_KEY), list):
        config[SESSIONS_KEY] = described[SESSIONS_KEY]
    import wandb

    run = wandb.init(**{"job_type": "madeval", **args}, config=config)
    try:
        columns = list(board["rows"][0]) if board["rows"] else []
        rows = [[json.dumps(row.get(c)) if isinstance(row.get(c), (dict, list)) else row.get(c) for c in columns]
                for row in board["rows"]]
        logged: dict[str, Any] = {"leaderboard": wandb.Table(columns=columns, data=rows)}
        for chart in _charts(folder, board):
            logged[f"charts/{chart.stem}"] = wandb.Image(str(chart))
        run.log(logged)
        artifact = wandb.Artifact(f"madeval-run-{folder.name}", type="madeval-run")
        artifact.add_file(str(folder / "run.json"))
        run.log_artifact(artifact)
    finally:
        run.finish()


def _charts(folder: Path, board: dict[str, Any]) -> list[Path]:
    """The run's chart images, drawn now when the leaderboard did not draw them (charts are off by
    default on the leaderboard; logging to W&B asks for them)."""
    drawn = sorted((folder / "charts").glob("*.png"))
    if drawn:
        return drawn
    from madeval.leaderboard.charts import draw_all  # matplotlib: only when charts are drawn

    return sorted(draw_all(board, folder / "charts"))
