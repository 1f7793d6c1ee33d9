"""``madeval export``: write a run's debates in another tool's format (inspect-ai's eval log)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--format", "format_", type=click.Choice(["inspect"]), required=True,
              help="inspect: an inspect-ai eval log (.eval), for 'inspect view' (needs madeval[inspect]).")
@click.option("--output", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="The file to write, e.g. run.eval.")
def export(run: Path, format_: str, output: Path) -> None:
    """Export RUN's debates: one sample per (item, configuration, repeat) with every message."""
    from madeval.export import export_run

    written = export_run(run, format_, output)
    for note in written["notes"]:
        click.echo(f"madeval: {note}", err=True)
    click.echo(f"{written['samples']} samples in {written['path']}")
