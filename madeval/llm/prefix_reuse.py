"""How much of a debate's prompts an ideal prefix cache could skip.

A serving engine's prefix cache (vLLM's automatic prefix caching, SGLang's radix tree) skips the
prefill of a prompt's leading tokens when an earlier request began with the same tokens. The most
it can skip for one call is the longest common prefix of that call's prompt with any earlier
call's prompt; :func:`prefix_reuse` sums that over a debate's calls in the order they were sent.

Prompts are tokenised by :func:`prompt_tokens`, not by a model's tokenizer: madeval bundles none
but the embedded GGUF's, engines differ in their tokenizers and chat templates, and a *fraction*
of reusable tokens does not need exact token counts, only a split that keeps the same words in the
same order (a change anywhere in a word breaks the prefix at that word, as it would in any
tokenizer). Lives in madeval, not in ``bench/``, so that the simulator's prefix cache
can count the same tokens.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

#: A word (letters, digits, underscore) or one punctuation character; whitespace is dropped.
TOKEN = re.compile(r"\w+|[^\w\s]")


def prompt_tokens(messages: Iterable[Mapping[str, str]]) -> list[str]:
    """The chat messages rendered in order, each as its role then its content, split into tokens."""
    tokens: list[str] = []
    for message in messages:
        tokens.append(f"<{message['role']}>")  # one token no content can produce: messages stay apart
        tokens.extend(TOKEN.findall(message.get("content") or ""))
    return tokens


def common_prefix_length(first: Sequence[str], second: Sequence[str]) -> int:
    """How many leading tokens ``first`` and ``second`` share."""
    return len(os.path.commonprefix([first, second]))  # works on any sequences, not only paths


@dataclass(frozen=True)
class PrefixReuse:
    """Calls, their prompt tokens, and the tokens an ideal prefix cache could have skipped."""

    calls: int = 0
    prompt_tokens: int = 0
    reusable_tokens: int = 0

    @property
    def fraction(self) -> float:
        """Reusable tokens over prompt tokens (0 with no tokens)."""
        return self.reusable_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    def __add__(self, other: "PrefixReuse") -> "PrefixReuse":
        return PrefixReuse(self.calls + other.calls, self.prompt_tokens + other.prompt_tokens,
                           self.reusable_tokens + other.reusable_tokens)


def prefix_reuse(prompts: Sequence[Sequence[str]]) -> PrefixReuse:
    """The reuse over one debate's prompts (token lists, in the order they were sent).

    Each prompt may reuse its longest common prefix with any earlier prompt of the sequence; the
    first prompt reuses nothing.
    """
    reusable = 0
    for index, prompt in enumerate(prompts):
        reusable += max((common_prefix_length(prompt, earlier) for earlier in prompts[:index]), default=0)
    return PrefixReuse(len(prompts), sum(len(prompt) for prompt in prompts), reusable)
