"""MADC's allocation strategies: the order of the peers' solutions in one agent's prompt.

Each function takes the peers' parsed answers (``None`` for an answer that could not be parsed),
in agent-index order, and returns the positions of the peers in the order they are shown. Sorting
is stable, so peers with the same key keep agent-index order (as Python's ``sorted`` in the
authors' code, SG-XM/AAAI2026-MADC ``debate_bbh_qwen3b.py``; methods.md section 2.2):

=============  ========================  ==================================================
strategy       code action               order
=============  ========================  ==================================================
fixed          ``exchange``              agent-index order
random         ``exchangeN``             a fresh shuffle per receiving agent and turn
truth_first    ``exchangeI2``            peers holding the gold answer first (oracle)
truth_last     ``exchangeI4``            peers holding the gold answer last (oracle)
madc           ``exchangeI61``           ascending count of the peer's answer among the peers:
                                         the most-agreed answer is shown last
=============  ========================  ==================================================

An unparsed answer never matches the gold answer and, for ``madc``, counts as a unique placeholder
``(None)<position>`` (the authors' I61 fix), so it is never dropped and answers stay aligned with
their solutions.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Callable

STRATEGIES = ("fixed", "random", "truth_first", "truth_last", "madc")
ORACLES = ("truth_first", "truth_last")


def order_fixed(answers: list[str | None]) -> list[int]:
    """Agent-index order."""
    return list(range(len(answers)))


def order_random(answers: list[str | None], rng: random.Random) -> list[int]:
    """A uniformly random order drawn from ``rng``."""
    order = list(range(len(answers)))
    rng.shuffle(order)
    return order


def order_truth(answers: list[str | None], is_gold: Callable[[str], bool], first: bool) -> list[int]:
    """Peers holding the gold answer first (``first``) or last; the others keep their order."""
    def holds_gold(position: int) -> bool:
        answer = answers[position]
        return answer is not None and is_gold(answer)

    return sorted(range(len(answers)), key=holds_gold, reverse=first)


def consistency_keys(answers: list[str | None]) -> list[str]:
    """The answers with each unparsed one replaced by the unique placeholder ``(None)<k>`` (k from 1)."""
    return [a if a is not None else f"(None){k}" for k, a in enumerate(answers, start=1)]


def order_madc(answers: list[str | None]) -> list[int]:
    """Ascending count of each peer's answer among the peers: the most-agreed answer comes last."""
    keys = consistency_keys(answers)
    counts = Counter(keys)
    return sorted(range(len(answers)), key=lambda position: counts[keys[position]])
