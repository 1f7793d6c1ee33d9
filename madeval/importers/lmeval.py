"""lm-evaluation-harness ``--log_samples`` files as single-agent runs (``madeval import lm-eval``).

lm-eval (v0.4.3 and later) writes ``<output>/<model>/samples_<task>_<date>.jsonl``: one line per
document and filter with ``doc_id``, ``doc``, ``target``, ``resps`` (the model's replies),
``filtered_resps``, ``filter``, the per-sample metric values under their own names and ``doc_hash``
(format: ``shared/research/real-debates-formats-analyses.md`` section 2). A file is one
configuration of one agent; the lines of one filter (``--filter NAME``, needed when the file holds
several) are its debates of one message each, so the run pairs item by item with madeval's runs of
the same task:

* ``lm_eval:TASK`` (the madeval-lmeval plugin): item ``lm_eval:TASK-<doc_id>``, checked against
  ``doc_hash``; a doc whose hash differs is looked up by its hash instead (another dataset
  revision puts rows elsewhere), and counted in a note.
* madeval's own task: the item whose dataset row has the line's ``doc_hash`` (a content match,
  whatever the item ids).

The reply (``resps[0][0]``; for a log-likelihood multiple-choice task, the letter of the choice
with the highest log-likelihood) is the agent's message and the decision; madeval scores it with
the task's own extractor and metrics (for ``lm_eval:`` tasks those are lm-eval's own filters and
``process_results``, so the scores are lm-eval's). lm-eval's stored per-sample metrics, the filter
and its ``filtered_resps`` are kept in the decision's details; where madeval's score of an
``lm_eval:`` task differs from the stored one, a note says how often.
"""

from __future__ import annotations

import json
import math
import zlib
from pathlib import Path
from typing import Any, Iterator

from madeval.core.transcript import Agent, Decision, Message, Persona, Transcript
from madeval.errors import UsageError
from madeval.importers.base import FileReport, ImportedDebate, ImportedFile, Importer, read_answer, short
from madeval.importers.files import file_label, open_binary, sha256_of
from madeval.importers.matching import ItemIndex, doc_hash
from madeval.task.definition import LETTERS, Task

#: Keys of every ``--log_samples`` line.
REQUIRED_KEYS = ("doc_id", "doc", "resps", "filter")
#: A line longer than this is refused (lm-eval's lines are a prompt and a reply or two).
MAX_LINE_BYTES = 64 << 20
#: The endpoint name of the imported agent: lm-eval asked the model, madeval has no endpoint.
ENDPOINT = "lm-eval"
#: The prefix of the madeval-lmeval plugin's tasks.
LM_EVAL_PREFIX = "lm_eval:"


class LmEvalSamplesImporter(Importer):
    """lm-eval --log_samples output (samples_TASK_DATE.jsonl): one file, one single-agent configuration."""

    def __init__(self, filter: str = ""):  # noqa: A002 - lm-eval's own word for it
        self.filter = filter

    def read(self, path: Path, task: Task, label: str | None) -> ImportedFile:
        """The configuration of ``path`` (label: the model folder and the file name) and its
        debates, one line at a time."""
        name = label or default_label(path)
        model = _model_name(path)
        options = {"name": name, "persona": "none", "responder": "simple", "paradigm": "memory",
                   "decider": "lm_eval", "agents": 1, "max_turns": 1}
        description = {"format": "lm-eval", "file": path.name, "sha256": sha256_of(path), "model": model,
                       "filter": self.filter or None, "records": 0}
        report = FileReport()
        return ImportedFile(name, options, description,
                            self._debates(path, task, model, description, report), report)

    def _debates(self, path: Path, task: Task, model: str, description: dict[str, Any],
                 report: FileReport) -> Iterator[ImportedDebate]:
        index = ItemIndex(task)
        wanted = self.filter
        filters: list[str] = []
        counts = {"hash_moved": 0, "hash_differs": 0, "score_differs": 0, "scored": 0, "repeats": 0}
        for number, line in _lines(path):
            check_line(line, number, path.name)
            if line["filter"] not in filters:
                filters.append(line["filter"])
            if not wanted:
                wanted = filters[0]
            if len(filters) > 1 and not self.filter:
                raise UsageError(f"{path.name} holds samples of several filters ({', '.join(filters)}): "
                                 "choose one with --filter")
            if line["filter"] != wanted:
                continue
            description["filter"] = wanted
            key = json.dumps(line["doc_id"])
            if not report.first_of(key, f"doc_id {key}, line {number}"):
                continue
            description["records"] += 1
            item = _item_of(line, task, index, counts)
            if item is None:
                report.unmatched += 1
                report.unmatched_example = report.unmatched_example or (
                    f"line {number}, doc_id {key}, doc {short(line['doc'])}")
                continue
            transcript = transcript_of(line, task, item, model)
            counts["repeats"] += _repeats(line["resps"]) > 1
            if task.name.startswith(LM_EVAL_PREFIX):
                counts["scored"] += 1
                counts["score_differs"] += _score_differs(line, task, item, transcript, wanted)
            yield ImportedDebate(item, transcript, 0, None)
        if self.filter and self.filter not in filters:
            raise UsageError(f"{path.name} has no sample of filter '{self.filter}' "
                             f"(filters: {', '.join(filters) or 'none'})")
        _notes(report, counts)


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """The JSON lines of ``path`` (gzip or not), numbered from 1; blank lines are skipped. A line
    that is not a JSON object, or is too long, is a one-line UsageError."""
    try:
        with open_binary(path) as handle:
            number = 0
            while True:
                raw = handle.readline(MAX_LINE_BYTES + 1)
                if not raw:
                    return
                number += 1
                if len(raw) > MAX_LINE_BYTES:
                    raise UsageError(f"{path.name}: line {number} is longer than {MAX_LINE_BYTES >> 20} MB; "
                                     "not lm-eval samples")
                if not raw.strip():
                    continue
                try:
                    line = json.loads(raw)
                except (ValueError, RecursionError):
                    raise UsageError(f"{path.name}: line {number} is not JSON (cut short or not lm-eval "
                                     "--log_samples output); nothing imported") from None
                if not isinstance(line, dict):
                    raise UsageError(f"{path.name}: line {number} is not a JSON object: not lm-eval samples")
                yield number, line
    except OSError as error:  # also a damaged .gz (gzip.BadGzipFile is an OSError)
        raise UsageError(f"cannot read {path.name}: {error.strerror or error}; nothing imported") from None
    except (EOFError, zlib.error):  # a .gz cut short or damaged
        raise UsageError(f"{path.name} is cut short or damaged; nothing imported") from None


def check_line(line: dict[str, Any], number: int, name: str) -> None:
    """Refuse, in one line, a line that is not an lm-eval ``--log_samples`` sample."""
    missing = [key for key in REQUIRED_KEYS if key not in line]
    if missing:
        raise UsageError(f"{name}: line {number} has no {', '.join(repr(k) for k in missing)}: not lm-eval "
                         "--log_samples output (v0.4.3 or later)")
    if not isinstance(line["doc_id"], int) or isinstance(line["doc_id"], bool) or line["doc_id"] < 0:
        raise UsageError(f"{name}: line {number}: doc_id {short(line['doc_id'])} is not a document number")
    if not isinstance(line["resps"], list):
        raise UsageError(f"{name}: line {number}: resps is not a list")
    if not isinstance(line["filter"], str):  # lm-eval names its filters ("none", "strict-match")
        raise UsageError(f"{name}: line {number}: filter {short(line['filter'])} is not a filter's name")


def _item_of(line: dict[str, Any], task: Task, index: ItemIndex, counts: dict[str, int]):
    """The task item of a sample line (see the module's docstring), or None."""
    digest = doc_hash(line["doc"])
    stored = line.get("doc_hash")
    if isinstance(stored, str) and stored != digest:
        counts["hash_differs"] += 1  # lm-eval hashed another form of the doc: trust the doc_id alone
        digest = ""
    if task.name.startswith(LM_EVAL_PREFIX):
        item = index.get(f"{task.name}-{line['doc_id']}")
        if item is not None and (not digest or doc_hash(item.doc) == digest):
            return item
        moved = index.by_doc_hash(digest) if digest else None
        counts["hash_moved"] += moved is not None
        return moved
    return index.by_doc_hash(digest) if digest else None


def _repeats(resps: list[Any]) -> int:
    first = resps[0] if resps else None
    return len(first) if isinstance(first, list) else 1


def reply_of(resps: list[Any]) -> str | None:
    """The model's reply in ``resps``: the first generation of the first request, or for a
    multiple-choice task (one ``[log-likelihood, is_greedy]`` per choice) the letter of the choice
    with the highest log-likelihood (the first of equal ones, as lm-eval's ``acc``)."""
    if not resps:
        return None
    first = resps[0]
    reply = first[0] if isinstance(first, list) and first else first
    if isinstance(reply, str):
        return reply
    scores = []
    for response in resps:
        value = response[0] if isinstance(response, list) and response else response
        value = value[0] if isinstance(value, list) and value else value
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            return None
        scores.append(float(value))
    if not scores or len(scores) > len(LETTERS):
        return None
    return LETTERS[scores.index(max(scores))]


def transcript_of(line: dict[str, Any], task: Task, item, model: str) -> Transcript:
    """One agent, one message (the reply) and the decision (the same reply) of a sample line."""
    reply = reply_of(line["resps"])
    answer, notes = read_answer(task, reply, item)
    message = Message(id=0, turn=1, step=0, agent=0, stage="draft", text=reply or "", solution=reply,
                      answer=answer, agreement=None, backs=0 if reply is not None else None,
                      parse_notes=notes)
    metrics = line.get("metrics") if isinstance(line.get("metrics"), list) else []
    details = {
        "doc_id": line["doc_id"], "doc_hash": line.get("doc_hash"), "filter": line["filter"],
        "filtered_resps": line.get("filtered_resps"),
        "lm_eval_metrics": {str(m): line[m] for m in metrics if isinstance(m, str) and m in line},
    }
    return Transcript(
        agents=[Agent(0, Persona("lm-eval", generator="lm-eval"), model, ENDPOINT)],
        messages=[message],
        decision=Decision(reply, reply is not None, 1, "lm_eval", "imported", details),
        turns_used=1,
    )


def _score_differs(line: dict[str, Any], task: Task, item, transcript: Transcript, wanted: str) -> bool:
    """True when madeval's score of an ``lm_eval:`` item differs from lm-eval's stored one."""
    metrics = transcript.decision.details["lm_eval_metrics"]
    scores = task.score(transcript.messages[0].answer, item)  # the reply, read once
    for metric, stored in metrics.items():
        ours = scores.get(f"{metric},{wanted}")
        if isinstance(stored, (int, float)) and ours is not None and not math.isclose(float(stored), ours):
            return True
    return False


def _notes(report: FileReport, counts: dict[str, int]) -> None:
    if counts["hash_differs"]:
        report.notes.append(f"{counts['hash_differs']} doc_hash values are not the hash of their doc; "
                            "those lines were matched by doc_id alone")
    if counts["hash_moved"]:
        report.notes.append(f"{counts['hash_moved']} docs sit at another position in the task's data "
                            "(another dataset revision?); matched by their doc_hash")
    if counts["score_differs"]:
        report.notes.append(f"madeval's score differs from lm-eval's stored one on {counts['score_differs']} "
                            f"of {counts['scored']} samples")
    if counts["repeats"]:
        report.notes.append(f"{counts['repeats']} samples hold several replies (repeats); the first is imported")


def default_label(path: Path) -> str:
    """``<model folder>/<task>@<date to the second>`` for lm-eval's ``<model>/samples_<task>_<date>.jsonl``
    (``sim-acc80/gsm8k@2026-11-27T05-05-09``); another file name: the folder and the name."""
    stem = file_label(path)
    folder = path.resolve().parent.name
    if stem.startswith("samples_") and stem.count("_") >= 2:
        task, _, date = stem[len("samples_"):].rpartition("_")
        return f"{folder}/{task}@{date.split('.')[0]}"
    return f"{folder}/{stem}"


def _model_name(path: Path) -> str:
    """The model of a samples file, from lm-eval's ``results_<date>.json`` beside it (its
    ``model_name``, else the ``model=`` of ``model_args``), else the folder's name."""
    date = path.name.rsplit("_", 1)[-1].removesuffix(".gz").removesuffix(".jsonl")
    results = path.parent / f"results_{date}.json"
    try:
        if results.is_file() and results.stat().st_size < (64 << 20):
            data = json.loads(results.read_text(encoding="utf-8"))
            name = data.get("model_name") or ""
            if not name:
                args = (data.get("config") or {}).get("model_args") or ""
                if isinstance(args, dict):  # lm-eval 0.4.10 and later store them parsed
                    name = str(args.get("model") or "")
                else:
                    name = next((p.split("=", 1)[1] for p in str(args).split(",") if p.startswith("model=")), "")
            if isinstance(name, str) and name:
                return name
    except (OSError, ValueError, AttributeError):
        pass
    return path.resolve().parent.name
