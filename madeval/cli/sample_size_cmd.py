"""``madeval sample-size``: Cochran's sample size with finite-population correction, or the paired
form: items needed to detect a difference between two configurations (``--paired``)."""

from __future__ import annotations

import click

from ..errors import UsageError
from ..sampling import DEFAULT_CONFIDENCE, DEFAULT_MARGIN, cochran_sample_size, paired_sample_size


@click.command("sample-size")
@click.argument("population", type=int, required=False)
@click.option("--confidence", type=float, default=DEFAULT_CONFIDENCE, show_default=True,
              help="Confidence level.")
@click.option("--margin", type=float, default=DEFAULT_MARGIN, show_default=True, help="Margin of error.")
@click.option("--paired", is_flag=True, help="Items to detect a difference --delta between two configurations.")
@click.option("--delta", type=float, help="(--paired) The difference to detect, on the leaderboard's 0-1 scale "
              "(0.05 = 5 percentage points).")
@click.option("--discordance", type=float, help="(--paired) Share of items right on exactly one side (0/1 scores).")
@click.option("--sd", type=float, help="(--paired) SD of the paired per-item differences (other scores).")
@click.option("--pilot", type=click.Path(), help="(--paired) A finished run to read the discordance or SD from.")
@click.option("--a", "config_a", help="(--pilot) First configuration, label or id.")
@click.option("--b", "config_b", help="(--pilot) Second configuration, label or id.")
@click.option("--task", help="(--pilot) Task (default: the run's first).")
@click.option("--metric", help="(--pilot) Metric (default: the task's first).")
@click.option("--alpha", type=float, default=0.05, show_default=True, help="(--paired) Two-sided significance level.")
@click.option("--power", type=float, default=0.8, show_default=True, help="(--paired) Power.")
def sample_size(population: int | None, confidence: float, margin: float, paired: bool, delta: float | None,
                discordance: float | None, sd: float | None, pilot: str | None, config_a: str | None,
                config_b: str | None, task: str | None, metric: str | None, alpha: float, power: float) -> None:
    """Print how many of POPULATION items '--sample fpc' draws (Voting or Consensus, App. B.1).

    With --paired: how many items the paired test needs to detect a difference --delta between two
    configurations with --power, from a pilot run (--pilot RUN --a CONFIG --b CONFIG) or a given
    --discordance (0/1 scores: exact McNemar) or --sd (paired t); POPULATION, when given, applies
    the finite-population correction.
    """
    if not paired:
        if population is None:
            raise UsageError("sample-size needs POPULATION (or --paired)")
        click.echo(cochran_sample_size(population, confidence, margin))
        return
    if delta is None:
        raise UsageError("sample-size --paired needs --delta")
    if pilot is not None:
        if discordance is not None or sd is not None:
            raise UsageError("give --pilot or --discordance/--sd, not both")
        if not (config_a and config_b):
            raise UsageError("--pilot needs --a and --b")
        from ..leaderboard.pilot import pilot_spread

        found = pilot_spread(pilot, config_a, config_b, task, metric)
        discordance, sd = found.discordance, found.sd
        spread = f"discordance {discordance:.4g}" if sd is None else f"SD of differences {sd:.4g}"
        click.echo(f"pilot: {found.items} shared items, {spread}", err=True)
    click.echo(paired_sample_size(delta, discordance=discordance, sd=sd, alpha=alpha, power=power,
                                  population=population))
