"""Random streams derived from a debate's seeded generator without disturbing it."""

from __future__ import annotations

import random

from madeval import DebateState


def substream(state: DebateState, *labels: object) -> random.Random:
    """A generator for ``labels`` seeded from ``state.rng`` (run seed, item, repeat), which it
    does not advance.

    The same debate and labels always give the same stream, however often or in whatever order
    components ask, so a live debate and a replay of its decider draw the same numbers.
    """
    probe = random.Random()
    probe.setstate(state.rng.getstate())
    base = probe.getrandbits(64)
    return random.Random("/".join([str(base), *map(str, labels)]))
