"""``madeval sample-size``: Cochran's sample size with finite-population correction, or the paired
form: items needed to detect a difference between two configurations (``--paired``)."""

from __future__ import annotations

import click

from madeval.errors import UsageError
from madeval.settings.sampling import DEFAULT_CONFIDENCE, DEFAULT_MARGIN, cochran_sample_size


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
@click.option("--prices", type=click.Path(), help="Price file: also print the study's cost at list and batch "
              "prices (needs --model and the calls' size: --cost-pilot, --cost-mallm or the three figures).")
@click.option("--model", help="(--prices) The model of the price file the study runs on.")
@click.option("--configurations", type=click.IntRange(min=1), default=1, show_default=True,
              help="(--prices) Configurations the study runs on every item.")
@click.option("--items", type=click.IntRange(min=1), help="(--prices) Items per configuration [default: the "
              "sample size printed].")
@click.option("--calls-per-item", type=click.FloatRange(min=0, min_open=True),
              help="(--prices) Model calls per debate (replaces the measured one).")
@click.option("--prompt-tokens", type=click.FloatRange(min=0), help="(--prices) Prompt tokens per call.")
@click.option("--completion-tokens", type=click.FloatRange(min=0), help="(--prices) Completion tokens per call.")
@click.option("--cost-pilot", type=click.Path(), help="(--prices) A finished run to measure calls per item and "
              "tokens per call from.")
@click.option("--cost-mallm", type=click.Path(), help="(--prices) A MALLM output file to measure tokens per call "
              "(characters / 4) and calls per debate from.")
@click.option("--cost-turns", type=click.IntRange(min=1), help="(--cost-mallm) Measure only the first N turns' "
              "messages (a study whose debates stop sooner).")
def sample_size(population: int | None, confidence: float, margin: float, paired: bool, delta: float | None,
                discordance: float | None, sd: float | None, pilot: str | None, config_a: str | None,
                config_b: str | None, task: str | None, metric: str | None, alpha: float, power: float,
                prices: str | None, model: str | None, configurations: int, items: int | None,
                calls_per_item: float | None, prompt_tokens: float | None, completion_tokens: float | None,
                cost_pilot: str | None, cost_mallm: str | None, cost_turns: int | None) -> None:
    """Print how many of POPULATION items '--sample fpc' draws (Voting or Consensus, App. B.1).

    With --paired: how many items the paired test needs to detect a difference --delta between two
    configurations with --power, from a pilot run (--pilot RUN --a CONFIG --b CONFIG) or a given
    --discordance (0/1 scores: exact McNemar) or --sd (paired t). The board's paired tests have no
    finite-population correction, so neither has this number: POPULATION, when given, only bounds it
    (a study needing more items than there are is refused, with the power all of them give).

    With --prices: also the cost of the study (--configurations x the items x the calls per item) on
    --model at list and batch prices; --items alone (without POPULATION or --paired) prices a study
    of that size.
    """
    cost = None
    if prices is not None:
        if cost_turns is not None and not cost_mallm:
            raise UsageError("--cost-turns goes with --cost-mallm")
        cost = _cost_of(prices, model, cost_pilot, cost_mallm, calls_per_item, prompt_tokens, completion_tokens,
                        cost_turns)
    elif any(v is not None for v in (model, items, calls_per_item, prompt_tokens, completion_tokens, cost_pilot,
                                     cost_mallm, cost_turns)):
        raise UsageError("--model, --items, --calls-per-item, --prompt-tokens, --completion-tokens, --cost-pilot, "
                         "--cost-mallm and --cost-turns price a study: give --prices too")
    if cost is not None and items is not None and population is None and not paired:
        _print_cost(cost, items, configurations)
        return
    n = _size(population, confidence, margin, paired, delta, discordance, sd, pilot, config_a, config_b, task,
              metric, alpha, power)
    click.echo(n)
    if cost is not None:
        _print_cost(cost, items or n, configurations)


def _cost_of(prices: str, model: str | None, pilot: str | None, mallm: str | None, calls: float | None,
             prompt: float | None, completion: float | None, turns: int | None = None):
    """(model, its price, the calls' shape) for --prices, every problem one line."""
    from madeval.leaderboard.study_cost import CallShape, mallm_shape, pilot_shape
    from madeval.pricing import read_price_table

    table = read_price_table(prices)
    if not model:
        raise UsageError("--prices needs --model (a model of the price file)")
    price = table.price(model)
    if price is None:
        raise UsageError(f"no price for model '{model}' in {prices} (models: {', '.join(table)})")
    if pilot and mallm:
        raise UsageError("give --cost-pilot or --cost-mallm, not both")
    measured = pilot_shape(pilot, model) if pilot else mallm_shape(mallm, max_turns=turns) if mallm else None
    figures = {"--calls-per-item": calls, "--prompt-tokens": prompt, "--completion-tokens": completion}
    if measured is not None and measured.simulated and (prompt is None or completion is None):
        raise UsageError(
            f"the pilot run {pilot} was answered by madeval's simulator ({', '.join(measured.simulated)}): its "
            f"replies are synthetic ({measured.completion_tokens:,.0f} tokens per call), not {model}'s; measure on a "
            "run of that model or a MALLM file (--cost-mallm), or give --prompt-tokens and --completion-tokens")
    if measured is None and None in figures.values():
        missing = ", ".join(name for name, value in figures.items() if value is None)
        raise UsageError(f"--prices needs the calls' size: --cost-pilot RUN, --cost-mallm FILE or {missing}")
    given = [name for name, value in figures.items() if value is not None]
    shape = CallShape(
        calls if calls is not None else measured.calls_per_item,
        prompt if prompt is not None else measured.prompt_tokens,
        completion if completion is not None else measured.completion_tokens,
        measured.source + ("; answered by madeval's simulator" if measured.simulated else "")
        + (f"; {', '.join(given)} given" if given else "") if measured else "given",
        # a pilot's cached share holds for its own prompts, not for prompt sizes given instead
        measured.cached_prompt_tokens if measured and prompt is None else 0.0,
        caution=measured.caution if measured and not (prompt is not None and completion is not None) else None)
    return model, price, shape


def _print_cost(cost, items: int, configurations: int) -> None:
    from madeval.leaderboard.study_cost import study_cost

    model, price, shape = cost
    click.echo(f"study: {configurations} configurations x {items} items")
    for line in study_cost(items, configurations, shape, price).lines(model, shape):
        click.echo(line)


def _size(population, confidence, margin, paired, delta, discordance, sd, pilot, config_a, config_b, task, metric,
          alpha, power) -> int:
    """The sample size the command prints (see :func:`sample_size`)."""
    if not paired:
        if population is None:
            raise UsageError("sample-size needs POPULATION (or --paired, or --items with --prices)")
        return cochran_sample_size(population, confidence, margin)
    if delta is None:
        raise UsageError("sample-size --paired needs --delta")
    if pilot is not None:
        if discordance is not None or sd is not None:
            raise UsageError("give --pilot or --discordance/--sd, not both")
        if not (config_a and config_b):
            raise UsageError("--pilot needs --a and --b")
        from madeval.leaderboard.pilot import pilot_spread

        found = pilot_spread(pilot, config_a, config_b, task, metric)
        discordance, sd = found.discordance, found.sd
        spread = f"discordance {discordance:.4g}" if sd is None else f"SD of differences {sd:.4g}"
        click.echo(f"pilot: {found.items} shared items, {spread}", err=True)
    from madeval.analysis.power import paired_sample_size  # scipy and statsmodels: only when asked

    n = paired_sample_size(delta, discordance=discordance, sd=sd, alpha=alpha, power=power, population=population)
    if population is not None:
        click.echo(f"of {population} items; no finite-population correction: the board's paired tests have none",
                   err=True)
    return n
