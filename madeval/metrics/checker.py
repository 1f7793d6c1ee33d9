"""Math answer equivalence with math-verify, bounded in time and memory, off the event loop.

Model replies are untrusted: ``\\boxed{(x+1)^{9999}}`` keeps sympy busy for minutes and
``9^{9^{9^9}}`` asks for more memory than the machine has. math-verify's own timeouts use
``signal.alarm``, which works only in a process's main thread and still blocks it, so they are
switched off (``parsing_timeout=None``, ``timeout_seconds=None``) and the deadline is enforced
from outside instead: every check runs in a worker process of a ``pebble`` pool that is killed and
replaced when a check exceeds its deadline; the worker's address space is capped with ``RLIMIT_AS``.
Workers come from multiprocessing's fork server (never forked from the parent, which runs uvloop and
threads), which imports math-verify and sympy once: a replaced worker starts in milliseconds instead
of the second of CPU a fresh interpreter takes to import them. The pool starts on the first check,
is reused, and :func:`shutdown_checker` stops it (the scheduler calls it at the end of a run). As
with any process started this way, a script of your own that scores math answers must keep its
top-level code under ``if __name__ == "__main__":`` (``madeval`` and ``python -m madeval`` do).

A check that cannot be decided (deadline, memory cap, crashed worker) counts as *not equal* and
its reason is noted with :func:`madeval.metrics.notes.note_scoring_error`, so it reaches the
record's ``scoring_errors``. Verdicts are cached per (answer, gold) pair, timeouts included, so a
hostile answer costs its deadline once per run, not once per metric.

The defaults (:data:`DEADLINE_S`, :data:`MEMORY_BYTES`, :data:`WORKERS`) are set here;
:func:`configure` changes them (the tests use a short deadline). Calls block their thread while
the worker checks: call :func:`math_equivalent` from a worker thread (the scheduler scores in
``asyncio.to_thread``), never from the event loop.
"""

from __future__ import annotations

import atexit
import logging
import multiprocessing
import re
import resource
import threading
from collections import OrderedDict
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass

from madeval.metrics.notes import note_scoring_error

DEADLINE_S = 3.0  # per check, from the moment the worker starts it
MEMORY_BYTES = 1 << 30  # address-space cap of a worker (1 GiB; python + sympy use ~0.3 GiB)
WORKERS = 2  # checks in parallel (the scheduler scores several finished debates at once)
CACHE_SIZE = 20_000  # verdicts kept per process; a verdict is a few hundred bytes
MAX_ANSWER_CHARS = 10_000  # longer answers are not sent to the checker (no gold is near that long)


@dataclass(frozen=True)
class Verdict:
    """The result of one check: ``equal``, and why it could not be decided (``None`` if it was)."""

    equal: bool
    reason: str | None = None


_MATH_DELIMITER = re.compile(r"(?<!\\)\$|\\boxed")  # "$" but not the currency sign "\$"


def _wrap(text: str) -> str:
    """The answer as math-verify expects to find it: inside ``$...$`` unless already delimited."""
    return text if _MATH_DELIMITER.search(text) else f"${text}$"


def _parse(text: str) -> list:
    """math-verify's parse of an extracted answer (as LaTeX, or as a Python-style power such as
    "2**3**2", which its LaTeX reader would read as "2")."""
    from math_verify import ExprExtractionConfig, parse  # sympy behind it: seconds, only in the worker

    if "**" in text and "\\" not in text:
        return parse(text, [ExprExtractionConfig()], parsing_timeout=None)
    return parse(_wrap(text), parsing_timeout=None)


def equivalent(prediction: str, gold: str) -> bool:
    """True when math-verify finds ``prediction`` equal to ``gold``. Unbounded: runs in the worker
    (the tests also call it directly, to watch what it evaluates)."""
    from math_verify import verify  # sympy behind it: seconds, only in the worker

    return bool(verify(_parse(gold), _parse(prediction), timeout_seconds=None))


def _start_worker(memory_bytes: int) -> None:
    """Worker initializer: cap the address space, quiet math-verify, load it before any deadline."""
    if memory_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    for name in ("math_verify", "latex2sympy2_extended"):
        logging.getLogger(name).setLevel(logging.CRITICAL)  # "timeout is disabled" warnings
    equivalent("1", "1")  # imports sympy, math-verify and its parser before the first deadline


def _worker_context():
    """The fork server's context, its server importing math-verify before it forks any worker (if
    this process's fork server already runs, its workers import math-verify themselves)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["madeval.metrics.checker", "math_verify"])
    return context


def _worker_status() -> dict[str, int]:
    """This process's peak resident memory and address-space limit, in bytes (-1: no limit)."""
    return {"peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,  # Linux: kB
            "memory_limit": resource.getrlimit(resource.RLIMIT_AS)[0]}


class MathChecker:
    """A lazily started pool of killable checker processes with a verdict cache (thread-safe)."""

    def __init__(self, deadline_s: float = DEADLINE_S, memory_bytes: int = MEMORY_BYTES, workers: int = WORKERS):
        self.deadline_s = deadline_s
        self.memory_bytes = memory_bytes
        self.workers = workers
        self._pool = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[str, str], Verdict] = OrderedDict()
        # answers that once exceeded a limit: not checked again (each costs its deadline once)
        self._undecidable: OrderedDict[str, str] = OrderedDict()
        self._running: dict[str, threading.Event] = {}  # predictions being checked now

    def _get_pool(self):
        with self._lock:
            if self._pool is None:
                from pebble import ProcessPool  # three times this module's import: only for math tasks

                self._pool = ProcessPool(
                    max_workers=self.workers,
                    initializer=_start_worker,
                    initargs=(self.memory_bytes,),
                    context=_worker_context(),
                )
            return self._pool

    def check(self, prediction: str, gold: str) -> Verdict:
        """Whether ``prediction`` equals ``gold``, decided within the deadline (blocks this thread).

        Checks of one prediction run one at a time (threads scoring the same hostile answer
        against other golds wait, then find it undecidable instead of each paying the deadline)."""
        key = (prediction, gold)
        while True:
            with self._lock:
                if key in self._cache:
                    self._cache.move_to_end(key)
                    return self._cache[key]
                for text in (prediction, gold):
                    if text in self._undecidable:
                        return Verdict(False, self._undecidable[text])
                running = self._running.get(prediction)
                if running is None:
                    self._running[prediction] = threading.Event()
                    break
            running.wait()
        verdict = Verdict(False, "math check interrupted")
        try:
            verdict = self._run(prediction, gold)
        finally:
            with self._lock:
                self._cache[key] = verdict
                if verdict.reason:
                    self._undecidable[prediction] = verdict.reason
                for kept in (self._cache, self._undecidable):
                    while len(kept) > CACHE_SIZE:
                        kept.popitem(last=False)
                self._running.pop(prediction).set()
        return verdict

    def _run(self, prediction: str, gold: str) -> Verdict:
        if prediction.strip() == gold.strip():
            return Verdict(True)
        if len(prediction) > MAX_ANSWER_CHARS or len(gold) > MAX_ANSWER_CHARS:
            return Verdict(False, f"math answer longer than {MAX_ANSWER_CHARS} characters, not parsed")
        from pebble import ProcessExpired  # loaded with the pool, above

        try:
            future = self._get_pool().schedule(equivalent, args=(prediction, gold), timeout=self.deadline_s)
        except Exception as error:  # noqa: BLE001 - a broken pool: the next check starts a new one
            self.shutdown()
            return Verdict(False, f"math checker could not start ({type(error).__name__}: {error})")
        try:
            return Verdict(future.result())
        except FutureTimeout:  # pebble killed the worker and starts a new one
            return Verdict(False, f"math check exceeded {self.deadline_s:g} s")
        except MemoryError:
            return Verdict(False, f"math check exceeded the {self.memory_bytes >> 20} MiB memory cap")
        except ProcessExpired as error:  # killed by the memory cap or a crash in sympy
            return Verdict(False, f"math checker process died ({error})")
        except Exception as error:  # noqa: BLE001 - math-verify catches its own; anything else is noted
            return Verdict(False, f"math check failed ({type(error).__name__})")

    def undecidable(self, text: str) -> bool:
        """True when ``text``, as a prediction, once exceeded a limit (it is not checked again)."""
        with self._lock:
            return text in self._undecidable

    def worker_status(self) -> dict[str, int]:
        """A worker's ``peak_rss`` and ``memory_limit`` in bytes (a probe for the tests and the
        bench; with one worker it is the worker that ran the checks before, if it was not killed)."""
        return self._get_pool().schedule(_worker_status, timeout=self.deadline_s).result()

    def shutdown(self) -> None:
        """Stop the worker processes (a later check starts new ones); the cache is kept."""
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.stop()
            pool.join()


_checker = MathChecker()
atexit.register(lambda: _checker.shutdown())  # a script that never called shutdown_checker


def configure(deadline_s: float | None = None, memory_bytes: int | None = None,
              workers: int | None = None) -> dict[str, float | int]:
    """Change the checker's limits (its workers stop; the verdict cache is cleared) and return
    the previous ones, as keyword arguments for a later ``configure(**previous)``."""
    global _checker
    previous = {"deadline_s": _checker.deadline_s, "memory_bytes": _checker.memory_bytes,
                "workers": _checker.workers}
    _checker.shutdown()
    _checker = MathChecker(
        deadline_s if deadline_s is not None else _checker.deadline_s,
        memory_bytes if memory_bytes is not None else _checker.memory_bytes,
        workers if workers is not None else _checker.workers,
    )
    return previous


def known_undecidable(answer: str) -> bool:
    """True when checking ``answer`` once exceeded the deadline or the memory cap in this run."""
    return _checker.undecidable(answer.strip())


def worker_status() -> dict[str, int]:
    """A checker worker's ``peak_rss`` and ``memory_limit`` in bytes (see :meth:`MathChecker.worker_status`)."""
    return _checker.worker_status()


def math_equivalent(prediction: str, gold: str) -> bool:
    """True when ``prediction`` equals ``gold`` as math; an undecided check is False and noted."""
    verdict = _checker.check(prediction, gold)
    if verdict.reason:
        note_scoring_error(f"{verdict.reason}: {_shorten(prediction)} vs {_shorten(gold)}")
    return verdict.equal


def shutdown_checker() -> None:
    """Stop the checker's worker processes (the end of a run)."""
    _checker.shutdown()


def _shorten(text: str, limit: int = 80) -> str:
    return repr(text if len(text) <= limit else text[: limit - 3] + "...")
