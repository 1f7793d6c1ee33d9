"""``madeval import``: other tools' output files as a madeval run folder."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from madeval.cli.settings_options import shared_option
from madeval.errors import UsageError
from madeval.util.shown_text import terminal_text


@click.command("import")
@click.argument("format_name", metavar="FORMAT")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--task", "task_name", required=True, help="The madeval task the files' items belong to "
              "(e.g. mmlu_pro, gsm8k, lm_eval:gsm8k).")
@click.option("--output-path", required=True, type=click.Path(path_type=Path),
              help="The run folder to create, or an earlier import's folder to add to.")
@click.option("--label", help="The configuration's label (one file only) [default: from the file name].")
@click.option("--filter", "filter_name", help="lm-eval: the filter whose samples are imported (needed when "
              "a file holds several, e.g. strict-match).")
@click.option("--include-path", type=click.Path(exists=True, file_okay=False, path_type=Path),
              help="A folder of extra task YAMLs.")
@shared_option("explain")
def import_(format_name: str, files: tuple[Path, ...], task_name: str, output_path: Path, label: str | None,
            filter_name: str | None, include_path: Path | None, explain: bool | None) -> None:
    """Read FILES of FORMAT (mallm, lm-eval, or a plugin's; see 'madeval plugins') as a run folder that
    'leaderboard show', 'rescore' and every other command read like madeval's own. Each file is one
    configuration; a second import of the same file adds nothing."""
    from madeval.core.plugins import registries as loaded_registries
    from madeval.core.plugins import versions
    from madeval.importers.writer import import_files
    from madeval.leaderboard import LeaderboardOptions, publish_board
    from madeval.leaderboard.render import printed
    from madeval.settings.config import RunSettings
    from madeval.task.definition import load_tasks

    built = loaded_registries()
    importer = built.importers.create(format_name, {"filter": filter_name} if filter_name else {})
    settings = RunSettings(tasks=[task_name], include_path=[str(include_path)] if include_path else [])
    tasks = load_tasks(settings, built)
    if len(tasks) != 1:
        raise UsageError(f"--task names {len(tasks)} tasks ({', '.join(tasks)}); imported items belong to one task")
    task = next(iter(tasks.values()))
    outcome = import_files(importer, list(files), task, output_path, label, versions=versions)
    for file in outcome.files:
        for note in file.notes:
            click.echo(terminal_text(f"madeval: {note}"), err=True)
    board = publish_board(output_path, LeaderboardOptions(),
                          f"every record is kept: run 'madeval leaderboard show {output_path}'")
    # labels come from the imported files: text, never escape sequences for the terminal
    click.echo(terminal_text(printed(board, bool(explain), output_path)), nl=False)
    for file in outcome.files:
        already = f", {file.already} already there" if file.already else ""
        click.echo(terminal_text(f"{file.path.name}: {file.added} debates imported as '{file.label}'{already}"))
    click.echo(f"results in {output_path}")
    sys.stdout.flush()
