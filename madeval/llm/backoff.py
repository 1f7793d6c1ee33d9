"""Backing off an endpoint as a whole when it says it is overloaded (HTTP 429).

Each endpoint has one :class:`EndpointGate`, shared by every request to it, in place of a fixed
semaphore. It admits at most ``limit`` requests at once and adapts the limit the way TCP adapts
its window (AIMD): it starts at :data:`INITIAL_LIMIT` and grows by one slot per success (slow
start: it doubles every window of requests) up to the configured concurrency, so a rate-limited
endpoint is not hit by the whole concurrency at once; after the first 429, a 429 halves it (at
least 1) and every success adds ``1/limit`` (one slot per window of successes). A 429 with a ``Retry-After`` also pauses
the whole endpoint until then: requests waiting for a slot, and the retries, go out after it,
instead of each request learning about the limit by being refused in turn.

Only one halving per window: a 429 answered to a request sent before the last halving says
nothing new (it was sent under the old limit), so a burst of refusals halves the limit once. And
no growth for a while after a halving (:data:`SETTLE_S`, or the Retry-After if longer): a quota
refills during a pause, so the first successes after it say little about the rate it allows.
"""

from __future__ import annotations

import asyncio
import collections
import time

#: The longest pause one 429 can impose on an endpoint (a call waits no longer than its deadline anyway).
MAX_PAUSE_S = 600.0
#: The limit a gate starts at (or the configured concurrency when lower); slow start doubles it
#: every window of successful requests, so a fast endpoint gets the full concurrency within a few
#: round trips.
INITIAL_LIMIT = 4
#: Seconds after a halving (at least; the Retry-After when longer) before the limit grows again.
SETTLE_S = 1.0


class EndpointGate:
    """At most ``limit`` requests in flight to one endpoint, the limit adapted to 429s (AIMD).

    Waiters queue in order; a released slot wakes as many of them as there are free slots, so a
    release costs O(1) however many debates wait. :meth:`release` is synchronous: it runs in a
    ``finally`` also when the call is cancelled, and cannot be cancelled itself."""

    def __init__(self, maximum: int, *, slow_start: bool = True):
        """``maximum``: the configured concurrency; without ``slow_start`` the gate opens at it at
        once (it still halves on 429s and grows back)."""
        self.maximum = max(1, maximum)
        #: The current limit (a float: additive increase adds fractions of a slot).
        self.limit = float(min(self.maximum, INITIAL_LIMIT) if slow_start else self.maximum)
        self._slow_start = slow_start  # until the first 429: one slot more per success
        self.in_flight = 0
        #: Counts for the benchmark: 429s seen, and how often the limit was halved.
        self.rate_limited = 0
        self.halvings = 0
        self._paused_until = 0.0
        self._window = 0  # incremented at every halving; a request remembers the window it was sent in
        self._grow_after = 0.0  # no growth before this time (see SETTLE_S)
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()
        self._timer: asyncio.TimerHandle | None = None

    def _open(self) -> bool:
        return self.in_flight < int(self.limit) and self._paused_until <= time.monotonic()

    async def acquire(self) -> int:
        """Wait for a slot (and for any pause to end); return the window the request goes out in."""
        while not self._open():
            waiter = asyncio.get_running_loop().create_future()
            self._waiters.append(waiter)
            self._wake()  # starts the timer that ends a pause
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter.done() and not waiter.cancelled():
                    self._wake()  # woken and cancelled at once: pass the slot on
                raise
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
        self.in_flight += 1
        return self._window

    def release(self, window: int, *, ok: bool = False, rate_limited: bool = False,
                retry_after: float | None = None) -> None:
        """Give the slot back, telling how the request went: ``ok`` grows the limit by ``1/limit``;
        ``rate_limited`` halves it (once per window) and pauses the endpoint ``retry_after`` seconds."""
        self.in_flight -= 1
        if rate_limited:
            self.rate_limited += 1
            now = time.monotonic()
            pause = min(retry_after or 0.0, MAX_PAUSE_S)
            if window == self._window:
                self._slow_start = False
                self.limit = max(1.0, self.limit / 2)
                self._window += 1
                self.halvings += 1
                self._grow_after = now + pause + max(SETTLE_S, pause)
            if pause:
                self._paused_until = max(self._paused_until, now + pause)
        elif ok and time.monotonic() >= self._grow_after:
            grown = self.limit + (1 if self._slow_start else 1 / self.limit)
            self.limit = min(float(self.maximum), grown)
        self._wake()

    def _wake(self) -> None:
        """Wake as many waiters as there are free slots; during a pause, wake them when it ends."""
        pause = self._paused_until - time.monotonic()
        if pause > 0:
            if self._timer is None and self._waiters:
                self._timer = asyncio.get_running_loop().call_later(pause, self._pause_over)
            return
        free = int(self.limit) - self.in_flight
        while free > 0 and self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                free -= 1

    def _pause_over(self) -> None:
        self._timer = None
        self._wake()
