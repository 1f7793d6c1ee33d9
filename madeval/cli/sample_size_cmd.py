"""``madeval sample-size N``: Cochran's sample size with finite-population correction."""

from __future__ import annotations

import click

from ..sampling import DEFAULT_CONFIDENCE, DEFAULT_MARGIN, cochran_sample_size


@click.command("sample-size")
@click.argument("population", type=int)
@click.option("--confidence", type=float, default=DEFAULT_CONFIDENCE, show_default=True,
              help="Confidence level.")
@click.option("--margin", type=float, default=DEFAULT_MARGIN, show_default=True, help="Margin of error.")
def sample_size(population: int, confidence: float, margin: float) -> None:
    """Print how many of POPULATION items '--sample fpc' draws (Voting or Consensus, App. B.1)."""
    click.echo(cochran_sample_size(population, confidence, margin))
