"""madeval.util.aio: the event loop a run gets, and the collector's settings around it."""

from __future__ import annotations

import gc
import weakref

from madeval.util import aio


class _Node:
    """An object that can sit in a reference cycle and be watched through a weak reference."""

    partner: _Node | None = None


def _young_cycle() -> weakref.ref:
    first, second = _Node(), _Node()
    first.partner, second.partner = second, first
    return weakref.ref(first)


def test_a_run_collects_the_young_garbage_freezes_the_rest_and_makes_no_full_collection():
    threshold, frozen = gc.get_threshold(), gc.get_freeze_count()
    gc.collect()  # this process's own earlier garbage out of the way
    cycle = _young_cycle()
    full_collections = gc.get_stats()[2]["collections"]
    with aio.start_up_heap_frozen():
        assert cycle() is None  # start-up's garbage is collected before the heap is frozen
        assert gc.get_freeze_count() > frozen
        assert gc.get_threshold()[0] == aio.YOUNG_THRESHOLD
        assert gc.get_stats()[2]["collections"] == full_collections  # 0.4 s of CPU in a large heap
    assert gc.get_threshold() == threshold and gc.get_freeze_count() == frozen


def test_garbage_made_during_a_run_is_collected_without_being_asked_for():
    async def make_garbage() -> tuple[weakref.ref, bool]:
        cycle = _young_cycle()
        kept = [[] for _ in range(2 * aio.YOUNG_THRESHOLD)]  # allocations enough for a young collection
        return cycle, len(kept) > 0

    cycle, _ = aio.run(make_garbage())
    assert cycle() is None
