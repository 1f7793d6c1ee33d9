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

The array is read a record at a time, so a file of any number of records needs the memory of one
record; a record is at most :data:`MAX_RECORD_BYTES` of JSON, nests at most :data:`MAX_DEPTH`
levels, and has at most :data:`MAX_AGENTS` agents and :data:`MAX_TURNS` turns (its debate costs the
board and the viewer agents x turns). A file is read as Python's ``json`` writer writes it (MALLM's
writer): ``NaN`` and ``Infinity`` are read, as is a UTF-8 byte order mark. ``.json.gz`` files are
read through ``gzip``. Anything else, or a record past a bound, is one line naming the file and the
record, and nothing is imported.
"""

from __future__ import annotations

import codecs
import gzip
import json
import re
import zlib
from pathlib import Path
from typing import Any, BinaryIO, Iterator

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
#: Characters of JSON one record may hold: the shared corpus's records hold 60 KB (148 KB at most),
#: and about 2 MB with the prompts MALLM keeps in each message's ``additional_args``. A record is
#: held whole while it is read, so this bounds an import's memory (a few times this).
MAX_RECORD_BYTES = 64 << 20
#: Agents a debate may have, and turns it may last: MALLM's runs use 3 to 5 agents and 7 turns by
#: default. The board's dynamics and the viewer hold each agent's answer in every turn.
MAX_AGENTS = 100
MAX_TURNS = 100
#: Bytes read at a time (and the first size of the buffer a record is read from).
CHUNK = 1 << 20
#: A turn number as MALLM writes ``votesEachTurn``'s keys: ASCII digits.
TURN_KEY = re.compile(r"[0-9]{1,6}")
#: JSON's white space.
SPACE = re.compile(r"[ \t\r\n]*")
#: MALLM's paradigms in which every agent of a turn speaks at once (one step per turn).
SIMULTANEOUS = ("collective_refinement",)
#: The endpoint name of imported agents: they were asked elsewhere, so madeval has no endpoint.
ENDPOINT = "mallm"
#: Errors of a ``.gz`` that is cut short or not gzip, or of a file that is not UTF-8.
BROKEN = (EOFError, gzip.BadGzipFile, zlib.error, UnicodeDecodeError)


class NotJson(Exception):
    """The file is not complete JSON here (the detail says what and where)."""


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
            number_given = isinstance(clock, (int, float)) and not isinstance(clock, bool)
            wall = float(clock) if number_given and 0 <= clock < 1e12 else None  # not NaN, not Infinity
            yield ImportedDebate(item, transcript, repeat, wall)


def records_of(path: Path) -> Iterator[Any]:
    """The records of a MALLM output file, one at a time: the elements of its top-level JSON array
    (or the one record of a file holding a single object, as MALLM's extracted objects do).

    Anything else, a file cut short, or a record past :data:`MAX_RECORD_BYTES` or :data:`MAX_DEPTH`
    is a one-line UsageError naming the file (raised when the reader gets there: the writer then
    keeps nothing of the import)."""
    try:
        with open_binary(path) as handle:
            yield from _values(_JsonText(handle), path.name)
    except (NotJson, *BROKEN) as error:
        detail = " ".join(str(error).split())[:120]
        raise UsageError(f"{path.name} is not complete JSON (cut short or damaged: {detail}); "
                         "nothing imported") from None
    except OSError as error:
        raise UsageError(f"cannot read {path}: {error.strerror or error}") from None


def _values(text: _JsonText, name: str) -> Iterator[Any]:
    """The elements of the top-level array, or the top-level object, one at a time."""
    first = text.next_character()
    if first not in ("[", "{"):
        raise UsageError(f"{name} is not MALLM output: not a JSON array of records")
    if first == "{":
        yield text.value(name, 1)
    else:
        text.at += 1
        number = 0
        while text.next_character() != "]":
            if number:
                if text.next_character() != ",":
                    raise NotJson(f"expected ',' or ']' after record {number}")
                text.at += 1
                text.next_character()  # the next record's first character (read as far as needed)
            number += 1
            yield text.value(name, number)
        text.at += 1
    if text.next_character() != "":
        raise NotJson("more after the end of the JSON value")


class _JsonText:
    """A JSON file's text, read a chunk at a time, from which values are read one after another.

    Python's own reader (``json.JSONDecoder.raw_decode``) reads each value from the text in memory;
    a value that runs past it is read again once the text holds twice as much, so a record costs
    about twice its size to read, and no more than :data:`MAX_RECORD_BYTES` is ever held. (ijson,
    which streamed before, rejects the ``NaN`` and ``Infinity`` that Python's writer writes, and
    took time quadratic in the length of a string.)"""

    def __init__(self, handle: BinaryIO):
        self.handle = handle
        self.utf8 = codecs.getincrementaldecoder("utf-8-sig")()  # a byte order mark is dropped
        self.text = ""
        self.at = 0
        self.ended = False
        self.decoder = json.JSONDecoder()

    def more(self, size: int) -> None:
        """Read ``size`` more bytes (to the end of the file at most) after what is left unread."""
        block = self.handle.read(size)
        self.text = self.text[self.at:] + self.utf8.decode(block, final=not block)
        self.at = 0
        self.ended = not block

    def next_character(self) -> str:
        """The next character that is not white space (read as far as needed; ``""`` at the end)."""
        while True:
            self.at = SPACE.match(self.text, self.at).end()  # a run of white space at C speed
            if self.at < len(self.text) or self.ended:
                return self.text[self.at: self.at + 1]
            self.more(CHUNK)

    def value(self, name: str, number: int) -> Any:
        """The JSON value starting at the next character (record ``number`` of the file ``name``)."""
        while True:
            try:
                value, end = self.decoder.raw_decode(self.text, self.at)
            except RecursionError:
                raise _too_deep(name) from None
            except json.JSONDecodeError as error:
                held = len(self.text) - self.at
                if self.ended or not _may_continue(error, len(self.text)):
                    raise NotJson(f"{error.msg} in record {number}") from None
                if held > MAX_RECORD_BYTES:
                    raise UsageError(f"{name}: record {number} is larger than {MAX_RECORD_BYTES >> 20} MB of "
                                     "JSON: not MALLM output madeval reads; nothing imported") from None
                # twice what is held (each record is read again at most log times), never past the bound
                self.more(min(max(CHUNK, held), MAX_RECORD_BYTES + 1 - held))
                continue
            except ValueError:  # an integer of more digits than Python reads (4,300)
                raise NotJson(f"a number of more than 4,300 digits in record {number}") from None
            if end - self.at > MAX_RECORD_BYTES:
                raise UsageError(f"{name}: record {number} is larger than {MAX_RECORD_BYTES >> 20} MB of JSON: "
                                 "not MALLM output madeval reads; nothing imported")
            start, self.at = self.at, end
            # a value nests no deeper than the brackets its text opens: most records need no walk
            if self.text.count("[", start, end) + self.text.count("{", start, end) > MAX_DEPTH:
                _check_depth(value, name)
            return value


def _may_continue(error: json.JSONDecodeError, length: int) -> bool:
    """Whether the text may be valid once more of it is read: a string not closed yet, or a problem
    at the end of the text read so far (a literal such as ``-Infinity`` cut in two)."""
    return error.msg.startswith("Unterminated string") or error.pos >= length - 16


def _check_depth(value: Any, name: str) -> None:
    """Refuse a value nested deeper than :data:`MAX_DEPTH` (walked without recursion)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _too_deep(name)
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))


def _too_deep(name: str) -> UsageError:
    return UsageError(f"{name}: JSON nested more than {MAX_DEPTH} levels deep: not MALLM output")


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
        if not isinstance(entry["turn"], int) or isinstance(entry["turn"], bool) or not 1 <= entry["turn"] <= MAX_TURNS:
            raise UsageError(f"{name}: record {number}: globalMemory entry {position} has turn "
                             f"{short(_shown_number(entry['turn']))}, not a turn number from 1 to {MAX_TURNS}")
    votes = record.get("votesEachTurn")
    if votes is not None and not isinstance(votes, dict):
        raise UsageError(f"{name}: record {number}: votesEachTurn is not an object of turns")
    for key in votes or {}:
        if not TURN_KEY.fullmatch(key) or not 1 <= int(key) <= MAX_TURNS:
            raise UsageError(f"{name}: record {number}: votesEachTurn has key {short(key)}, not a turn number "
                             f"from 1 to {MAX_TURNS}")
    personas = record.get("personas")
    if isinstance(personas, list) and len(personas) > MAX_AGENTS:
        raise _too_many_agents(name, number, len(personas))


def _too_many_agents(name: str, number: int, count: int) -> UsageError:
    return UsageError(f"{name}: record {number} has {count} agents, more than the {MAX_AGENTS} madeval reads "
                      "of a debate; nothing imported")


def _shown_number(value: Any) -> Any:
    """An integer as it is when it is short, else how many digits it has (it would not fit a line)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**12:
        return f"a number of {len(str(abs(value)))} digits"  # at most 4,300: the JSON reader reads no more
    return value


def _first_input(record: dict[str, Any]) -> str:
    inputs = record.get("input")
    if isinstance(inputs, list) and inputs:
        return _text(inputs[0])
    return _text(inputs)


def transcript_of(record: dict[str, Any], read, number: int, name: str) -> Transcript:
    """The madeval transcript of one MALLM record (see the module's docstring for the mapping);
    ``read`` reads a solution text with the task's extractor chain (:func:`.base.read_answer`: the
    answer and, when there is none, the parse note saying why, as a live debate records it). A debate
    of more than :data:`MAX_AGENTS` agents is a one-line UsageError."""
    agents, index_of = _agents(record)
    memory = record["globalMemory"] or []
    for entry in memory:
        key = _text(entry["agent_id"])
        if key not in index_of:  # an agent with no persona entry
            if len(agents) >= MAX_AGENTS:
                raise _too_many_agents(name, number, len({_text(e["agent_id"]) for e in memory} | set(index_of)))
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
    # the turns its messages show: MALLM's own ``turns`` is the same in its runs, and a larger one
    # would cost every later board and view agents x turns for turns in which nobody spoke
    transcript.turns_used = max((m.turn for m in transcript.messages), default=0)
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
                 "references": [r for r in _list(record.get("references")) if isinstance(r, str)][:26]},
    )
    return transcript


def _agents(record: dict[str, Any]) -> tuple[list[Agent], dict[str, int]]:
    agents: list[Agent] = []
    index_of: dict[str, int] = {}
    for entry in _list(record.get("personas")):
        if not isinstance(entry, dict) or _text(entry.get("agentId")) in index_of:
            continue
        index_of[_text(entry.get("agentId"))] = len(agents)
        persona = Persona(_text(entry.get("persona")) or f"Agent {len(agents) + 1}",
                          _text(entry.get("personaDescription")), "mallm")
        agents.append(Agent(len(agents), persona, _text(entry.get("model")) or "?", ENDPOINT))
    return agents, index_of


def _list(value: Any) -> list[Any]:
    """A field that should be a list: itself when it is one, else empty (a number, an object)."""
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    """A field that should be an object: itself when it is one, else empty (a list, a number)."""
    return value if isinstance(value, dict) else {}


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
    turns = {int(key): key for key in votes if isinstance(key, str) and TURN_KEY.fullmatch(key)}  # see check_record
    for turn in sorted(turns):
        turn_votes = votes[turns[turn]]
        if not isinstance(turn_votes, dict):
            continue
        answers = [a if isinstance(a, str) else "" for a in _list(turn_votes.get("answers"))]
        alterations = _dict(turn_votes.get("alterations"))
        chosen = _dict(alterations.get("public")) or next((v for v in alterations.values() if isinstance(v, dict)), {})
        cast = _list(chosen.get("votes"))
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
            "kind": "vote", "decider": _text(turn_votes.get("type")) or "mallm", "turn": turn,
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
