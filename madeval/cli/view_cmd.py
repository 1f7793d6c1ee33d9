"""``madeval view``: write the debate viewer page of a run folder."""

from __future__ import annotations

from pathlib import Path

import click


@click.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--output", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="The page to write.  [default: RUN/debates.html]")
def view(run: Path, output: Path | None) -> None:
    """Write one self-contained HTML page to read every debate of RUN (opens from disk, no network)."""
    from ..viewer import write_viewer

    written = write_viewer(run, output)
    for note in written["notes"]:
        click.echo(f"madeval: {note}", err=True)
    size = written["bytes"] / 1e6
    click.echo(f"{written['debates']} debates in {written['path']} ({size:.1f} MB)")
