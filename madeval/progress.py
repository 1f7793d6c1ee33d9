"""The progress bar: units done, LLM calls, tokens, errors and the ETA, on standard error."""

from __future__ import annotations

import sys

from tqdm import tqdm

from .llm.client import ClientStats


class Progress:
    """A tqdm bar over work units with call, token and error counts."""

    def __init__(self, total: int, done: int, stats: ClientStats, *, enabled: bool = True):
        self.stats = stats
        self.errors = 0
        self.bar = tqdm(
            total=total,
            initial=done,
            unit="unit",
            desc="debates",
            disable=not enabled,
            file=sys.stderr,
            dynamic_ncols=True,
            mininterval=0.5,
        )

    def _refresh(self) -> None:
        if self.bar.disable:
            return
        stats = self.stats
        tokens = stats.prompt_tokens + stats.completion_tokens
        self.bar.set_postfix_str(
            f"calls={stats.calls} cached={stats.cached} tokens={tokens} "
            f"retries={stats.retries} errors={self.errors}",
            refresh=False,
        )

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
        """Stop drawing."""
        self.bar.close()
