"""What makes one simulator behave like one serving replica: a bounded number of requests being
answered at once (the rest wait in a queue), a prefix cache over token blocks, and a prefill cost
for the prompt tokens the cache did not hold.

The cache follows vLLM's automatic prefix caching: a prompt is cut into full blocks of
``block_tokens`` tokens, each named by a hash of every token up to its end (so a block is only
found after the same prefix), the leading blocks found are reused, the others are computed and
kept, and the least recently used blocks are dropped beyond the token budget. Tokens are those of
:func:`madeval.llm.prefix_reuse.prompt_tokens`, so the bench's ideal reuse and the simulator count alike.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from typing import Protocol

from madeval.llm.prefix_reuse import prompt_tokens


class ReplicaStats(Protocol):
    """The counters a :class:`Replica` keeps (fields of the server's stats object)."""

    running: int
    peak_running: int
    queued: int
    prompt_tokens_computed: int
    prompt_tokens_cached: int
    cache_blocks: int


def block_hashes(tokens: Sequence[str], block_tokens: int) -> list[bytes]:
    """One digest per full block of ``tokens``, each covering every token up to the block's end."""
    digests, chained = [], b""
    for end in range(block_tokens, len(tokens) + 1, block_tokens):
        block = "\x00".join(tokens[end - block_tokens:end]).encode("utf-8", "surrogatepass")
        chained = hashlib.sha256(chained + b"\x01" + block).digest()  # the chain makes it prefix-dependent
        digests.append(chained)
    return digests


class PrefixCache:
    """Token blocks held within a budget, least recently used dropped first."""

    def __init__(self, budget_tokens: int, block_tokens: int = 16):
        if block_tokens < 1 or budget_tokens < 0:
            raise ValueError(f"block_tokens must be >= 1 and the budget >= 0: {block_tokens}, {budget_tokens}")
        self.block_tokens = block_tokens
        self.capacity_blocks = budget_tokens // block_tokens
        self._blocks: OrderedDict[bytes, None] = OrderedDict()  # oldest use first

    def __len__(self) -> int:
        return len(self._blocks)

    def admit(self, tokens: Sequence[str]) -> int:
        """Look ``tokens`` up, keep its blocks, and return how many leading tokens were cached."""
        digests = block_hashes(tokens, self.block_tokens)
        hits = 0
        while hits < len(digests) and digests[hits] in self._blocks:
            hits += 1
        for digest in digests:  # every block of the prompt is now the most recently used
            self._blocks[digest] = None
            self._blocks.move_to_end(digest)
        while len(self._blocks) > self.capacity_blocks:
            self._blocks.popitem(last=False)
        return hits * self.block_tokens


class Replica:
    """The concurrency slot, prefix cache and prefill cost around the answer to one chat request."""

    def __init__(self, stats: ReplicaStats, *, max_concurrency: int | None = None,
                 cache: PrefixCache | None = None, prefill_s_per_token: float = 0.0):
        if max_concurrency is not None and max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1: {max_concurrency}")
        if prefill_s_per_token < 0:
            raise ValueError(f"the prefill cost must be >= 0: {prefill_s_per_token}")
        self.stats = stats
        self.cache = cache
        self.prefill_s_per_token = prefill_s_per_token
        self._slots = asyncio.Semaphore(max_concurrency) if max_concurrency else None  # FIFO waiters

    async def serve(self, messages: list, delay_s: float) -> tuple[int, int] | None:
        """Wait for a slot, count the prompt's cached and computed tokens, then hold the slot for
        ``delay_s`` plus the prefill of the computed tokens; the prompt's (cached, all) tokens, or
        None without a prefix cache."""
        stats = self.stats
        if self._slots is not None:
            stats.queued += 1
            try:
                await self._slots.acquire()
            finally:
                stats.queued -= 1
        stats.running += 1
        stats.peak_running = max(stats.peak_running, stats.running)
        try:
            cached, total = self._account(messages)
            await asyncio.sleep(delay_s + (total - cached) * self.prefill_s_per_token)
            return None if self.cache is None else (cached, total)
        finally:
            stats.running -= 1
            if self._slots is not None:
                self._slots.release()

    def admit(self, messages: list) -> tuple[int, int] | None:
        """Count the prompt's tokens as cached or computed; its (cached, all) tokens, or None
        without a prefix cache (the server then reports no cached tokens: unknown, as vLLM does)."""
        counted = self._account(messages)
        return None if self.cache is None else counted

    def _account(self, messages: list) -> tuple[int, int]:
        """Count the prompt's tokens as cached or computed; its (cached, all) tokens."""
        tokens = prompt_tokens(_plain_messages(messages))
        cached = self.cache.admit(tokens) if self.cache is not None else 0
        stats = self.stats
        stats.prompt_tokens_cached += cached
        stats.prompt_tokens_computed += len(tokens) - cached
        stats.cache_blocks = len(self.cache) if self.cache is not None else 0
        return cached, len(tokens)


def _plain_messages(messages: list) -> list[dict[str, str]]:
    """The messages as role and text strings, whatever shape a behaviour accepted: OpenAI content
    parts (``[{"type": "text", "text": ...}]``) become their texts joined, anything else no text."""
    plain = []
    for message in messages if isinstance(messages, list) else []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, list):
            content = " ".join(part["text"] for part in content
                               if isinstance(part, dict) and isinstance(part.get("text"), str))
        plain.append({"role": str(message.get("role", "")), "content": content if isinstance(content, str) else ""})
    return plain
