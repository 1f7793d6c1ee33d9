"""MALLM output files as madeval debates (``madeval import mallm FILE... --task TASK``).

MALLM's ``Scheduler.run_discussion`` (``mallm/scheduler.py``) writes one JSON array per run, one
record per debated item (format: ``shared/research/real-debates-formats-analyses.md`` 1.2). A file
is one configuration. Each record becomes one debate:

* **item**: ``datasetId`` as the task's item id (MMLU-Pro's ``question_id`` is ``mmlu_pro``'s id),
  else the question in ``input[0]`` (:class:`madeval.importers.matching.ItemIndex`); a record that
  matches no item is counted and reported, not imported. A second record with the same
  ``exampleId`` is a duplicate (skipped, counted); a second record of the same item with another
  ``exampleId`` is the item's next repeat.
* **agents**: ``personas`` in order (persona name and description, the agent's model), plus any
  agent that speaks without a persona entry.
* **messages**: every ``globalMemory`` entry in order, with its turn, agent, MALLM's contribution
  as the stage, the message text, MALLM's ``agreement`` flag and ``solution``; the answer is the
  task's extractor applied to the solution (the same path a live debate takes). A message that
  agrees backs the current draft (the latest message that did not agree) and a message that does
  not agree proposes a draft of its own, as in a live madeval debate, so consensus deciders
  replay on the stored agreement flags. Steps: one message each, or one per turn for MALLM's
  simultaneous ``collective_refinement``.
* **votes**: every turn of ``votesEachTurn`` as a ``vote`` event in the form madeval's voting
  deciders write (solutions numbered from 1, one ballot per agent, the winner when MALLM's vote
  agreed), with MALLM's own fields under ``imported``.
* **decision**: ``finalAnswer`` (``null`` is no answer, scored as wrong, like a refusal) with
  ``decisionSuccess``; decider ``mallm``, reason ``final_answer``.

The array is read as a stream (``ijson``), so a file of any number of records needs the memory of
one record at a time. ``.json.gz`` files are read through ``gzip``.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path
from typing import Any, BinaryIO, Iterator

import ijson

from madeval.core.transcript import Agent, Decision, Message, Persona, Transcript
from madeval.errors import UsageError
from madeval.importers.base import FileReport, ImportedDebate, ImportedFile, Importer, read_answer, short
from madeval.importers.files import file_label, open_binary, sha256_of
from madeval.importers.matching import ItemIndex
from madeval.task.definition import Task

#: Keys every MALLM discussion record has (v1.0 and later); others are read when present.
REQUIRED_KEYS = ("exampleId", "input", "finalAnswer", "globalMemory")
#: Keys every ``globalMemory`` entry has.
MESSAGE_KEYS = ("turn", "agent_id", "message", "agreement", "solution")
#: How deep a record may nest (MALLM's records nest about 6 levels).
MAX_DEPTH = 64
#: MALLM's paradigms in which every agent of a turn speaks at once (one step per turn).
SIMULTANEOUS = ("collective_refinement",)
#: The endpoint name of imported agents: they were asked elsewhere, so madeval has no endpoint.
ENDPOINT = "mallm"
#: Errors of a file that is not (complete) JSON, or a ``.gz`` that is cut short or not gzip.
BROKEN = (ijson.JSONError, ijson.IncompleteJSONError, EOFError, gzip.BadGzipFile, zlib.error, UnicodeDecodeError)


class MallmImporter(Importer):
    """MALLM output (Scheduler.run_discussion's JSON array, .json or .json.gz): one file, one configuration."""

    def read(self, path: Path, task: Task, label: str | None) -> ImportedFile:
        """The configuration of ``path`` (label: the file name without ``.json``/``.json.gz``)
        and its debates, read as a stream."""
        name = label or file_label(path)
        digest = sha256_of(path)  # also: an unreadable file fails here, before anything is read
        options: dict[str, Any] = {"name": name, "persona": "none", "responder": "simple", "paradigm": "memory",
                                   "decider": "mallm", "agents": 1, "max_turns": 1}
        description: dict[str, Any] = {"format": "mallm", "file": path.name, "sha256": digest, "records": 0}
        report = FileReport()
        return ImportedFile(name, options, description, self._debates(path, task, options, description, report),
                            report)

    def _debates(self, path: Path, task: Task, options: dict[str, Any], description: dict[str, Any],
                 report: FileReport) -> Iterator[ImportedDebate]:
        index = ItemIndex(task)
        repeats: dict[str, int] = {}
        for number, record in enumerate(records_of(path), 1):
            check_record(record, number, path.name)
            example = _text(record["exampleId"])
            if not report.first_of(example, f"exampleId {short(example)}, record {number}"):
                continue
            description["records"] += 1
            dataset_id = _text(record.get("datasetId"))
            item = index.get(dataset_id or None) or index.by_text(_first_input(record))
            if item is None:
                report.unmatched += 1
                report.unmatched_example = report.unmatched_example or (
                    f"record {number}, datasetId {short(dataset_id)}, input {short(_first_input(record))}")
                continue
            repeat = repeats.get(item.id, 0)
            repeats[item.id] = repeat + 1
            transcript = transcript_of(record, lambda text, item=item: read_answer(task, text, item), number, path.name)
            _describe(record, transcript, options, description)
            clock = record.get("clockSeconds")
            wall = float(clock) if isinstance(clock, (int, float)) and not isinstance(clock, bool) else None
            yield ImportedDebate(item, transcript, repeat, wall)


def records_of(path: Path) -> Iterator[Any]:
    """The records of a MALLM output file, one at a time: the elements of its top-level JSON array
    (or the one record of a file holding a single object, as MALLM's extracted objects do).

    Anything else, or a file cut short, is a one-line UsageError naming the file (raised when the
    reader gets there: the writer then keeps nothing of the import)."""
    try:
        with open_binary(path) as handle:
            first = _first_byte(handle)
            handle.seek(0)
            if first not in (b"[", b"{"):
                raise UsageError(f"{path.name} is not MALLM output: not a JSON array of records")
            yield from _values(handle, path.name, in_array=first == b"[")
    except BROKEN as error:
        detail = " ".join(str(error).split())[:120]
        raise UsageError(f"{path.name} is not complete JSON (cut short or damaged: {detail}); "
                         "nothing imported") from None
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None


def _values(handle: BinaryIO, name: str, *, in_array: bool) -> Iterator[Any]:
    """The elements of the top-level array (``in_array``), or the top-level value, built one at a
    time from ijson's events, nested at most :data:`MAX_DEPTH` deep.

    ijson's ``items`` would compute a prefix string for every level (memory quadratic in the
    depth: a 200 KB file of nested brackets takes gigabytes), so the values are built from
    ``basic_parse`` with ijson's own ``ObjectBuilder`` and a depth check."""
    base = 1 if in_array else 0
    depth = 0
    builder = None
    for event, value in ijson.basic_parse(handle, use_float=True):
        if event in ("start_map", "start_array"):
            depth += 1
            if depth > MAX_DEPTH:
                raise UsageError(f"{name}: JSON nested more than {MAX_DEPTH} levels deep: not MALLM output")
            if depth == base:
                continue  # the top-level array itself
        elif event in ("end_map", "end_array"):
            depth -= 1
            if depth < base:
                continue  # the end of the top-level array
        if builder is None:
            builder = ijson.ObjectBuilder()
        builder.event(event, value)
        if depth == base:
            yield builder.value
            builder = None


def _first_byte(handle: BinaryIO) -> bytes:
    """The first byte that is not white space (or a UTF-8 byte order mark); ``b""`` for an empty file."""
    while True:
        block = handle.read(4096)
        if not block:
            return b""
        stripped = block.lstrip(b" \t\r\n\xef\xbb\xbf")
        if stripped:
            return stripped[:1]


def check_record(record: Any, number: int, name: str) -> None:
    """Refuse, in one line, a record that is not a MALLM discussion record of the known versions."""
    if not isinstance(record, dict):
        raise UsageError(f"{name}: record {number} is not a JSON object: not MALLM output")
    missing = [key for key in REQUIRED_KEYS if key not in record]
    if missing:
        raise UsageError(f"{name}: record {number} has no {', '.join(repr(k) for k in missing)}: not a discussion "
                         "record of MALLM's Scheduler.run_discussion (v1.0 or later)")
    memory = record["globalMemory"]
    if memory is not None and not isinstance(memory, list):
        raise UsageError(f"{name}: record {number}: globalMemory is not a list of messages")
    for position, entry in enumerate(memory or []):
        if not isinstance(entry, dict) or any(key not in entry for key in MESSAGE_KEYS):
            keys = ", ".join(MESSAGE_KEYS)
            raise UsageError(f"{name}: record {number}: globalMemory entry {position} lacks one of {keys}: "
                             "not a message of MALLM v1.0 or later")
        if not isinstance(entry["turn"], int) or isinstance(entry["turn"], bool) or entry["turn"] < 1:
            raise UsageError(f"{name}: record {number}: globalMemory entry {position} has turn "
                             f"{short(entry['turn'])}, not a turn number")


def _first_input(record: dict[str, Any]) -> str:
    inputs = record.get("input")
    if isinstance(inputs, list) and inputs:
        return _text(inputs[0])
    return _text(inputs)


def transcript_of(record: dict[str, Any], read, number: int, name: str) -> Transcript:
    """The madeval transcript of one MALLM record (see the module's docstring for the mapping);
    ``read`` reads a solution text with the task's extractor chain (:func:`.base.read_answer`: the
    answer and, when there is none, the parse note saying why, as a live debate records it)."""
    agents, index_of = _agents(record)
    memory = record["globalMemory"] or []
    for entry in memory:
        key = _text(entry["agent_id"])
        if key not in index_of:  # an agent with no persona entry
            index_of[key] = len(agents)
            agents.append(Agent(len(agents), Persona(_text(entry.get("persona")) or f"Agent {len(agents) + 1}",
                                                     generator="mallm"), "?", ENDPOINT))
    simultaneous = record.get("paradigm") in SIMULTANEOUS
    transcript = Transcript(agents=agents)
    steps: dict[int, int] = {}
    draft: Message | None = None
    for entry in memory:
        turn = entry["turn"]
        step = 0 if simultaneous else steps.get(turn, 0)
        steps[turn] = step + 1
        solution = entry["solution"] if isinstance(entry["solution"], str) else None
        agreement = entry["agreement"] if isinstance(entry["agreement"], bool) else None
        message_id = len(transcript.messages)
        backs = draft.id if agreement is True and draft is not None else message_id
        if solution is None and agreement is not True:
            backs = None  # no solution and no agreement: a message that proposes nothing
        answer, notes = read(solution) if solution else (None, ())
        message = Message(
            id=message_id, turn=turn, step=step, agent=index_of[_text(entry["agent_id"])],
            stage=_text(entry.get("contribution")) or "improve", text=_text(entry["message"]),
            solution=solution, answer=answer, agreement=agreement, backs=backs,
            parse_notes=notes,
        )
        transcript.messages.append(message)
        if backs == message_id:
            draft = message
    turns = record.get("turns")
    last = max((m.turn for m in transcript.messages), default=0)
    transcript.turns_used = turns if isinstance(turns, int) and not isinstance(turns, bool) and turns >= last else last
    transcript.events = vote_events(record.get("votesEachTurn"), len(agents))
    final = record["finalAnswer"] if isinstance(record["finalAnswer"], str) else None
    success = record.get("decisionSuccess")
    protocol = next((e["decider"] for e in transcript.events), None)
    transcript.decision = Decision(
        answer=final,
        success=bool(success) if isinstance(success, bool) else final is not None,
        turn=max(transcript.turns_used, 1),
        decider="mallm",
        reason="final_answer",
        details={"protocol": protocol, "exampleId": _text(record["exampleId"]),
                 "datasetId": _text(record.get("datasetId")) or None,
                 "references": [r for r in record.get("references") or [] if isinstance(r, str)][:26]},
    )
    return transcript


def _agents(record: dict[str, Any]) -> tuple[list[Agent], dict[str, int]]:
    agents: list[Agent] = []
    index_of: dict[str, int] = {}
    for entry in record.get("personas") or []:
        if not isinstance(entry, dict) or _text(entry.get("agentId")) in index_of:
            continue
        index_of[_text(entry.get("agentId"))] = len(agents)
        persona = Persona(_text(entry.get("persona")) or f"Agent {len(agents) + 1}",
                          _text(entry.get("personaDescription")), "mallm")
        agents.append(Agent(len(agents), persona, _text(entry.get("model")) or "?", ENDPOINT))
    return agents, index_of


def _text(value: Any) -> str:
    """A field as text: a string as it is, a number written out, anything else (null, a list, a
    nested object from a damaged or hostile file) the empty string, never its deep repr."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    return ""


def vote_events(votes: Any, agents: int) -> list[dict[str, Any]]:
    """MALLM's ``votesEachTurn`` as madeval ``vote`` events, one per turn in turn order.

    Solutions are MALLM's ``answers``, numbered from 1; agent ``i``'s ballot is ``votes[i] + 1``
    (MALLM numbers answers from 0), or an abstention when it is missing or not a valid number; the
    winner is ``most_voted + 1`` when MALLM's vote ``agreed``, else none. The alteration read is
    ``public`` (MALLM's unaltered vote), else the first; MALLM's own fields are kept under
    ``imported``.
    """
    if not isinstance(votes, dict):
        return []
    events = []
    for key in sorted(votes, key=lambda k: int(k) if str(k).isdigit() else 0):
        turn_votes = votes[key]
        if not isinstance(turn_votes, dict) or not str(key).isdigit():
            continue
        answers = [a if isinstance(a, str) else "" for a in turn_votes.get("answers") or []]
        alterations = turn_votes.get("alterations") or {}
        chosen = alterations.get("public") if isinstance(alterations.get("public"), dict) else next(
            (v for v in alterations.values() if isinstance(v, dict)), {}) if isinstance(alterations, dict) else {}
        cast = chosen.get("votes") if isinstance(chosen.get("votes"), list) else []
        ballots = []
        for agent in range(agents):
            vote = cast[agent] if agent < len(cast) else None
            valid = isinstance(vote, int) and not isinstance(vote, bool) and 0 <= vote < len(answers)
            ballots.append({"agent": agent, "replies": [], "ballot": vote + 1 if valid else None,
                            "abstained": not valid, "problems": [], "note": "imported from MALLM"})
        totals = {str(n): float(sum(b["ballot"] == n for b in ballots)) for n in range(1, len(answers) + 1)}
        most = chosen.get("most_voted")
        agreed = chosen.get("agreed") is True
        winner = most + 1 if agreed and isinstance(most, int) and 0 <= most < len(answers) else None
        events.append({
            "kind": "vote", "decider": _text(turn_votes.get("type")) or "mallm", "turn": int(key),
            "solutions": [{"number": n, "agents": [], "text": text} for n, text in enumerate(answers, 1)],
            "ballots": ballots, "totals": totals, "answer_totals": {}, "winner": winner,
            "tie": winner is None and any(totals.values()),
            "imported": {"final_answer": _text(chosen.get("final_answer")) or None, "agreed": agreed,
                         "most_voted": most if isinstance(most, int) else None,
                         "voting_process_string": _text(turn_votes.get("voting_process_string"))},
        })
    return events


def _describe(record: dict[str, Any], transcript: Transcript, options: dict[str, Any],
              description: dict[str, Any]) -> None:
    """Fold what one record says of the setup into the configuration's options and description."""
    voting = [a for a in transcript.agents]
    options["agents"] = max(options["agents"], len(voting))
    options["max_turns"] = max(options["max_turns"], transcript.turns_used)
    paradigm = record.get("paradigm")
    if isinstance(paradigm, str) and paradigm:
        options["paradigm"] = paradigm
        description["paradigm"] = paradigm
    if any(a.persona.description for a in transcript.agents):
        options["persona"] = "expert"  # MALLM's persona generators write a description only for experts/IPIP
    models = description.setdefault("models", [])
    for agent in transcript.agents:
        if agent.model not in models and len(models) < 20:
            models.append(agent.model)
    protocols = description.setdefault("vote_types", [])
    for event in transcript.events:
        if event["decider"] not in protocols and len(protocols) < 20:
            protocols.append(event["decider"])
    description.setdefault("instruction", _text(record.get("instruction")))
    description.setdefault("example_personas", [
        {"name": a.persona.name, "description": a.persona.description} for a in transcript.agents])
    description["turns_with_votes"] = max(description.get("turns_with_votes", 0), len(transcript.events))
