"""The cost of a study before it runs: configurations x items x calls per item, each call of a
measured size, at a model's list or batch price (``madeval sample-size --prices``).

The size of a call is measured, not assumed, where a measurement exists:

* :func:`pilot_shape`: from a finished (pilot) run of madeval, its recorded calls per item and
  prompt and completion tokens per call, each debate once (the run's own records: a rescored record
  replays a debate already counted). The shape says which models answered the pilot: replies of
  madeval's simulator are synthetic (:attr:`CallShape.simulated`, a few tokens each, which
  ``sample-size`` refuses to price), and replies of another model than the one priced put a caution
  before the cost;
* :func:`mallm_shape`: from a MALLM output file (real debates; MALLM records no token counts). Each
  message's reply is its text; its prompt is rebuilt in MALLM's shape, the debate system prompt
  (MALLM paper, Figure 11: role, task, input, current solution, discussion so far) with the
  discussion of the visible turns (MALLM's ``visible_turns_in_memory``) and the improve prompt
  (Figure 16). Characters are counted and divided by 4 (:data:`CHARS_PER_TOKEN`): no tokenizer of
  the debating model is bundled, so the counts are an estimate in English text's usual ratio.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from madeval.debate.prompts.mallm import DEBATE_SYSTEM, DISCUSSION_LINES, SIMPLE_IMPROVE
from madeval.errors import UsageError
from madeval.llm.model_identity import simulated_models
from madeval.pricing.table import ModelPrice
from madeval.pricing.usage import record_usage, used_models

#: Characters per token of English text (OpenAI's rule of thumb), used where no tokenizer is at hand.
CHARS_PER_TOKEN = 4.0


@dataclass(frozen=True)
class CallShape:
    """What one debate on an item costs in calls, and one call in tokens (means)."""

    calls_per_item: float
    prompt_tokens: float
    completion_tokens: float
    #: where the figures come from, said with the cost
    source: str = "given"
    #: of ``prompt_tokens``, those the provider served from its prompt cache (measured on a pilot run
    #: whose provider reported them; 0 otherwise: every prompt token at the input price)
    cached_prompt_tokens: float = 0.0
    #: the models whose replies were measured (a pilot run's), by name
    models: tuple[str, ...] = ()
    #: of ``models``, those madeval's simulator answered: synthetic replies, whose sizes price nothing
    simulated: tuple[str, ...] = ()
    #: said before the cost when its figures may not hold for the model priced
    caution: str | None = None


@dataclass(frozen=True)
class StudyCost:
    """A study's calls, tokens and dollars at list and batch prices."""

    calls: float
    prompt_tokens: float
    completion_tokens: float
    list_dollars: float
    batch_dollars: float
    cached_prompt_tokens: float = 0.0

    def lines(self, model: str, shape: CallShape) -> list[str]:
        """The cost said in a few lines, with its figures and their source (and the shape's caution first)."""
        return [f"caution: {shape.caution}"] * bool(shape.caution) + [
            f"calls: {self.calls:,.0f} ({shape.calls_per_item:.2f} per item; {shape.source})",
            f"tokens: {self.prompt_tokens / 1e6:,.1f} M prompt ({shape.prompt_tokens:,.0f} per call) and "
            f"{self.completion_tokens / 1e6:,.1f} M completion ({shape.completion_tokens:,.0f} per call)"
            + (f"; {self.cached_prompt_tokens / 1e6:,.1f} M of the prompt tokens from the provider's prompt cache "
               f"({shape.cached_prompt_tokens:,.0f} per call, at cached_input)" if self.cached_prompt_tokens else ""),
            f"cost on {model}: ${self.list_dollars:,.2f} at list prices, ${self.batch_dollars:,.2f} at batch prices",
        ]


def study_cost(items: int, configurations: int, shape: CallShape, price: ModelPrice) -> StudyCost:
    """The cost of ``configurations`` x ``items`` debates of ``shape`` at ``price`` (the shape's cached
    prompt tokens at ``cached_input``)."""
    calls = items * configurations * shape.calls_per_item
    prompt, completion = calls * shape.prompt_tokens, calls * shape.completion_tokens
    cached = calls * shape.cached_prompt_tokens
    return StudyCost(calls, prompt, completion, price.cost(round(prompt), round(completion), round(cached)),
                     price.cost(round(prompt), round(completion), round(cached), batch=True), cached)


def pilot_shape(folder: str | Path, model: str | None = None) -> CallShape:
    """Calls per item and tokens per call measured on a finished run (all its configurations, each
    debate once: rescored records are left out; calls answered from the response cache count as
    calls but their tokens cost nothing, so they are left out), with the prompt tokens per call its
    provider said it served from its prompt cache. ``model``: the model the study is priced on; a
    pilot answered by other models (none of them madeval's simulator) gets a caution."""
    from madeval.analysis.run_data import load_run
    from madeval.leaderboard.table import per_item

    data = load_run(folder, transcripts=False, priced=True)
    own = [r for r in data.records if data.configurations[r["unit"]["config"]].get("source") == "run"]
    if not own:
        raise UsageError(f"the run in {folder} has no records to measure calls and tokens from")
    usages = [record_usage(r) for r in own]
    paid = sum(int(r["calls"]) - int(r.get("cached_calls") or 0) for r in own)
    prompt = sum(p for usage in usages for p, _, _ in usage.values())
    completion = sum(c for usage in usages for _, c, _ in usage.values())
    cached = sum(k or 0 for usage in usages for _, _, k in usage.values())  # None: not said
    if not paid:
        raise UsageError(f"the run in {folder} recorded no calls (an imported run?): nothing to measure")
    used = {name for usage in usages for name in used_models(usage) if name}
    simulated = simulated_models(data.run.get("models"), used)
    left_out = len(data.records) - len(own)
    source = f"measured on {len(own)} debates of {folder}" + (
        f" ({left_out} rescored records left out: they replay those debates)" if left_out else "")
    caution = None
    if model is not None and used and model not in used and not simulated:
        caution = (f"the pilot's replies came from {', '.join(sorted(used))}, not {model}: the tokens per call "
                   f"are theirs, and {model} may write longer or shorter replies")
    return CallShape(per_item(own, lambda r: r["calls"]), prompt / paid, completion / paid, source, cached / paid,
                     tuple(sorted(used)), tuple(simulated), caution)


def mallm_shape(path: str | Path, visible_turns: int = 1, max_turns: int | None = None) -> CallShape:
    """Tokens per call (characters / 4) and calls per debate measured on a MALLM output file (a JSON
    array of debates, optionally gzipped); ``visible_turns``: the discussion turns an agent sees;
    ``max_turns``: only the messages of the first turns (for a study whose debates stop sooner:
    later turns' prompts carry a discussion, the first turn's do not)."""
    from madeval.importers.mallm import check_record, records_of  # MALLM's reader: streamed, depth-bounded

    prompts: list[int] = []
    replies: list[int] = []
    debates = 0
    fixed = len(DEBATE_SYSTEM.format(persona="", instruction="", input="", context_line="", discussion="")) \
        + len(DISCUSSION_LINES.format(draft="", memory="")) + len(SIMPLE_IMPROVE)
    calls = []
    for number, debate in enumerate(records_of(Path(path)), 1):
        check_record(debate, number, Path(path).name)
        debates += 1
        messages = [m for m in debate.get("globalMemory") or [] if isinstance(m, dict)
                    and (max_turns is None or _turn(m) <= max_turns)]
        personas = _personas(debate)
        question = len(str(debate.get("instruction") or "")) + sum(len(str(part)) for part in debate.get("input") or [])
        draft = ""
        said: dict[int, int] = {}  # turn -> characters of its discussion lines so far ("persona: message")
        for message in messages:
            turn = _turn(message)
            memory = sum(said.get(seen, 0) for seen in range(turn - visible_turns, turn + 1))
            prompts.append(fixed + len(personas.get(str(message.get("persona")), "")) + question + len(draft) + memory)
            text = str(message.get("message", ""))
            replies.append(len(text))
            draft = str(message.get("solution") or text)
            said[turn] = said.get(turn, 0) + len(str(message.get("persona", ""))) + 2 + len(text) + 1
        calls.append(len(messages))
    if not prompts:
        raise UsageError(f"{path} holds no MALLM messages to measure")
    return CallShape(statistics.fmean(calls), statistics.fmean(prompts) / CHARS_PER_TOKEN,
                     statistics.fmean(replies) / CHARS_PER_TOKEN,
                     f"{len(prompts):,} messages of {debates} MALLM debates in {Path(path).name}"
                     + (f" (turns 1-{max_turns})" if max_turns else "") + ", characters / 4")


def _turn(message: dict[str, Any]) -> int:
    turn = message.get("turn", 1)
    return turn if isinstance(turn, int) and not isinstance(turn, bool) else 1


def _personas(debate: dict[str, Any]) -> dict[str, str]:
    """Persona name -> the role line of the prompt (name and description), from MALLM's ``personas``
    (written as Python's repr of a list of dicts)."""
    import ast

    raw = debate.get("personas")
    try:
        listed = ast.literal_eval(raw) if isinstance(raw, str) and len(raw) < 100_000 else raw
    except (ValueError, SyntaxError, RecursionError, MemoryError, TypeError):
        return {}
    if not isinstance(listed, list):
        return {}
    return {str(p.get("persona")): f"{p.get('persona')}: {p.get('personaDescription', '')}"
            for p in listed if isinstance(p, dict)}
