"""Running an evaluation from Python: :func:`evaluate`, the function ``madeval run`` calls.

For notebooks and scripts, as lm-evaluation-harness has ``simple_evaluate`` and inspect-ai
``eval()``. It takes the options of the command line and of a ``--config`` file, by the same
snake_case names, and returns the run's result instead of printing it.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .config import build_settings, read_config_file
from .options import given_options

if TYPE_CHECKING:
    from .run import RunResult


def evaluate(
    tasks: str | list[str] | None = None,
    *,
    decider: str | None = None,
    base_url: str | None = None,
    output_path: str | Path | None = None,
    config: str | Path | None = None,
    show_progress: bool = False,
    out: TextIO | None = None,
    **options: Any,
) -> RunResult:
    """Run debates on tasks, write the run folder and return what the run produced.

    ``tasks`` names tasks, groups or tags (a list, or one text separated by commas); ``decider``,
    ``base_url`` (an OpenAI-compatible endpoint; without one the embedded model is started) and
    ``output_path`` (the run folder; running into it again resumes) are the most used options.
    Every other option of ``madeval run`` is a keyword argument with its config-file name and
    type: ``agents=3``, ``max_turns=2``, ``limit=20``, ``decider_args={"after_turns": 2}``,
    ``paradigm="collective_refinement"``, ``cache="off"``... ``config`` reads a ``--config`` YAML
    file (a sweep file too) first; keyword arguments win over its values, as on the command line.
    An option given as ``None`` (or an empty tuple, a repeatable option left out) is not given.

    Nothing is printed unless asked: ``show_progress=True`` draws the progress bar and ``out``
    (e.g. ``sys.stdout``) receives the leaderboard table and the summary line.

    Returns a :class:`madeval.RunResult`: ``folder`` (the run folder), ``rows`` (the leaderboard
    rows as plain dicts: ``label``, ``task``, ``metric``, ``score``, ``ci_low``/``ci_high``,
    ``items``, ``units``, ...), ``outcome`` (``finished``, ``skipped`` as already done,
    ``failed``) and ``board`` (the whole leaderboard, as in ``leaderboard.json``). Units that
    failed for good are counted in ``outcome.failed`` and listed in the folder's ``errors.jsonl``;
    running again into the same folder retries them.

    Bad options (an unknown name, a value of the wrong type or out of range, an unknown task or
    component) raise :class:`madeval.UsageError` with one line, before anything is written.
    """
    given = {"tasks": tasks, "decider": decider, "base_url": base_url, "output_path": output_path, **options}
    merged: dict[str, Any] = read_config_file(config) if config is not None else {}
    merged.update(given_options(given))
    if merged.get("output_path") is not None:
        merged["output_path"] = str(merged["output_path"])
    settings = build_settings(merged)
    from .run import run  # the engine (endpoints, scheduler, leaderboard) loads only for a run

    return run(settings, show_progress=show_progress, out=out if out is not None else io.StringIO())
