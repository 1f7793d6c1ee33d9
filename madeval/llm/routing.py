"""The routing key: a request header that lets a router pin each conversation to one replica.

Every turn of a debate re-sends the same growing conversation, so a router that keeps an agent's
calls on the replica that served its last turn lets that replica's prefix cache skip most of the
prompt. Routers' consistent-hash policies read the key from a header (checked in their sources
and in the binaries of the PyPI wheels vllm-router 0.1.17 and sglang-router 0.3.2):

* vllm-router ``--policy consistent_hash`` reads ``X-Session-ID`` first (``x-session-id`` heads
  ``SESSION_HEADER_NAMES`` in vllm-project/router ``src/policies/hash_key.rs``);
* sglang-router's ``consistent_hashing`` policy reads ``X-SMG-Routing-Key``
  (``HEADER_ROUTING_KEY`` in sgl-project's ``src/policies/consistent_hashing.rs``); without it,
  that policy hashes the ``Authorization`` header, which pins a whole run to one replica. The
  0.3.2 command line does not offer that policy; its ``--policy manual`` reads the same header
  and keeps each key on one worker (tests/llm/test_fleet_routers.py checks it).

The key is a short hex digest of the unit (configuration id, task, item id, repeat) and the agent
(or ``judge``), so it is the same on every resume and repeat of a command, differs between
debates and agents, and carries neither a secret nor prompt text. It is never part of the
response cache key.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

#: The header vllm-router's ``consistent_hash`` policy reads (the default).
VLLM_ROUTER_HEADER = "X-Session-ID"
#: The header sglang-router's ``consistent_hashing`` and ``manual`` policies read.
SGLANG_ROUTER_HEADER = "X-SMG-Routing-Key"
#: The header values that send no routing key at all.
NO_HEADER = ("off", "")
#: One key per (debate, agent), or one key per debate shared by its agents and judge.
GRAINS = ("agent", "debate")
#: Hex digits of the key: 64 bits, so distinct debates and agents do not collide in practice.
KEY_HEX_DIGITS = 16

# An HTTP field name is a token (RFC 9110, section 5.1).
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")


def digest_parts(*parts: Any) -> bytes:
    """The SHA-256 digest of ``parts`` joined by a separator no part contains in practice."""
    return hashlib.sha256("\x1f".join(str(part) for part in parts).encode()).digest()


def header_name_problem(name: str) -> str | None:
    """What is wrong with ``name`` as the routing header's name (``off`` or empty: no header)."""
    if name.strip().lower() in NO_HEADER or _TOKEN.fullmatch(name):
        return None
    return f"must be an HTTP header name (letters, digits, '-') or 'off', got '{name}'"


@dataclass(frozen=True)
class RoutingKey:
    """The routing header one debate sends: its name, the grain, and the debate's unit key."""

    header: str
    grain: str
    unit: tuple[Any, ...]  # (configuration id, task, item id, repeat)

    @classmethod
    def for_unit(cls, header: str | None, grain: str, unit: tuple[Any, ...]) -> RoutingKey | None:
        """The routing key of ``unit``, or ``None`` when ``header`` is ``off``, empty or unset."""
        if header is None or header.strip().lower() in NO_HEADER:
            return None
        return cls(header.strip(), grain, tuple(unit))

    def value(self, agent: int | None) -> str:
        """The key sent with ``agent``'s calls (``None``: the judge)."""
        parts = self.unit if self.grain == "debate" else (*self.unit, "judge" if agent is None else agent)
        return digest_parts(*parts).hex()[:KEY_HEX_DIGITS]

    def headers(self, agent: int | None) -> dict[str, str]:
        """The per-call header carrying ``agent``'s key."""
        return {self.header: self.value(agent)}
