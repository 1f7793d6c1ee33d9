"""A task: its items, the prompt agents see, answer extraction and per-item scoring.

A :class:`Task` is built from one task YAML (see :mod:`madeval.task.files`); an unknown key fails
at once. Fields that build an item (``doc_to_id``, ``doc_to_text``, ``doc_to_context``,
``doc_to_choice``, ``doc_to_target``) accept a column name, a Jinja2 template
(``"{{ question }}"``), a ``!function``, or literal text. A string that is no column and no
template is literal text only if it cannot be a misspelt column: a single word (``questoin``) or a
string close to a column name fails with the closest column. An exception raised by a
``!function`` is reported as one line naming the task, the field and where it raised
(:class:`madeval.task.files.TaskCodeError`). ``doc_to_id: !content`` names each item by a hash
of its content (:func:`madeval.core.item.content_id`) for datasets without an id column, so ids survive
a re-ordered or re-mirrored copy; without ``doc_to_id`` an item is ``<task>-<row position>``.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import functools
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Collection, Iterable, Sequence

import jinja2

from madeval.core.components import TaskPrompt
from madeval.core.item import Item, content_id
from madeval.core.options import shown
from madeval.core.transcript import Transcript
from madeval.errors import UsageError
from madeval.metrics.base import DebateMetric, Metric
from madeval.metrics.view import DebateView
from madeval.task.files import (
    CONTENT,
    DATASET_KEYS,
    TASK_KEYS,
    FunctionRef,
    check_keys,
    closest,
    read_yaml,
    task_code,
    task_index,
)
from madeval.task.mirrors import MirrorNotPlain, mirror_rows
from madeval.task.sources import hub_reachable, keep_matching, load_docs_with_source, mirror_file

if TYPE_CHECKING:
    from madeval.core.plugins import Registries
    from madeval.settings.config import RunSettings

ANSWER_TYPES = ("choice", "yes_no", "number", "math", "text")


class NoAnswer:
    """An extractor's verdict that a reply commits to no answer, and why ("names several options
    (A, E)", "letter K is not an option (A-J)"): the chain stops, and the reason becomes the
    record's parse note. It is false, so ``answer or default`` treats it as no answer."""

    __slots__ = ("reason",)

    def __init__(self, reason: str):
        self.reason = reason

    def __repr__(self) -> str:
        return f"NoAnswer({self.reason!r})"

    def __bool__(self) -> bool:
        return False


@dataclasses.dataclass(frozen=True)
class Reading:
    """What the extractor chain read in a reply: the answer, or ``None`` and the reason (``note``)."""

    answer: str | None
    note: str | None = None


# An extractor returns AMBIGUOUS when the reply names several answers ("Final Solution: A or C"):
# the chain stops and the reply has no answer, rather than a later extractor guessing one.
AMBIGUOUS = NoAnswer("names several answers")
NOTHING_FOUND = "no answer found"
EMPTY_REPLY = "empty reply"
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_JINJA = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=False)
_ONE_WORD = re.compile(r"^[^\W\d]\w*$")  # a word that could name a column (not a number)


class Task:
    """A loaded task definition; items are read on first use and kept."""

    #: A remark the leaderboard's statement carries for this task (a task provider's, e.g. an lm-eval
    #: multiple-choice task run as generation); None for madeval's own tasks.
    note: str | None = None

    def __init__(self, spec: dict[str, Any], path: Path, extractors, metrics):
        self.spec = spec
        self.path = Path(path)
        self.name = str(spec["task"])
        check_keys(spec, TASK_KEYS, f"task {self.name}", self.path)
        dataset = spec.get("dataset") or {}
        if not isinstance(dataset, dict):
            raise UsageError(f"task {self.name}: dataset must be a mapping ({self.path})")
        check_keys(dataset, DATASET_KEYS, f"task {self.name}: dataset", self.path)
        self.instruction = str(spec.get("instruction", "")).strip()
        self.answer_type = spec.get("answer_type", "text")
        if self.answer_type not in ANSWER_TYPES:
            raise UsageError(
                f"task {self.name}: answer_type must be one of {', '.join(ANSWER_TYPES)} ({self.path})"
            )
        self.choice_format = spec.get("choice_format", "{letter}) {choice}")
        self.source = ""  # where the items came from, known once they are loaded
        self._chain = [
            extractors.create(*_name_and_options(entry, "name"))
            for entry in spec.get("answer_extraction") or []
        ]
        self.metrics: list[Metric] = [
            metrics.create(*_name_and_options(entry, "metric"))
            for entry in spec.get("metric_list") or [{"metric": "accuracy"}]
        ]
        self.metric_names = [
            _name_and_options(entry, "metric")[0]
            for entry in spec.get("metric_list") or [{"metric": "accuracy"}]
        ]

    @functools.cached_property
    def items(self) -> list[Item]:
        """Every item of the task, in dataset order."""
        docs, self.source = load_docs_with_source(self.name, self.spec.get("dataset") or {}, self.path)
        process = self.spec.get("process_docs")
        if isinstance(process, FunctionRef):
            with task_code(f"task {self.name}: process_docs !function {process.ref}"):
                docs = list(process.resolve()(docs))
        items = [self._item(index, doc) for index, doc in enumerate(docs)]
        if self.spec.get("doc_to_id") is CONTENT:
            items = _number_repeats(items)
        ids = [item.id for item in items]
        if len(set(ids)) != len(ids):
            raise UsageError(f"task {self.name}: item ids are not unique ({self.path})")
        return items

    def items_with_ids(self, wanted: Collection[str]) -> list[Item]:
        """The items whose id is in ``wanted``, in dataset order (the viewer's questions of a run).

        When the rows come from a local mirror (the hub is not used) and each row names its id
        (``doc_to_id``), the mirror is read a row at a time (:func:`madeval.task.mirrors.mirror_rows`, the
        rows :attr:`items` gets) and only the wanted rows become items: no item for each of
        MMLU-Pro's 12,032 rows. Otherwise
        (a generator, the hub, ``process_docs``, ids by content, items already read, a provider's
        task) they are the wanted ones of :attr:`items`."""
        dataset = self.spec.get("dataset") or {}
        mirror = mirror_file(dataset) if isinstance(dataset, dict) and "path" in dataset else None
        streamable = (mirror is not None and "items" not in self.__dict__ and type(self).items is Task.items
                      and self.spec.get("doc_to_id") not in (None, CONTENT) and "process_docs" not in self.spec
                      and "generator" not in dataset and not hub_reachable())
        if not streamable:
            return [item for item in self.items if item.id in wanted]
        try:
            docs = mirror_rows(mirror)  # the rows :attr:`items` reads, one at a time
        except MirrorNotPlain:
            return [item for item in self.items if item.id in wanted]
        found, index = [], 0
        for doc in docs:
            if not keep_matching([doc], dataset.get("filter"), self.name):
                continue
            raw_id = self._field("doc_to_id", doc)
            if raw_id is not None and str(raw_id) in wanted:
                found.append(self._item(index, doc))
            elif raw_id is None and f"{self.name}-{index}" in wanted:  # as _item names a row without an id
                found.append(self._item(index, doc))
            index += 1
        return found

    def _field(self, key: str, doc: dict[str, Any]) -> Any:
        """The value of the item field ``key`` (a ``doc_to_*`` key) for ``doc``."""
        try:
            return _render(self.spec.get(key), doc)
        except UsageError as error:
            raise UsageError(f"task {self.name}: {key} {error} ({self.path})") from None

    def _item(self, index: int, doc: dict[str, Any]) -> Item:
        by_content = self.spec.get("doc_to_id") is CONTENT
        raw_id = None if by_content else self._field("doc_to_id", doc)
        item_id = str(raw_id) if raw_id is not None else f"{self.name}-{index}"
        text = str(self._field("doc_to_text", doc) or "")
        context = self._field("doc_to_context", doc)
        choices = self._choices(index, doc)
        target = self._normalise_target(self._field("doc_to_target", doc), choices, index)
        if by_content:
            item_id = content_id(text, str(context) if context else None, choices, target)
        if choices:
            lines = [self.choice_format.format(letter=LETTERS[i], choice=c) for i, c in enumerate(choices)]
            text = text.rstrip() + "\n" + "\n".join(lines)
        return Item(item_id, text, target, str(context) if context else None, choices, doc)

    def _choices(self, index: int, doc: dict[str, Any]) -> tuple[str, ...] | None:
        """The options of row ``index``: a list, or a string holding a Python/JSON list literal.

        A malformed value (not a literal, not a list, more options than there are letters) is a
        one-line UsageError naming the task, the row and the column (the ``doc_to_choice`` field)."""
        choices = self._field("doc_to_choice", doc)
        if isinstance(choices, str):
            try:  # a list written as text in a CSV or JSON column: "['a', 'b']"
                choices = ast.literal_eval(choices)
            except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                raise UsageError(f"{self._choices_at(index, doc)}: choices {shown(choices)} are not a list "
                                 f"literal ({self.path})") from None
        if not choices:
            return None
        try:
            if isinstance(choices, (bytes, dict)):
                raise TypeError
            choices = tuple(str(c) for c in choices)
        except TypeError:
            raise UsageError(f"{self._choices_at(index, doc)}: choices must be a list, got {shown(choices)} "
                             f"({self.path})") from None
        if len(choices) > len(LETTERS):
            raise UsageError(f"{self._choices_at(index, doc)}: {len(choices)} choices, more than the "
                             f"{len(LETTERS)} option letters A-Z ({self.path})")
        return choices

    def _choices_at(self, index: int, doc: dict[str, Any]) -> str:
        """Where a refused row's options are: the task, the row and the column (or the
        ``doc_to_choice`` field); made only for a row that is refused, not for every row."""
        spec = self.spec.get("doc_to_choice")
        column = f"column {spec!r}" if isinstance(spec, str) and spec in doc else "doc_to_choice"
        return f"task {self.name}: row {index}, {column}"

    def _normalise_target(self, target: Any, choices: tuple[str, ...] | None, index: int | None = None) -> Any:
        """The gold target in the task's answer form (a choice target as its option letter); a
        choice target that names no option is a one-line UsageError naming row ``index``."""
        if self.answer_type == "choice":
            if isinstance(target, int) or (isinstance(target, str) and target.strip().isdigit()):
                count = len(choices) if choices else len(LETTERS)
                if not 0 <= int(target) < count:  # -1 would read as Z, 4 as E on a four-option item
                    raise UsageError(f"{self._row_at(index)}: choice target {shown(target)} is not an "
                                     f"option index 0-{count - 1} (0-based)")
                return LETTERS[int(target)]
            text = str(target).strip()
            if choices and text in choices:
                return LETTERS[choices.index(text)]
            letter = text[1] if len(text) == 3 and text[0] == "(" and text[2] == ")" else text
            if len(letter) == 1 and letter.upper() in LETTERS[: len(choices) if choices else 26]:
                return letter.upper()
            raise UsageError(f"{self._row_at(index)}: cannot read choice target {shown(target)}")
        if self.answer_type == "yes_no":
            if isinstance(target, bool):
                return "yes" if target else "no"
            text = str(target).strip().lower()
            return {"true": "yes", "false": "no"}.get(text, text)
        if self.answer_type in ("number", "math"):
            return str(target).strip()
        return target

    def _row_at(self, index: int | None) -> str:
        """Where a refused target is: the task and row ``index`` (made only for a refused row)."""
        return f"task {self.name}" + (f": row {index}" if index is not None else "")

    def prompt(self, item: Item) -> TaskPrompt:
        """What agents are told about ``item`` (and, for structured answers, a choice item's letters)."""
        options = LETTERS[: len(item.choices)] if self.answer_type == "choice" and item.choices else ""
        return TaskPrompt(self.instruction, item.input, item.context, tuple(options))

    def read(self, text: str | None, item: Item | None = None) -> Reading:
        """The answer in ``text`` or, when there is none, why not (``note``), reading ``text`` once.

        The extractor chain (:meth:`read_chain`) runs once for both. A task provider that overrides
        :meth:`extract` (lm-eval's tasks read the whole reply) is asked for its answer, and for the
        chain's reason (:meth:`no_answer_reason`) only when it finds none.
        """
        if type(self).extract is Task.extract:
            reading = self.read_chain(text, item)
            return reading if reading.answer is not None or reading.note else Reading(None, NOTHING_FOUND)
        answer = self.extract(text, item)
        return Reading(answer) if answer is not None else Reading(None, self.no_answer_reason(text, item))

    def read_chain(self, text: str | None, item: Item | None = None) -> Reading:
        """What the extractor chain finds in ``text``: the answer, or ``None`` and why.

        The first extractor that answers wins; one that returns a :class:`NoAnswer` (e.g.
        :data:`AMBIGUOUS`, a reply naming several options) stops the chain with its reason.
        """
        if not text:
            return Reading(None, EMPTY_REPLY)
        for extractor in self._chain:
            answer = extractor(text, item)
            if isinstance(answer, NoAnswer):
                return Reading(None, answer.reason)
            if answer is not None:
                return Reading(answer)
        return Reading(None, NOTHING_FOUND) if self._chain else Reading(text.strip())

    def extract(self, text: str | None, item: Item | None = None) -> str | None:
        """The answer the extractor chain finds in ``text``, or ``None`` (:meth:`read` says why)."""
        return self.read_chain(text, item).answer

    def no_answer_reason(self, text: str | None, item: Item | None = None) -> str:
        """Why the extractor chain finds no answer in ``text`` (a parse note for the record); a
        task that overrides :meth:`extract` still gets the chain's reason or a generic one.
        Reading a reply for both its answer and the reason: :meth:`read`, which runs the chain once."""
        return self.read_chain(text, item).note or NOTHING_FOUND

    def reader(self, item: Item) -> Callable[[str | None], Reading]:
        """:meth:`read` for replies about ``item``: the debate's one reading of each solution."""
        return functools.partial(self.read, item=item)

    def score(self, prediction: str | None, item: Item, transcript: Transcript | None = None) -> dict[str, float]:
        """Every metric's score of ``prediction`` on ``item``, flattened into one mapping.

        A metric that reports several numbers (a mapping) contributes each under its own name.
        Debate metrics (:class:`madeval.metrics.base.DebateMetric`) read ``transcript``; without
        one they report nothing.
        """
        return score_metrics(zip(self.metric_names, self.metrics), prediction, item, self.answer_type, transcript)

    def reference_reply(self, item: Item) -> str:
        """A reply that states the gold answer the way the task's instruction asks for it.

        ``madeval tasks --validate`` and the tests check that it extracts and scores as correct.
        """
        target = item.target
        if isinstance(target, (list, tuple)):
            target = target[0] if target else ""
        if self.answer_type == "yes_no":
            return f"FINAL SOLUTION: {str(target).capitalize()}"
        if self.answer_type == "math":
            return f"So the answer is $\\boxed{{{target}}}$."
        return f"FINAL SOLUTION: {target}"

    def wrong_reply(self, item: Item) -> str:
        """A reply in the format of :meth:`reference_reply` that states a wrong answer.

        The next option letter, the other of yes/no, the target plus one (a number, or
        ``target+1`` for a math expression), and for free text two made-up words.
        """
        target = item.target
        if isinstance(target, (list, tuple)):
            target = target[0] if target else ""
        if self.answer_type == "choice":
            letters = LETTERS[: len(item.choices or ())] or LETTERS
            return f"FINAL SOLUTION: {letters[(letters.index(str(target)) + 1) % len(letters)]}"
        if self.answer_type == "yes_no":
            return "FINAL SOLUTION: " + ("No" if str(target).lower() == "yes" else "Yes")
        if self.answer_type in ("number", "math"):
            text = str(target).strip()
            try:
                wrong = str(int(text) + 1) if text.lstrip("-").isdigit() else str(float(text.replace(",", "")) + 1)
            except ValueError:
                wrong = f"{text}+1"
            if self.answer_type == "number":
                return f"FINAL SOLUTION: {wrong}"
            return f"So the answer is $\\boxed{{{wrong}}}$."
        return "FINAL SOLUTION: qqqx zzzv"


def _number_repeats(items: list[Item]) -> list[Item]:
    """Content ids made unique: the second identical item gets ``<id>-2``, the third ``<id>-3``.

    Identical items are interchangeable, so which copy gets which suffix does not matter: the
    ids stay the same, item for item, in any order of the rows (MMLU's test split has 105 such repeats).
    """
    seen: dict[str, int] = {}
    numbered = []
    for item in items:
        seen[item.id] = seen.get(item.id, 0) + 1
        numbered.append(item if seen[item.id] == 1 else dataclasses.replace(item, id=f"{item.id}-{seen[item.id]}"))
    return numbered


def _name_and_options(entry: Any, key: str) -> tuple[str, dict[str, Any]]:
    if isinstance(entry, str):
        return entry, {}
    if isinstance(entry, dict) and key in entry:
        options = {k: v for k, v in entry.items() if k not in (key, "aggregation", "higher_is_better")}
        return str(entry[key]), options
    raise UsageError(f"expected a name or a mapping with '{key}', got {entry!r}")


def _render(spec: Any, doc: dict[str, Any]) -> Any:
    """Resolve a doc_to_* field: a column name, a Jinja2 template, a !function, or literal text.

    A string that is neither a column nor a template but is one word, or close to a column name,
    is taken for a misspelt column and raises :class:`UsageError` (the message starts with the
    quoted field value, for :meth:`Task._field` to prefix).
    """
    if spec is None:
        return None
    if isinstance(spec, FunctionRef):
        with task_code(f"!function {spec.ref}"):
            return spec.resolve()(doc)
    if isinstance(spec, str):
        if spec in doc:
            return doc[spec]
        if "{{" in spec or "{%" in spec:
            try:
                return _JINJA.from_string(spec).render(**doc)
            except jinja2.TemplateError as error:
                raise UsageError(f"template {spec!r}: {error}") from None
        near = difflib.get_close_matches(spec, [str(c) for c in doc], n=1, cutoff=0.8)
        if _ONE_WORD.match(spec) or near:
            columns = ", ".join(str(c) for c in doc)
            raise UsageError(f"{spec!r} is not a column of the rows{closest(spec, doc)} (columns: {columns})")
        return spec
    return spec


def task_loader(index, extractors, metrics, settings=None) -> Callable[[str], Task]:
    """A function that builds the named task from ``index`` (a :class:`TaskIndex`); a task
    provider's task also gets the run's ``settings`` (``None``: the defaults)."""
    def load(name: str) -> Task:
        provided = None if name in index.tasks else index.provider_of(name)
        if provided is not None:
            provider, rest = provided
            return provider.load(rest, extractors, metrics, settings)
        path = index.tasks[name]
        return Task(read_yaml(path), path, extractors, metrics)

    return load


def load_task(name: str, include_path: Sequence[str | Path] = ()) -> Task:
    """The task ``name`` as a run would load it, for a notebook or a script: its items
    (``task.items``, each an :class:`~madeval.Item`), its prompt (``task.prompt(item)``), its answer
    extraction (``task.extract(reply, item)``) and its scorer (``task.score(prediction, item)``, one
    number per metric), e.g.::

        task = madeval.load_task("arith_mc")
        item = task.items[0]
        task.score(task.extract("The answer is (B)", item), item)   # {"accuracy": 1.0} or 0.0

    ``name`` is a built-in or plugin task (``madeval tasks`` lists them), a provider's task such as
    ``lm_eval:gsm8k``, or one in an ``include_path`` folder (as ``--include-path``); a group or tag
    stands for several tasks and is a UsageError naming them. Items are read on first use of
    ``task.items`` (a data error surfaces there).
    """
    from madeval.core.plugins import registries  # the plugin manager loads on first use, as in a run

    built = registries()
    index = task_index(built, [str(p) for p in include_path])
    names = index.expand(name)
    if len(names) != 1:
        listed = ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")
        raise UsageError(f"'{name}' stands for {len(names)} tasks ({listed}): load one of them")
    return task_loader(index, built.extractors, built.metrics)(names[0])


def score_metrics(named: Iterable[tuple[str, Metric]], prediction: str | None, item: Item, answer_type: str,
                  transcript: Transcript | None = None) -> dict[str, float]:
    """The scores of ``(name, metric)`` pairs on one prediction, flattened into one mapping (a
    metric that reports a mapping contributes each of its numbers under its own name). Debate
    metrics read ``transcript`` and report nothing without one."""
    scores: dict[str, float] = {}
    for name, metric in named:
        if isinstance(metric, DebateMetric):
            if transcript is None:
                continue
            value = metric.score_debate(prediction, item, DebateView(transcript, answer_type, item.target))
        else:
            value = metric.score(prediction, item)
        if isinstance(value, dict):
            scores.update({key: float(v) for key, v in value.items()})
        else:
            scores[name] = float(value)
    return scores


def load_tasks(settings: RunSettings, registries: Registries) -> dict[str, Task]:
    """The tasks named by ``settings.tasks`` (groups and tags expanded), loaded with their items."""
    index = task_index(registries, settings.include_path)
    load = task_loader(index, registries.extractors, registries.metrics, settings)
    names: list[str] = []
    for name in settings.tasks:
        for task in index.expand(name):
            if task not in names:
                names.append(task)
    tasks = {name: load(name) for name in names}
    for task in tasks.values():
        task.items  # noqa: B018 - load now so data errors surface before anything is written
    return tasks
