"""Within one run, a request identical to one already made or in flight is made once.

Configurations that differ in one component (the decider, say) ask the model the very same
questions until they part ways: the same messages, sampling parameters and per-agent seed. The
first asker of such a request makes it; every other asker of an identical request gets that reply,
whether it asks while the request is in flight (it waits for it: *single flight*) or after it came
back. Each configuration then gets the reply it would have got alone from a server whose seeded
sampling repeats, and the configurations share their random numbers exactly (common random numbers)
even on a server whose sampling does not repeat.

Identical means the same key (:meth:`madeval.llm.client.LLMClient.complete` makes it from the
endpoint and what it reports about the model, the model, the messages, the sampling parameters with
the seed and ``response_format``, and the call's place in its debate), within the same *group*: the
calls that can be identical (one item and repeat of a run). A group's replies are kept until the
run says every asker of the group is done (:meth:`SharedCalls.forget`), so memory holds only the
groups in progress.

A failure is the failing asker's alone: when the call of the asker that made it fails (its retries
run out, the endpoint refuses it, its debate is cancelled), no reply is kept and the next waiting
asker makes the request itself, as it would have alone; a failure is never handed to the others.

This is not the response cache (:mod:`madeval.llm.cache`): nothing outlives the run, and nothing is
shared between runs. ``on_made`` lets the run keep each reply made (the run folder's journal of shared
replies, read back by a resumed run through :meth:`SharedCalls.keep`).
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import Any, Awaitable, Callable

#: A call's :class:`madeval.llm.client.Completion` (not imported: the client imports this module).
_Completion = Any


@dataclass(frozen=True)
class Asker:
    """Who asks a call that may be shared: the ``group`` of calls that can be identical (forgotten
    together), and the asker's ``name`` as the calls that reuse its replies record it."""

    group: str
    name: str


@dataclass(frozen=True)
class Made:
    """A reply kept for sharing: the call as it was made, and the name of its asker."""

    completion: _Completion
    by: str


class SharedCalls:
    """The replies made in a run by group and key, and the requests in flight (see the module text).

    ``on_made(group, key, made)`` is called with each reply made (not with one reused).
    ``listener`` is called whenever :attr:`waiting` changes (the scheduler starts another debate
    while one waits for a reply another debate is getting)."""

    def __init__(self, on_made: Callable[[str, str, Made], None] | None = None):
        self.on_made = on_made
        self.listener: Callable[[], None] | None = None
        self._replies: dict[str, dict[str, Made]] = {}
        self._flights: dict[tuple[str, str], asyncio.Future] = {}
        #: Askers waiting now for a reply another asker is getting.
        self.waiting = 0
        #: Calls made, and calls answered with a reply made for another asker.
        self.made = 0
        self.reused = 0

    async def reply(self, key: str, asker: Asker, make: Callable[[], Awaitable[_Completion]]) -> _Completion:
        """The reply to the request ``key`` for ``asker``: one already made in its group, the one in
        flight once it is back, else ``make()``'s (kept for the others when it succeeds)."""
        while True:
            kept = self._replies.get(asker.group, {}).get(key)
            if kept is not None:
                # Handed over at the loop's next turn, as a reply from the wire is: calls started
                # together (a round of votes) all start before any of them is back, so the depth each
                # call records (the debate's chain) is the same as when they are made.
                await asyncio.sleep(0)
                return self._reused(kept, asker)
            flight = self._flights.get((asker.group, key))
            if flight is None:
                break
            await self._wait(flight)  # then look again: kept, or failed (and maybe made again by another)
        flight = self._flights[asker.group, key] = asyncio.get_running_loop().create_future()
        try:
            completion = await make()
        finally:  # failed or cancelled: nothing kept, the waiting askers look again and one makes it
            del self._flights[asker.group, key]
            flight.set_result(None)
        self.keep(asker.group, key, Made(completion, asker.name))
        self.made += 1
        if self.on_made is not None:
            self.on_made(asker.group, key, self._replies[asker.group][key])
        return completion

    def keep(self, group: str, key: str, made: Made) -> None:
        """Keep a reply made for ``group`` (a resumed run's replies of an earlier process too)."""
        self._replies.setdefault(group, {}).setdefault(key, made)

    def forget(self, group: str) -> None:
        """Drop the replies of ``group``: every asker of it is done."""
        self._replies.pop(group, None)

    def groups(self) -> int:
        """How many groups have replies kept (what memory holds)."""
        return len(self._replies)

    def _reused(self, kept: Made, asker: Asker) -> _Completion:
        """``kept``'s call as ``asker`` records it: made by another asker, or its own (an asker
        that asks again after its debate was cut short, in this process or an earlier one)."""
        own = kept.by == asker.name
        self.reused += not own
        # a copy: each debate's record holds a call of its own (its errors list too)
        return dataclasses.replace(kept.completion, shared_from=None if own else kept.by,
                                   errors=list(kept.completion.errors))

    async def _wait(self, flight: asyncio.Future) -> None:
        """Wait for another asker's call, counted in :attr:`waiting`; a cancelled waiter leaves
        the call in flight (``shield``)."""
        self._waiting(+1)
        try:
            await asyncio.shield(flight)
        finally:
            self._waiting(-1)

    def _waiting(self, change: int) -> None:
        self.waiting += change
        if self.listener is not None:
            self.listener()
