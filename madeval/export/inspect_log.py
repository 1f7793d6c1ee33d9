"""A run as an inspect-ai eval log, for people who read evaluations in ``inspect view``.

Written only through inspect-ai's public Python API (``inspect_ai.log.write_eval_log`` with
``EvalLog``, ``EvalSample`` and ``ChatMessage*``): its maintainers say the ``.eval`` file format is
versioned but not a frozen spec, and the Python API is the stable surface. inspect-ai is an
optional extra (``pip install 'madeval[inspect]'``; from a clone ``pip install -e '.[inspect]'``).

The mapping: one log for the run; one sample per (item, configuration, repeat): ``id``
``TASK/ITEM/CONFIGURATION``, ``epoch`` the repeat + 1; ``input`` the question (the item id when
the task's items cannot be read again), ``target`` the gold answer; ``messages`` the question,
then every message of the debate in order, each an assistant message whose metadata says its
agent, persona, turn, step, stage, parsed answer and agreement; ``output`` the decided text;
``scores`` every metric of the record with the extracted answer and the decider's reason; sample
metadata holds the configuration, the decision and the dynamics of the debate
(:func:`madeval.analysis.debate_facts.debate_facts`, when the metric can score an answer alone);
``model_usage`` holds the tokens of the debate's calls per model (:func:`model_usage`), and the
log's stats their sum over the samples. A sample's ``total_time`` is the debate's own elapsed time;
a debate imported from another tool has none (MALLM's ``clockSeconds`` runs while the debate waits
for a server it shares with the others: hours for a debate of minutes), and its metadata keeps
what that tool recorded as ``imported_wall_s``. The log's model is the debate's model(s) (the
run's served models, else the agents'), and its ``started_at`` and ``completed_at`` are the run's
first session's start (else when the folder was written) and the last write of its records.
The log's results hold each (configuration, task)'s score as the leaderboard computes it: the
mean over items of the mean over an item's repeats.

Memory: ``write_eval_log`` takes the whole ``EvalLog``, so every sample is held at once (the
public API has no sample-by-sample writer): 284 MB peak for the 372 real MALLM debates.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import re
from collections import defaultdict
from pathlib import Path
from typing import Any, Iterable, Mapping

from madeval.analysis.run_data import read_run_description
from madeval.errors import StorageError, UsageError
from madeval.importers.writer import IMPORTED_KEY
from madeval.pricing.usage import calls_usage
from madeval.records.folder import RECORDS_FILE, RUN_FILE, ReadReport
from madeval.records.run_file import SESSIONS_KEY
from madeval.util.install import import_optional, install_command
from madeval.util.safe_files import replacing_path
from madeval.viewer.debates import facts_of, left_out, readable, run_records
from madeval.viewer.questions import load_questions

#: Characters a sample id keeps (it names a file inside the log's zip).
UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def install_hint() -> str:
    """How to install the inspect extra, the way madeval was installed (:mod:`madeval.util.install`)."""
    return f"{install_command('inspect')} (or pip install inspect-ai)"


def require_inspect() -> None:
    """A one-line :class:`UsageError` when inspect-ai is not installed."""
    import_optional("inspect_ai.log", lambda: f"exporting to inspect-ai's format needs inspect-ai: {install_hint()}")


def sample_id(record: Mapping[str, Any]) -> str:
    """The sample's id: ``TASK/ITEM/CONFIGURATION`` (the repeat is the sample's epoch).

    inspect-ai names a sample's file in the ``.eval`` zip after its id, so a part with other
    characters than letters, digits and ``._-`` (an item id or a label is any text) has them
    replaced by ``_`` and is cut to 60 characters; the id then ends with ``~`` and 10 hex digits
    of the parts' hash, so it stays unique. The parts themselves are in the sample's metadata."""
    unit = record["unit"]
    parts = [str(unit["task"]), str(unit["item"]), str(record.get("config_label") or unit["config"])]
    safe = [UNSAFE.sub("_", part)[:60] for part in parts]
    if safe == parts:
        return "/".join(parts)
    digest = hashlib.sha256(json.dumps(parts).encode("utf-8", "backslashreplace")).hexdigest()[:10]
    return "/".join(safe) + f"~{digest}"


def eval_sample(record: Mapping[str, Any], question: str | None, imported: bool = False):
    """One record as an ``inspect_ai.log.EvalSample``; ``imported``: its debate came from another tool
    (its ``wall_s`` is that tool's clock, kept in the metadata, not the sample's time)."""
    from inspect_ai.log import EvalSample  # the optional extra, imported when used
    from inspect_ai.model import ChatMessageAssistant, ChatMessageUser, ModelOutput
    from inspect_ai.scorer import Score

    identity = sample_id(record)
    record, question = readable(record), readable(question)
    unit = record["unit"]
    transcript = record.get("transcript") or {}
    agents = {a.get("index"): a for a in transcript.get("agents") or []}
    shown_input = question if question is not None else f"(question not available: item {unit['item']})"
    messages: list[Any] = [ChatMessageUser(content=shown_input, metadata={"role": "question"})]
    for message in transcript.get("messages") or []:
        agent = agents.get(message.get("agent")) or {}
        persona = agent.get("persona") or {}
        messages.append(ChatMessageAssistant(
            content=str(message.get("text") or ""), model=agent.get("model"),
            metadata={"agent": message.get("agent"), "persona": persona.get("name"),
                      "persona_description": persona.get("description"), "neutral": bool(agent.get("neutral")),
                      "turn": message.get("turn"), "step": message.get("step"), "stage": message.get("stage"),
                      "answer": message.get("answer"), "agreement": message.get("agreement"),
                      "backs": message.get("backs"), "message_id": message.get("id")},
        ))
    decision = transcript.get("decision") or {}
    reason = f"{decision.get('decider')}: {decision.get('reason')} in turn {decision.get('turn')}"
    facts, why_not = facts_of(record)
    scores = {name: Score(value=float(value), answer=record.get("prediction"), explanation=reason)
              for name, value in (record.get("metrics") or {}).items()}
    label = str(record.get("config_label") or unit["config"])
    return EvalSample(
        id=identity, epoch=int(unit.get("repeat") or 0) + 1, input=shown_input,
        target=_target(record.get("target")), messages=messages,
        output=ModelOutput.from_content(model=f"madeval/{label}", content=str(decision.get("answer") or "")),
        scores=scores,
        metadata={"configuration": label, "config_id": unit["config"], "task": unit["task"], "item": unit["item"],
                  "repeat": unit.get("repeat"), "decision": decision, "prediction": record.get("prediction"),
                  "turns": record.get("turns"), "tokens": record.get("tokens"),
                  "dynamics": facts.to_dict() if facts else None,
                  **({"no_dynamics": why_not} if why_not else {}),
                  **({"imported_wall_s": record.get("wall_s")} if imported else {})},
        total_time=None if imported else record.get("wall_s"), model_usage=model_usage(record),
    )


def model_usage(record: Mapping[str, Any]) -> dict[str, Any]:
    """The debate's calls as inspect-ai's ``model_usage``: model -> ``ModelUsage`` (input, output and
    total tokens, and ``input_tokens_cache_read``, the prompt tokens the provider said it served from
    its prompt cache: None when no call of that model said). Calls the response cache answered are
    left out, as pricing leaves them out: no model was asked (their tokens are the original call's)."""
    from inspect_ai.model import ModelUsage  # the optional extra, imported when used

    transcript = record.get("transcript")
    calls = transcript.get("calls") if isinstance(transcript, dict) else None
    calls = calls if isinstance(calls, list) else []  # a record from elsewhere may hold anything
    usage: dict[str, Any] = {}
    for (model, _), (prompt, completion, cached) in calls_usage(c for c in calls if isinstance(c, dict)).items():
        used = ModelUsage(input_tokens=prompt, output_tokens=completion, total_tokens=prompt + completion,
                          input_tokens_cache_read=cached)
        usage[model] = usage[model] + used if model in usage else used  # its batched and other calls
    return usage


def _target(target: Any) -> str | list[str]:
    if isinstance(target, list):
        return [str(t) for t in target]
    return "" if target is None else str(target)


def eval_log(run_name: str, described: Mapping[str, Any], samples: list[Any],
             records: Iterable[Mapping[str, Any]], models: Iterable[str] = (),
             times: tuple[str, str] | None = None):
    """The ``EvalLog`` of a run: ``samples`` and, in its results, each (configuration, task)'s score
    per metric (the mean over items of the mean over an item's repeats, as the leaderboard).
    ``models``: the debates' models (the agents' of every sample; :func:`debate_models` adds the
    run's); ``times``: the run's (started, completed), ISO 8601 (:func:`run_times`)."""
    from inspect_ai.log import (  # the optional extra, imported when used
        EvalConfig,
        EvalDataset,
        EvalLog,
        EvalMetric,
        EvalResults,
        EvalScore,
        EvalSpec,
        EvalStats,
    )

    tasks = list(described.get("tasks") or {})
    configurations = {cid: c.get("label", cid) for cid, c in (described.get("configurations") or {}).items()}
    scores = [
        EvalScore(name=f"{label}/{task}", scorer="madeval",
                  metrics={metric: EvalMetric(name=metric, value=value) for metric, value in by_metric.items()})
        for (label, task), by_metric in board_scores(records).items()
    ]
    return EvalLog(
        version=2, status="success",
        eval=EvalSpec(
            created=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            task=f"madeval/{run_name}", dataset=EvalDataset(name=",".join(tasks), samples=len(samples)),
            model=debate_models(described, models), config=EvalConfig(),
            metadata={"madeval_run": run_name, "configurations": configurations, "tasks": tasks},
        ),
        results=EvalResults(total_samples=len(samples), completed_samples=len(samples), scores=scores),
        samples=samples, stats=EvalStats(model_usage=_summed(sample.model_usage for sample in samples),
                                         **dict(zip(("started_at", "completed_at"), times or ()))),
    )


def debate_models(described: Mapping[str, Any], agents: Iterable[str] = ()) -> str:
    """The model(s) the run's debates asked, comma separated: the served models ``run.json`` lists,
    the models its agents name (``agents``: a run imported from another tool lists no served
    model), else ``--model`` as given; ``unknown`` when none is known."""
    listed = described.get("models")
    names = [str(m.get("model")) for m in listed if isinstance(m, dict) and m.get("model")] \
        if isinstance(listed, list) else []
    names += [str(name) for name in agents if name and name != "?"]  # "?": an importer's unknown model
    settings = described.get("settings") if isinstance(described.get("settings"), Mapping) else {}
    names = names or [str(settings.get("model") or described.get("default_model") or "")]
    return ", ".join(sorted({name for name in names if name})) or "unknown"


def run_times(run: Path, described: Mapping[str, Any]) -> tuple[str, str]:
    """(started, completed) of a run, ISO 8601 with the time zone: its first session's start (else
    the earliest write of ``run.json`` and the records) and the last write of its records (a later
    rescore's are not the run's); never a completion before the start."""
    written = [os.lstat(run / name).st_mtime for name in (RECORDS_FILE, RUN_FILE) if (run / name).is_file()]
    sessions = described.get(SESSIONS_KEY)
    starts = [entry.get("started") for entry in sessions if isinstance(entry, dict)] \
        if isinstance(sessions, list) else []
    first = next((start for start in starts if isinstance(start, str) and start), None)
    try:
        started = datetime.datetime.fromisoformat(first) if first else None
    except ValueError:  # a hand-edited run.json
        started = None
    started = started or _utc(min(written, default=0.0))
    completed = max(started, _utc(written[0] if written else 0.0))
    return started.isoformat(timespec="seconds"), completed.isoformat(timespec="seconds")


def _utc(timestamp: float) -> datetime.datetime:
    return datetime.datetime.fromtimestamp(timestamp, datetime.timezone.utc)


def _summed(usages: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Model -> the sum of its ``ModelUsage`` over ``usages``."""
    total: dict[str, Any] = {}
    for usage in usages:
        for model, used in usage.items():
            total[model] = total[model] + used if model in total else used
    return total


def board_scores(records: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], dict[str, float]]:
    """(configuration label, task) -> metric -> mean over items of the mean over repeats."""
    by_item: dict[tuple[str, str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for record in records:
        unit = record["unit"]
        label = str(record.get("config_label") or unit["config"])
        for metric, value in (record.get("metrics") or {}).items():
            by_item[(label, unit["task"], metric)][unit["item"]].append(float(value))
    result: dict[tuple[str, str], dict[str, float]] = defaultdict(dict)
    for (label, task, metric), items in by_item.items():
        means = [sum(values) / len(values) for values in items.values()]
        result[(label, task)][metric] = sum(means) / len(means)
    return dict(result)


def export_inspect(run: Path, output: Path) -> dict[str, Any]:
    """Write ``run``'s debates to ``output`` as an inspect-ai log (``.eval``, or ``.json``);
    returns ``samples`` and ``path``. Nothing is written when the run cannot be read."""
    require_inspect()
    from inspect_ai.log import write_eval_log  # the optional extra, imported when used

    if output.suffix not in (".eval", ".json"):
        raise UsageError(f"{output}: an inspect-ai log is a .eval or .json file")
    described = read_run_description(run)
    questions = load_questions(described)
    samples, scored = [], []
    report, unreadable = ReadReport(), []
    configurations = described.get("configurations") or {}
    for record in run_records(run, report):
        own = configurations.get(record["unit"]["config"]) or record.get("configuration")
        try:  # a transcript of another shape (a damaged file) is left out and named, as the viewer does
            samples.append(eval_sample(record, questions.of(record), bool(own and own.get(IMPORTED_KEY))))
        except (AttributeError, KeyError, TypeError, ValueError):  # pydantic's ValidationError is a ValueError
            unreadable.append(str(record["unit"]["key"]))
            continue
        scored.append({"unit": record["unit"], "config_label": record.get("config_label"),
                       "metrics": record.get("metrics") or {}})
    agents = {m.model for sample in samples for m in sample.messages if getattr(m, "model", None)}
    log = eval_log(run.resolve().name, described, samples, scored, agents, run_times(run, described))
    try:  # inspect-ai writes by name: into a new private folder, then renamed over the output
        with replacing_path(output) as temporary:  # named like the output: its suffix picks the format
            write_eval_log(log, str(temporary))
    except OSError as error:
        raise StorageError(f"cannot write {output}: {error.strerror or error}") from None
    return {"samples": len(samples), "path": output, "notes": questions.notes + left_out(report, unreadable)}
