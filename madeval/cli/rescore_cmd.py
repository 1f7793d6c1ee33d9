"""``madeval rescore``: replay deciders on a finished run's stored debates, add them as rows."""

from __future__ import annotations

import contextlib
from dataclasses import replace
from pathlib import Path

import click

from madeval.cli.settings_options import read_given, shared_option
from madeval.errors import UsageError
from madeval.util.shown_text import terminal_text


@click.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--decider", "deciders", required=True,
              help="Deciders to replay, comma separated, each NAME[:key=value...] (e.g. counting:after_turns=2).")
@shared_option("base_url", help="Endpoint for the deciders' own calls (votes).", shown_default="the run's")
@shared_option("endpoints", shown_default="the run's")
@shared_option("concurrency", help="Debates replayed at once and LLM calls in flight at most.",
               shown_default="the run's")
@shared_option("cache", shown_default="the run's")
@shared_option("explain")
def rescore(run: Path, deciders: str, base_url, endpoints, concurrency, cache, explain) -> None:
    """Apply transcript-only deciders to RUN's debates without new discussion calls."""
    from madeval.records.folder import RUN_FILE
    from madeval.records.lock import hold

    # The folder's write lock first (a run still writing it is refused with one line); a folder
    # that is no run is left untouched for load_run to refuse.
    with hold(run) if (run / RUN_FILE).is_file() else contextlib.nullcontext():
        _rescore(run, deciders, base_url, endpoints, concurrency, cache, bool(explain))


def _rescore(run: Path, deciders: str, base_url, endpoints, concurrency, cache, explain: bool) -> None:
    from madeval.analysis.run_data import load_run
    from madeval.core.plugins import registries as loaded_registries
    from madeval.leaderboard import LeaderboardOptions, publish_board
    from madeval.leaderboard.render import printed
    from madeval.run.engine import endpoints_for
    from madeval.run.rescore import parse_deciders
    from madeval.run.rescore import rescore as run_rescore
    from madeval.settings.config import PUBLIC_KEYS, RunSettings
    from madeval.task.definition import load_tasks

    data = load_run(run, transcripts=False)  # the debates are read one configuration at a time
    built = loaded_registries()
    specs = parse_deciders(deciders, built)
    stored = {k: v for k, v in data.run.get("settings", {}).items() if k in PUBLIC_KEYS}
    settings = RunSettings(**stored)
    overrides = read_given({"base_url": base_url, "endpoints": endpoints, "concurrency": concurrency, "cache": cache})
    settings = replace(settings, **overrides)
    tasks = load_tasks(RunSettings(tasks=data.tasks, include_path=settings.include_path), built)
    # An imported run's agents were asked elsewhere: without --base-url or --endpoints it has no
    # endpoint, and only deciders that make no call replay (the others say so in one line).
    imported = data.run.get("imported") and not (overrides.get("base_url") or overrides.get("endpoints"))
    with contextlib.nullcontext(({}, None)) if imported else endpoints_for(settings) as (table, _model):
        outcome = run_rescore(run, specs, settings, built, table, tasks, data=data)
    for name, why in outcome.skipped.items():
        click.echo(terminal_text(f"madeval: skipped {name}: {why}"), err=True)
    if outcome.skipped and not outcome.added and len(outcome.skipped) == len(specs) * _run_configs(data):
        raise UsageError(f"nothing could be rescored: {next(iter(outcome.skipped.values()))}")
    board = publish_board(
        run,
        LeaderboardOptions.from_dict(data.run.get("leaderboard")),
        f"the rescored records are kept: run 'madeval leaderboard show {run}'",
        keep_previous=bool(outcome.added),  # no copy of a board it does not change
    )
    click.echo(terminal_text(printed(board, explain, run)), nl=False)
    click.echo(terminal_text(f"\n{outcome.added} debates rescored; results in {run}"))
    if board.get("previous_board"):
        click.echo(terminal_text(f"the board before this rescore is kept in {board['previous_board']}; rescored "
                                 "rows are corrected as a family of their own, so the run's p-values are unchanged"))


def _run_configs(data) -> int:
    return sum(1 for c in data.configurations.values() if c["source"] == "run")
