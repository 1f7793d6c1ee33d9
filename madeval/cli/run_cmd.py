"""``madeval run`` (the default command): evaluate debate configurations on tasks."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..config import key_values, parse_endpoints, read_config_file
from ..errors import UsageError


def endpoint_table(values: tuple[str, ...]) -> dict[str, str]:
    """``("local=http://...",)`` -> ``{"local": "http://..."}`` (``--endpoint``, repeatable)."""
    try:
        return parse_endpoints(list(values))
    except ValueError as error:
        raise UsageError(f"--endpoint {error}") from None


@click.command()
@click.option("--tasks", "-t", help="Tasks, groups or tags, comma separated (see 'madeval tasks').")
@click.option("--persona", help="Persona generator, or one per agent separated by commas [none].")
@click.option("--responder", help="Responder: how agents write [simple].")
@click.option("--paradigm", help="Paradigm: turn order and visibility [memory].")
@click.option("--decider", help="Decider: when to stop and what the answer is [majority_consensus].")
@click.option("--persona-args", help="Persona generator options, key=value,...")
@click.option("--responder-args", help="Responder options, key=value,...")
@click.option("--paradigm-args", help="Paradigm options, key=value,...")
@click.option("--decider-args", help="Decider options, key=value,...")
@click.option("--agents", type=int, help="Number of agents [3].")
@click.option("--neutral-agents", type=int, help="Agents that speak but do not vote or agree [0].")
@click.option("--max-turns", type=int, help="Turn limit; a debate without decision falls back [10].")
@click.option("--agent-models", help="One model per agent, comma separated, each MODEL or MODEL@ENDPOINT.")
@click.option("--judge-model", help="Model for judge calls (MODEL or MODEL@ENDPOINT) [agent 1's].")
@click.option("--name", help="Display name of the configuration.")
@click.option("--preset", help="A named bundle of options, e.g. baseline_cot, self_consistency (see 'madeval plugins').")
@click.option("--extract", type=click.Choice(["task", "llm"]), help="Final answers by the task's extractor or by MALLM's LLM extraction prompt [task].")
@click.option("--all-agents-draft-first", is_flag=True, default=None, help="All-Agents Drafting: independent first drafts (seed 001, 4.3).")
@click.option("--collective-improvement", is_flag=True, default=None, help="Collective Improvement: agents see only the previous turn's solutions (seed 001, 4.3).")
@click.option("--challenge", help="Challenge the final answer afterwards: plain,history,wrong (seed 001, 4.2).")
@click.option("--repeats", type=int, help="Run every item this many times with distinct seeds [1].")
@click.option("--limit", type=int, help="Use only the first N items of each task (for testing).")
@click.option("--sample", help="Items per task: 'all', a number N (seeded random draw) or 'fpc' "
              "(Cochran's size with finite-population correction) [all].")
@click.option("--confidence", type=float, help="Confidence level for --sample fpc [0.95].")
@click.option("--margin", type=float, help="Margin of error for --sample fpc [0.05].")
@click.option("--seed", type=int, help="Run seed: item choice and sampling seeds [1234].")
@click.option("--model", help="Model name for all agents [the embedded model, or the endpoint's only model].")
@click.option("--base-url", help="OpenAI-compatible endpoint (default: start the embedded model).")
@click.option("--endpoint", "endpoints", multiple=True, help="Extra endpoint NAME=URL (repeatable).")
@click.option("--concurrency", type=int, help="LLM calls in flight at most [64].")
@click.option("--endpoint-concurrency", help="LLM calls in flight per endpoint at most: N for every endpoint, "
              "or NAME=N,... per endpoint ('default' is --base-url) [--concurrency; the embedded model: 1].")
@click.option("--timeout", type=float, help="Seconds a call may take in all (connect, send, read the whole reply) before it is retried [120].")
@click.option("--max-attempts", type=int, help="Attempts per call before the unit fails [8].")
@click.option("--transport", help="How calls travel: 'aiohttp' (a third of the official client's CPU per call) or 'openai' (the official client); 'direct' is an old name of aiohttp [aiohttp].")
@click.option("--max-response-mb", type=float, help="Largest response body accepted, in MiB; a larger one fails the call without retry [16].")
@click.option("--temperature", type=float, help="Sampling temperature [1.0].")
@click.option("--top-p", type=float, help="Nucleus sampling top_p [1.0].")
@click.option("--max-tokens", type=int, help="Tokens per reply at most [1024].")
@click.option("--output-path", "-o", help="Run folder; re-running into it resumes [madeval-out/run-<time>].")
@click.option("--include-path", multiple=True, help="Extra folder of task YAML files (repeatable).")
@click.option("--cache", help="Response cache file, or 'off' [~/.cache/madeval/responses.sqlite].")
@click.option("--config", "config_file", help="YAML file with any of these options (command line wins).")
@click.option("--no-progress", is_flag=True, help="Do not draw the progress bar.")
def run(config_file: str | None, no_progress: bool, **given: Any) -> None:
    """Run debates on tasks and print the leaderboard table."""
    options: dict[str, Any] = read_config_file(config_file) if config_file else {}
    for key in ("persona_args", "responder_args", "paradigm_args", "decider_args"):
        if given.get(key) is not None:
            given[key] = key_values(given[key])
    if given.get("endpoints"):
        given["endpoints"] = endpoint_table(given["endpoints"])
    if isinstance(given.get("persona"), str) and "," in given["persona"]:
        given["persona"] = [p.strip() for p in given["persona"].split(",")]
    options.update({key: value for key, value in given.items() if value not in (None, ())})
    from ..evaluation import evaluate

    result = evaluate(**options, show_progress=not no_progress, out=sys.stdout)
    if result.outcome.failed:
        click.echo(
            f"madeval: {result.outcome.failed} units failed for good (see errors.jsonl); "
            "run the same command again to retry them",
            err=True,
        )
        sys.exit(1)
