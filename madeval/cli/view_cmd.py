"""``madeval view``: write the debate viewer page of a run folder."""

from __future__ import annotations

import shlex
from pathlib import Path

import click


@click.command()
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--output", type=click.Path(path_type=Path, dir_okay=False), default=None,
              help="The page to write.  [default: RUN/debates.html]")
@click.option("--task", "tasks", default=None, help="Only these tasks' debates, comma separated.")
@click.option("--config", "configs", default=None, help="Only these configurations' debates (labels), comma separated.")
def view(run: Path, output: Path | None, tasks: str | None, configs: str | None) -> None:
    """Write one self-contained HTML page to read every debate of RUN (opens from disk, no network).

    One page stays quick to open up to about 160 MB (20,000 debates of real length); split a larger
    run with --task or --config."""
    from madeval.viewer import PAGE_LIMIT_BYTES, VIEWER_FILE, write_viewer

    written = write_viewer(run, output, tasks=_names(tasks), configs=_names(configs))
    for note in written["notes"]:
        click.echo(f"madeval: {note}", err=True)
    size = written["bytes"] / 1e6
    click.echo(f"{written['debates']} debates in {written['path']} ({size:.1f} MB)")
    if written["bytes"] > PAGE_LIMIT_BYTES:
        click.echo(f"madeval: the page is larger than the {PAGE_LIMIT_BYTES / 1e6:.0f} MB a browser opens in a few "
                   "seconds; write a page per task or configuration with --task or --config", err=True)
    if (output is None and (run / "leaderboard.html").is_file()
            and VIEWER_FILE not in (run / "leaderboard.html").read_text(encoding="utf-8", errors="replace")):
        click.echo(f"leaderboard.html does not link it yet: run madeval leaderboard show {shlex.quote(str(run))}")


def _names(given: str | None) -> list[str] | None:
    names = [name.strip() for name in (given or "").split(",") if name.strip()]
    return names or None
