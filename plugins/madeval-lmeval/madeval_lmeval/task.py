"""An lm-eval task as a madeval :class:`~madeval.task.definition.Task`: lm-eval's prompt, targets and scoring.

* ``generate_until``: agents see lm-eval's prompt (``fewshot_context``: ``description`` then
  ``doc_to_text``; zero-shot). The debate's final solution text is scored as lm-eval scores a
  model's output: every ``filter_list`` pipeline, then ``process_results``, one score per
  ``(metric, filter)`` named as lm-eval reports it (``exact_match,strict-match``).
* ``multiple_choice``: lm-eval ranks the choices by log-likelihood, which a debate cannot do. The
  choices (``doc_to_choice``) are shown as lettered options after lm-eval's prompt, agents answer
  with a letter, and accuracy is scored against ``doc_to_target`` with madeval's multiple-choice
  extraction: generation, not log-likelihood, so not comparable with lm-eval's ``acc``.
"""

from __future__ import annotations

import concurrent.futures
import functools
import math
import threading
import time
from pathlib import Path
from string import ascii_uppercase as LETTERS  # the option letters, as madeval's own tasks use
from typing import Any, Callable

from madeval import Item, Task, TaskPrompt, UsageError, read_yaml, task_code

from . import item_cache, lmeval_api
from .mirrors import builtin_task_folder

PREFIX = "lm_eval"
#: The longest reply scored (characters): far beyond any lm-eval task's max_gen_toks (2,048 tokens
#: in mmlu_pro, about 10,000 characters).
MAX_SCORED_CHARS = 65_536
#: Seconds between a cached task's first prompt and the start of building lm-eval's task object in
#: a thread: the event loop sends the first calls meanwhile, not waiting for the interpreter lock
#: that imports hold for long stretches.
START_DELAY_S = 0.2
#: The note the leaderboard shows for a multiple-choice lm-eval task.
MC_NOTE = ("lm-eval multiple_choice task run as generation (lettered options, accuracy of the "
           "answered letter), not log-likelihood ranking: not comparable with lm-eval's acc")


def _builtin_template(name: str) -> dict[str, Any]:
    """A shared template of madeval's built-in tasks (``_multiple_choice.yaml``)."""
    return read_yaml(builtin_task_folder() / name)


class Later:
    """A value (lm-eval's task object, 2-3 CPU seconds to build) built in a daemon thread once
    :meth:`start` is called, after :data:`START_DELAY_S`; :meth:`get` starts it if need be, waits
    for it and raises what building it raised."""

    def __init__(self, build: Callable[[], Any], name: str):
        self._build, self._name = build, name
        self._future: concurrent.futures.Future = concurrent.futures.Future()
        self._started = threading.Event()
        self._starting = threading.Lock()

    def start(self, delay_s: float = 0.0) -> None:
        """Start building in a thread (once), after ``delay_s`` seconds."""
        with self._starting:
            if self._started.is_set():
                return
            self._started.set()
        threading.Thread(target=self._run, args=(delay_s,), name=f"lm-eval build {self._name}", daemon=True).start()

    def _run(self, delay_s: float) -> None:
        time.sleep(delay_s)
        try:
            self._future.set_result(self._build())
        except BaseException as error:  # noqa: BLE001 - handed to whoever waits, raised there
            self._future.set_exception(error)

    @property
    def started(self) -> bool:
        """Whether building has been started."""
        return self._started.is_set()

    def get(self) -> Any:
        """The built value (started now if it was not, and waited for)."""
        self.start()
        return self._future.result()


class LmEvalTask(Task):
    """Items and prompts of one lm-eval task; subclasses say how a reply is scored.

    Built either from lm-eval's task object, or from ``prepared`` items read from the disk cache
    (:mod:`.item_cache`) with the task object still being built (a :class:`Later`): only scoring
    waits for it. ``store``, when given, is called with the task once its items are built (the
    plugin stores them in the cache).
    """

    def __init__(self, lm_task: Any, name: str, spec: dict[str, Any], extractors, metrics,
                 prepared: item_cache.Prepared | None = None):
        dataset_path = prepared.dataset_path if prepared else getattr(lm_task.config, "dataset_path", "")
        super().__init__({"task": f"{PREFIX}:{name}", **spec}, Path(str(dataset_path or "lm_eval")),
                         extractors, metrics)
        self._lm_task = lm_task
        self.lm_name = name
        self.num_fewshot = 0  # lm-eval's prompt without examples unless the run asks for some
        self.fewshot_seed = 1234  # lm-eval's own default (simple_evaluate); a run sets its --seed
        self.store: Callable[[LmEvalTask, list[Item]], None] | None = None
        self.from_cache = prepared is not None
        if prepared is not None:
            self.answer_type, self.source = prepared.answer_type, prepared.source
            self.__dict__["items"] = prepared.items  # the cached_property, already known

    @property
    def lm_task(self) -> Any:
        """lm-eval's task object (waits for it when it is still being built)."""
        return self._lm_task.get() if isinstance(self._lm_task, Later) else self._lm_task

    @functools.cached_property
    def docs(self) -> list[dict[str, Any]]:
        """The docs the task is scored on: lm-eval's ``eval_docs`` (test split, else validation)."""
        if self.from_cache:
            return [item.doc for item in self.items]
        with task_code(f"task {self.name}: lm-eval eval_docs"):
            return list(self.lm_task.eval_docs)

    @functools.cached_property
    def items(self) -> list[Item]:
        """One item per doc, its input lm-eval's prompt (then stored by :attr:`store`)."""
        items = self._build_items()
        if self.store is not None:
            self.store(self, items)
        return items

    def _build_items(self) -> list[Item]:
        shots = f", {self.num_fewshot}-shot (lm-eval sampler seed {self.fewshot_seed})" if self.num_fewshot else ""
        self.source = f"lm-eval {self.lm_name}{shots}"
        if self.num_fewshot and not len(lmeval_api.fewshot_pool(self.lm_task)):
            raise UsageError(f"task {self.name}: --num-fewshot {self.num_fewshot}, but the task's few-shot "
                             "split has no local mirror (use --num-fewshot 0)")
        # the sampler draws in doc order from a fresh seed, as lm-eval's build_all_requests does
        lmeval_api.seed_fewshot(self.lm_task, self.fewshot_seed)
        with task_code(f"task {self.name}: lm-eval prompt"):
            return [self._lm_item(index, doc) for index, doc in enumerate(self.docs)]

    def prepared(self, items: list[Item], files: list[list[Any]], folders: list[str]) -> item_cache.Prepared:
        """What :mod:`.item_cache` stores of this task and its built ``items``, with the files they came from."""
        return item_cache.Prepared(self.lm_task.config.output_type, str(self.path), self.source, self.answer_type,
                                   list(self.metric_names), list(items), files, folders)

    def prompt_text(self, doc: dict[str, Any]) -> str:
        """lm-eval's context for ``doc``; a task with one context per choice is refused."""
        context = lmeval_api.fewshot_context(self.lm_task, doc, self.num_fewshot)
        if not isinstance(context, str):
            raise UsageError(f"task {self.name}: lm-eval tasks with one context per choice "
                             "(multiple_input, e.g. winogrande) are not supported")
        return context

    def _lm_item(self, index: int, doc: dict[str, Any]) -> Item:
        raise NotImplementedError


class GenerateUntilTask(LmEvalTask):
    """An lm-eval ``generate_until`` task, scored by lm-eval's filters and ``process_results``."""

    def __init__(self, lm_task: Any, name: str, extractors, metrics, prepared: item_cache.Prepared | None = None):
        super().__init__(lm_task, name, {"answer_type": "text"}, extractors, metrics, prepared)
        self.metrics = []
        if prepared is not None:
            self.answer_type, self.metric_names = prepared.answer_type, list(prepared.metric_names)
            return
        unsupported = sorted(
            metric for metric, aggregate in lm_task.aggregation().items()
            if getattr(aggregate, "__name__", "") != "mean"
        )
        if unsupported:
            raise UsageError(f"task {self.name}: lm-eval metrics aggregated other than by mean "
                             f"are not supported: {', '.join(unsupported)}")
        self.metric_names = [f"{metric},{f.name}" for f in self.filters for metric in lm_task.aggregation()]

    def prompt(self, item: Item) -> TaskPrompt:
        """What agents are told about ``item``. The first prompt of a task read from the item cache
        starts building lm-eval's task object (needed to score replies): the run is then sending its
        first calls, and the build overlaps the wait for the replies. Started any earlier, it held
        the interpreter while the run started up and delayed the first call by 0.5 s or more."""
        if isinstance(self._lm_task, Later):
            self._lm_task.start(START_DELAY_S)
        return super().prompt(item)

    @functools.cached_property
    def filters(self) -> list[Any]:
        """lm-eval's filter pipelines of the task (its ``filter_list``)."""
        return lmeval_api.filter_ensembles(self.lm_task)

    def _build_items(self) -> list[Item]:
        """One item per doc; the task's answers are numbers when every gold answer is one."""
        items = super()._build_items()
        if items and all(_is_number(item.target) for item in items):
            self.answer_type = "number"
        return items

    def _lm_item(self, index: int, doc: dict[str, Any]) -> Item:
        target = self.lm_task.doc_to_target(doc)
        return Item(f"{self.name}-{index}", self.prompt_text(doc), self._gold(doc, target), None, None, doc)

    def _gold(self, doc: dict[str, Any], target: Any) -> Any:
        """The answer the task's first filter finds in the target (gsm8k: the number after
        ``####``), else the target: what a correct reply states (the simulator answers it)."""
        if isinstance(target, list):
            return [str(t) for t in target]
        found = self.filtered(doc, -1, str(target))[self.filters[0].name]
        return found if isinstance(found, str) and found and found != "[invalid]" else str(target)

    def filtered(self, doc: dict[str, Any], doc_id: int, reply: str) -> dict[str, Any]:
        """The reply after each filter pipeline, by pipeline name (lm-eval's ``filtered_resps``)."""
        request = lmeval_api.instance(self.lm_task, doc, doc_id, reply)
        for ensemble in self.filters:
            ensemble.apply([request])
        return request.filtered_resps

    def extract(self, text: str | None, item: Item | None = None) -> str | None:
        """The reply itself: lm-eval's filters read the whole text when it is scored."""
        return text if text else None

    def score(self, prediction: str | None, item: Item, transcript=None) -> dict[str, float]:
        """lm-eval's score of ``prediction`` through each filter: ``{"metric,filter": value}``.

        A reply longer than :data:`MAX_SCORED_CHARS` is scored on its beginning: lm-eval's own
        generation stops at ``max_gen_toks``, and the task's regexes (``(?s).*#### `` in gsm8k's
        ``regexes_to_ignore``) take time quadratic in the length of an untrusted reply.
        """
        doc = item.doc
        reply = (prediction or "")[:MAX_SCORED_CHARS]
        filtered = self.filtered(doc, int(item.id.rpartition("-")[2]), reply)
        scores = {}
        for ensemble in self.filters:
            with task_code(f"task {self.name}: lm-eval process_results"):
                results = self.lm_task.process_results(doc, [filtered[ensemble.name]])
            for metric, value in results.items():
                scores[f"{metric},{ensemble.name}"] = _number(self.name, metric, value)
        return scores

    def reference_reply(self, item: Item) -> str:
        """The doc's own target text (gsm8k's worked solution ending ``#### N``)."""
        target = self.lm_task.doc_to_target(item.doc)
        return str(target[0] if isinstance(target, list) else target)


def _is_number(text: Any) -> bool:
    try:
        return isinstance(text, str) and math.isfinite(float(text.replace(",", "")))
    except ValueError:
        return False


def _number(task: str, metric: str, value: Any) -> float:
    """A per-item score as a float; lm-eval metrics whose items are not numbers are refused."""
    if isinstance(value, bool) or isinstance(value, (int, float)):
        return float(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise UsageError(f"task {task}: lm-eval metric {metric} gives per-item {type(value).__name__} "
                         "values, not numbers: not supported") from None
    return number if math.isfinite(number) else 0.0


class MultipleChoiceTask(LmEvalTask):
    """An lm-eval ``multiple_choice`` task as lettered options, scored by accuracy of the letter."""

    note = MC_NOTE

    def __init__(self, lm_task: Any, name: str, extractors, metrics, prepared: item_cache.Prepared | None = None):
        template = _builtin_template("_multiple_choice.yaml")
        super().__init__(lm_task, name, template, extractors, metrics, prepared)

    def _lm_item(self, index: int, doc: dict[str, Any]) -> Item:
        choices = tuple(str(c) for c in self.lm_task.doc_to_choice(doc))
        if len(choices) > len(LETTERS):  # as madeval's own tasks: the choice extractor reads letters A-Z
            raise UsageError(f"task {self.name}: row {index}: {len(choices)} choices, more than the "
                             f"{len(LETTERS)} option letters A-Z")
        target = self._normalise_target(self.lm_task.doc_to_target(doc), choices, index)
        text = self.prompt_text(doc).rstrip()
        if choices != tuple(LETTERS[: len(choices)]):  # letters as choices: lm-eval's prompt lists the options
            lines = [self.choice_format.format(letter=LETTERS[i], choice=c) for i, c in enumerate(choices)]
            text += "\n" + "\n".join(lines)
        return Item(f"{self.name}-{index}", text, target, None, choices, doc)


def adapt(lm_task: Any, name: str, extractors, metrics) -> LmEvalTask:
    """The madeval task for the lm-eval task object ``lm_task`` (registered as ``name``)."""
    output_type = lm_task.config.output_type
    if output_type == "generate_until":
        return GenerateUntilTask(lm_task, name, extractors, metrics)
    if output_type == "multiple_choice":
        return MultipleChoiceTask(lm_task, name, extractors, metrics)
    raise UsageError(f"task {PREFIX}:{name}: lm-eval output_type {output_type} has no debate "
                     "form (only generate_until and multiple_choice)")


def adapt_prepared(prepared: item_cache.Prepared, build: Callable[[], Any], name: str, extractors,
                   metrics) -> LmEvalTask:
    """The madeval task for items read from the disk cache. A ``generate_until`` task's replies are
    scored by lm-eval's task object, built by ``build`` in a thread its first prompt starts
    (:meth:`GenerateUntilTask.prompt`); a multiple-choice task is scored by madeval alone and
    builds it only if something asks for it."""
    task_class = GenerateUntilTask if prepared.output_type == "generate_until" else MultipleChoiceTask
    return task_class(Later(build, name), name, extractors, metrics, prepared)


