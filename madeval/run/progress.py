"""The progress bar: units done, LLM calls, tokens, errors and the ETA, on standard error.

The bar moves when a unit finishes and also redraws as calls finish (at most
:data:`REDRAWS_PER_SECOND` times a second), so a slow model's long units do not look frozen.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

from tqdm import tqdm

from madeval.llm.client import ClientStats

#: How often, at most, finished calls redraw the bar.
REDRAWS_PER_SECOND = 4


class Progress:
    """A tqdm bar over work units with call, token and error counts."""

    def __init__(
        self,
        total: int,
        done: int,
        stats: ClientStats,
        *,
        enabled: bool = True,
        file: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.stats = stats
        self.errors = 0
        self._clock = clock
        self._drawn = float("-inf")
        self.bar = tqdm(
            total=total,
            initial=done,
            unit="unit",
            desc="debates",
            disable=not enabled,
            file=file or sys.stderr,
            dynamic_ncols=True,
            mininterval=0.5,
        )
        if enabled:
            stats.listener = self.call_finished

    def _refresh(self) -> None:
        if self.bar.disable:
            return
        stats = self.stats
        tokens = stats.prompt_tokens + stats.completion_tokens
        self.bar.set_postfix_str(
            f"calls={stats.calls} cached={stats.cached} shared={stats.shared} tokens={tokens} "
            f"retries={stats.retries} errors={self.errors}",
            refresh=False,
        )

    def call_finished(self) -> None:
        """A call (or attempt, or cache hit) finished: redraw, unless the bar was drawn moments ago."""
        now = self._clock()
        if now - self._drawn < 1 / REDRAWS_PER_SECOND:
            return
        self._drawn = now
        self._refresh()
        self.bar.refresh()

    def finished(self) -> None:
        """One more unit recorded."""
        self._refresh()
        self.bar.update(1)

    def failed(self) -> None:
        """One more unit failed for good."""
        self.errors += 1
        self._refresh()
        self.bar.update(1)

    def close(self) -> None:
        """Stop drawing (and stop listening to the call counts)."""
        if self.stats.listener == self.call_finished:
            self.stats.listener = None
        self.bar.close()
