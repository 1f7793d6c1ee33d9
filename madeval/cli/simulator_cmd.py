"""``madeval simulator``: serve synthetic agents on an OpenAI-compatible endpoint."""

from __future__ import annotations

import click

from madeval.errors import UsageError

#: A count of faults: 0 (none) unless given, shown in --help.
_COUNT = {"type": int, "default": 0, "show_default": True}

#: The simulator's Batch API options: each one's flag, the BatchOptions field it sets, its help (after
#: "Batch API: ") and click's keywords. Declared once here: the command's options, the keywords the
#: command gets and the flag named by a one-line error all come from this table.
BATCH_OPTIONS = [
    ("--batch-delay", "completion_delay_s", "seconds from a batch's creation to its completion.",
     {"type": float, "default": 0.0, "show_default": True}),
    ("--batch-fail-rate", "fail_rate", "share of lines that fail (server_error in the error file).",
     {"type": float, "default": 0.0, "show_default": True}),
    ("--batch-expire-after", "expire_after_lines", "a batch expires after answering this many lines, the rest "
     "in its error file as batch_expired (default: never).", {"type": int}),
    ("--batch-cancel-after", "cancel_after_lines", "the provider cancels a batch after answering this many "
     "lines, the rest in no file (default: never).", {"type": int}),
    ("--batch-fail", "fail_batches", "every batch fails as a whole when it is created.", {"is_flag": True}),
    ("--batch-refuse-uploads", "refuse_uploads",
     "the first this many file uploads get HTTP 429 with Retry-After: 1.", _COUNT),
    ("--batch-refuse-looks", "refuse_looks", "the first this many looks at a batch's status get HTTP 503.", _COUNT),
    ("--batch-enqueued-token-limit", "enqueued_token_limit", "a batch that would bring the prompt tokens of the "
     "unfinished batches over this many fails as a whole with OpenAI's token_limit_exceeded (default: no limit).",
     {"type": int}),
    ("--batch-bad-downloads", "bad_downloads", "the first this many downloads of an output or error file are "
     "spoilt (--batch-bad-download).", _COUNT),
    ("--batch-bad-download", "bad_download", "how a spoilt download goes wrong: HTTP 500, an HTML page, or half "
     "the file's bytes.",
     {"type": click.Choice(["refused", "not-json", "cut-short"]), "default": "refused", "show_default": True}),
    ("--batch-lost-creations", "lost_creations",
     "the first this many batch creations make the batch, then answer HTTP 500.", _COUNT),
    ("--batch-refuse-creations", "refuse_creations",
     "the first this many batch creations make nothing and answer HTTP 500.", _COUNT),
    ("--batch-refuse-lists", "refuse_lists",
     "the first this many lists of more than one batch (GET /v1/batches) get HTTP 503.", _COUNT),
    ("--batch-unknown-lines", "unknown_lines",
     "each output file gets this many more lines naming a custom_id never sent.", _COUNT),
]

#: The --batch-* flag of each BatchOptions field, for the one-line error.
BATCH_FLAGS = {field: flag for flag, field, _, _ in BATCH_OPTIONS}


def batch_options(command):
    """Declare the options of :data:`BATCH_OPTIONS` on ``command``, in the table's order; the command
    gets each value as a keyword named for its BatchOptions field."""
    for flag, field, text, keywords in reversed(BATCH_OPTIONS):
        command = click.option(flag, field, help=f"Batch API: {text}", **keywords)(command)
    return command


@click.command()
@click.option("--tasks", default="generated", show_default=True, help="Tasks whose gold answers the agents know.")
@click.option(
    "--gold",
    type=click.Path(exists=True, dir_okay=False),
    help="Extra gold file (JSONL: input, answer, kind, options).",
)
@click.option("--include-path", multiple=True, help="Extra folder of task YAML files (repeatable).")
@click.option("--port", type=int, default=8765, show_default=True)
@click.option("--accuracy", type=float, default=0.6, show_default=True, help="Chance an agent's own answer is right.")
@click.option(
    "--conformity",
    type=float,
    default=0.0,
    show_default=True,
    help="Chance an agent adopts the most common answer shown to it (blind to the truth).",
)
@click.option(
    "--persuasion",
    type=float,
    default=0.0,
    show_default=True,
    help="Chance an agent whose own answer is wrong adopts the gold answer when a peer shown "
    "to it holds it (applied before conformity).",
)
@click.option(
    "--self-doubt",
    type=float,
    default=0.0,
    show_default=True,
    help="Chance an agent asked to double-check its answer with no peer answer shown (the "
    "self-check prompt of an agent cut off by a communication attack) abandons its "
    "current answer for a different one (self-correction without feedback degrades "
    "answers: Huang et al., ICLR 2024).",
)
@click.option("--latency", type=float, default=0.0, show_default=True, help="Seconds before each reply.")
@click.option("--decode-ms-per-token", type=float, default=0.0, show_default=True,
              help="Milliseconds per token of each answered reply, on top of --latency (a server that decodes "
              "1,000 / N tokens a second; the embedded model on a loaded CPU: about 100).")
@click.option("--rate-limit", type=float, default=0.0, help="Share of requests answered with HTTP 429.")
@click.option(
    "--quota",
    type=float,
    help="At most this many chat requests a second; the others get HTTP 429 "
    "with a Retry-After (a rate limit as a real API has one).",
)
@click.option("--retry-after-date", is_flag=True, help="Send --quota's Retry-After as an HTTP date, not seconds.")
@click.option("--server-error", type=float, default=0.0, help="Share of requests answered with HTTP 500.")
@click.option("--timeout-rate", type=float, default=0.0, help="Share of requests held until the client times out.")
@click.option("--empty", type=float, default=0.0, help="Share of replies with empty content.")
@click.option("--malformed", type=float, default=0.0, help="Share of replies that are not valid JSON.")
@click.option(
    "--hostile",
    help="Sabotage chat requests with these modes, comma separated (see "
    "madeval.simulator.hostile.MODES: trickle, endless-chunked, huge-length, smuggled, "
    "conflicting-length, invalid-json, wrong-shape, empty-choices, error-200, "
    "endless-continue, reset-mid-body, 10mb-reply, nested-json, nested-400, lying-usage).",
)
@click.option(
    "--hostile-rate",
    type=float,
    default=0.2,
    show_default=True,
    help="Share of chat requests sabotaged (chosen by a hash of --seed and the request).",
)
@click.option(
    "--hostile-interval",
    type=float,
    default=0.5,
    show_default=True,
    help="Seconds between the bytes of 'trickle' and the responses of 'endless-continue'.",
)
@click.option(
    "--max-concurrency",
    type=int,
    help="Answer at most this many chat requests at once; the others wait in a queue (a replica; default: no limit).",
)
@click.option(
    "--prefix-cache-tokens",
    type=int,
    help="Keep a prefix cache of this many prompt tokens, "
    "least recently used blocks dropped first, and report each reply's cached share as "
    "usage.prompt_tokens_details.cached_tokens (default: none, and no cached count).",
)
@click.option(
    "--block-tokens", type=int, default=16, show_default=True, help="Tokens per prefix cache block (vLLM's block size)."
)
@click.option(
    "--prefill-ms-per-1k",
    type=float,
    default=0.0,
    show_default=True,
    help="Milliseconds per 1,000 prompt tokens not found in the prefix cache, on top of --latency.",
)
@click.option(
    "--refuse-response-format",
    type=click.Choice(["400", "500"]),
    help="Refuse requests that ask for structured answers (response_format): 400, or 500 with "
    "a validation error as llama-cpp-python answers OpenAI's json_schema form.",
)
@click.option(
    "--unknown",
    type=click.Choice(["error", "answer"]),
    default="error",
    show_default=True,
    help="A prompt quoting no known question: refused with HTTP 400, which the run reports as "
    "failed units (error), or answered at random (answer).",
)
@click.option(
    "--served-model-name",
    "served",
    multiple=True,
    help="The model name GET /models lists (repeatable; vLLM's option): only these names. "
    "[default: 'simulator' and every name asked for]",
)
@batch_options
@click.option("--seed", type=int, default=0, show_default=True)
def simulator(
    tasks,
    gold,
    include_path,
    port,
    accuracy,
    conformity,
    persuasion,
    self_doubt,
    latency,
    decode_ms_per_token,
    rate_limit,
    quota,
    retry_after_date,
    server_error,
    timeout_rate,
    empty,
    malformed,
    hostile,
    hostile_rate,
    hostile_interval,
    max_concurrency,
    prefix_cache_tokens,
    block_tokens,
    prefill_ms_per_1k,
    refuse_response_format,
    unknown,
    served,
    seed,
    **batch,
) -> None:
    """Serve synthetic agents with known accuracy, conformity, persuasion, self-doubt, latency and faults.

    \b
    Each agent has a private answer per question, right with probability --accuracy. Shown other
    answers (peers' solutions, a discussion, ballot candidates), an agent whose private answer is
    wrong first adopts a shown gold answer with probability --persuasion; otherwise it adopts the
    most common shown answer with probability --conformity; otherwise it keeps its private answer.
    An agent shown no other answer keeps its own, except that asked to double-check its answer
    without seeing any peer (Society-of-Minds' self-check prompt, which an agent cut off by a
    communication attack gets) it abandons its current answer for a different one with
    probability --self-doubt: self-correction without external feedback often turns right answers
    wrong (Huang et al., "Large Language Models Cannot Self-Correct Reasoning Yet", ICLR 2024).
    With --persuasion 0 debate only spreads the most common answers, blind to the truth.

    \b
    --hostile MODE[,MODE] serves the same agents from a server that sabotages --hostile-rate of
    the chat requests (the same requests on every run, given --seed): endless or trickled
    bodies, false or conflicting lengths, smuggled responses, bad JSON, resets. GET /models
    answers normally. It cannot be combined with --latency or the fault rates above.

    \b
    A request quoting none of the known questions (a run of other --tasks than the simulator's)
    gets HTTP 400, is counted in GET /stats (unknown_questions) and warned about once here; a
    simulator that answered it at random would give that run a score and no sign of the mistake.

    \b
    --max-concurrency, --prefix-cache-tokens and --prefill-ms-per-1k make the simulator behave like
    one serving replica: a queue when saturated, a prefix cache over --block-tokens blocks, and a
    prefill cost for the tokens the cache did not hold. GET /stats shows the counts (no API key).

    \b
    The Files and Batches API (/v1/files, /v1/batches) answers each batch's lines with the same
    agents: --batch-delay, --batch-fail-rate, --batch-expire-after, --batch-cancel-after,
    --batch-fail, --batch-refuse-uploads, --batch-refuse-looks and --batch-enqueued-token-limit shape
    how (for --transport batch; GET /stats counts files, batches and lines under "batches"). Faults
    that would make a client pay twice: --batch-bad-downloads with --batch-bad-download,
    --batch-lost-creations, --batch-refuse-creations, --batch-refuse-lists and --batch-unknown-lines.
    """
    from madeval.core.plugins import registries
    from madeval.settings.config import RunSettings
    from madeval.simulator.agents import AgentProfile, SyntheticAgents
    from madeval.simulator.batches import BatchOptions
    from madeval.simulator.http import Faults, SimulatorServer, serve_forever
    from madeval.simulator.truth import GoldIndex
    from madeval.task.definition import load_tasks

    for name, value in (
        ("accuracy", accuracy),
        ("conformity", conformity),
        ("persuasion", persuasion),
        ("self-doubt", self_doubt),
    ):
        if not 0 <= value <= 1:
            raise UsageError(f"--{name} must be between 0 and 1, got {value}")
    _check_replica(max_concurrency, prefix_cache_tokens, block_tokens, prefill_ms_per_1k)
    replica_wanted = max_concurrency is not None or prefix_cache_tokens is not None or prefill_ms_per_1k
    batch_options = _batch_options(seed, batch)
    modes = _hostile_modes(
        hostile,
        hostile_rate,
        hostile_interval,
        latency
        or decode_ms_per_token
        or rate_limit
        or quota
        or server_error
        or timeout_rate
        or empty
        or malformed
        or replica_wanted
        or batch_options != BatchOptions(seed=seed),
    )
    if quota is not None and not quota > 0:
        raise UsageError(f"--quota must be positive, got {quota}")
    if not decode_ms_per_token >= 0:
        raise UsageError(f"--decode-ms-per-token must be at least 0, got {decode_ms_per_token}")
    settings = RunSettings(tasks=[t for t in tasks.split(",") if t], include_path=list(include_path))
    loaded = load_tasks(settings, registries())
    index = GoldIndex.from_tasks(loaded.values())
    if gold:
        index.update(GoldIndex.from_jsonl(gold))
    faults = Faults(
        rate_limit=rate_limit,
        server_error=server_error,
        timeout=timeout_rate,
        empty=empty,
        malformed=malformed,
        seed=seed,
        requests_per_s=quota,
        retry_after_date=retry_after_date,
        refuse_response_format=int(refuse_response_format) if refuse_response_format else None,
    )
    agents = SyntheticAgents(
        index, default=AgentProfile(accuracy, conformity, persuasion, self_doubt), seed=seed, unknown=unknown
    )
    if modes:
        from madeval.simulator.hostile import HostileServer

        server = HostileServer(
            agents,
            modes,
            rate=hostile_rate,
            seed=seed,
            interval_s=hostile_interval,
            port=port,
            keep_log=False,
            served=served,
        )
    else:
        server = SimulatorServer(
            agents,
            port=port,
            latency_s=latency,
            decode_s_per_token=decode_ms_per_token / 1000,
            faults=faults,
            max_concurrency=max_concurrency,
            prefix_cache_tokens=prefix_cache_tokens,
            block_tokens=block_tokens,
            prefill_s_per_token=prefill_ms_per_1k / 1e6,
            served=served,
            batch_options=batch_options,
        )
    serve_forever(
        server,
        ready=lambda bound: click.echo(
            f"simulator: {len(index)} questions known; serving on {bound.base_url}", err=True
        ),
    )


def _hostile_modes(hostile: str | None, rate: float, interval: float, other_faults: float) -> list[str]:
    """The --hostile modes, checked (one line and exit 2 for a bad value); [] without --hostile."""
    if hostile is None:
        return []
    from madeval.simulator.hostile import check_options

    modes = [mode.strip() for mode in hostile.split(",") if mode.strip()]
    try:
        check_options(modes, rate, interval)
    except ValueError as error:
        raise UsageError(f"--hostile: {error}") from None
    if other_faults:
        raise UsageError(
            "--hostile cannot be combined with --latency, --decode-ms-per-token, the fault rates, the replica or "
            "the batch options"
        )
    return modes


def _batch_options(seed: int, batch: dict):
    """The Batch API's behaviour from the --batch-* flags (``batch``: their values by
    :class:`~madeval.simulator.batches.BatchOptions` field); one line and exit 2 for a bad value."""
    from madeval.simulator.batches import BatchOptions

    try:
        return BatchOptions(seed=seed, **batch)
    except ValueError as error:
        field, _, rest = str(error).partition(" ")
        raise UsageError(f"{BATCH_FLAGS.get(field, field)} {rest}") from None


def _check_replica(
    max_concurrency: int | None, cache_tokens: int | None, block_tokens: int, prefill_ms_per_1k: float
) -> None:
    """One line and exit 2 for a replica option out of range."""
    if max_concurrency is not None and max_concurrency < 1:
        raise UsageError(f"--max-concurrency must be at least 1, got {max_concurrency}")
    if cache_tokens is not None and cache_tokens < 0:
        raise UsageError(f"--prefix-cache-tokens must be at least 0, got {cache_tokens}")
    if block_tokens < 1:
        raise UsageError(f"--block-tokens must be at least 1, got {block_tokens}")
    if prefill_ms_per_1k < 0:
        raise UsageError(f"--prefill-ms-per-1k must be at least 0, got {prefill_ms_per_1k}")
