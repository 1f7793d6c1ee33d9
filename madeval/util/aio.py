"""Running madeval's event loop: on uvloop when it is installed, else on asyncio's own loop.

Two things keep the harness from setting the pace against a fast endpoint (``python -m bench``):
uvloop (libuv under asyncio) cuts the CPU the event loop spends per call by about a third; and
the cyclic garbage collector is kept from re-scanning the start-up heap (modules, task data) on
every collection, which otherwise stalls the loop for milliseconds at a time in the middle of a
wave of replies. Set ``MADEVAL_EVENT_LOOP=asyncio`` to run on the standard loop instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
from typing import Any, Callable, Coroutine, Iterator, TypeVar

T = TypeVar("T")


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The event-loop constructor to use: ``uvloop.new_event_loop`` when available, else ``None``."""
    if os.environ.get("MADEVAL_EVENT_LOOP", "").lower() == "asyncio":
        return None
    try:
        import uvloop  # optional: the asyncio loop serves without it
    except ImportError:
        return None
    return uvloop.new_event_loop


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """Run ``coroutine`` to completion on a fresh event loop (see :func:`loop_factory`)."""
    with asyncio.Runner(loop_factory=loop_factory()) as runner, start_up_heap_frozen():
        return runner.run(coroutine)


#: Allocations between young-generation collections while a run is on (CPython's default is 700).
YOUNG_THRESHOLD = 50_000


@contextlib.contextmanager
def start_up_heap_frozen() -> Iterator[None]:
    """Collect the young generations (the garbage start-up just made), move every surviving object
    out of the collector's view, and collect young objects less often; undone on exit. Garbage made
    during the run is still collected. Not a full collection: in a process with a large heap (a
    notebook that imported torch, a test worker) that took 0.4 s of CPU a run; older garbage, if
    any, is only kept until the run ends."""
    before = gc.get_threshold()
    gc.collect(1)
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()


def new_event_loop() -> asyncio.AbstractEventLoop:
    """A fresh event loop of the kind :func:`run` uses (for a loop run in a thread)."""
    factory = loop_factory()
    return factory() if factory is not None else asyncio.new_event_loop()
