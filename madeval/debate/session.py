"""LLM access bound to one debate: the :class:`madeval.core.components.DebateLLM` the components use.

It knows each agent's model and endpoint, derives each agent's seed from (run seed, item, repeat,
agent), scopes the cache to (item, repeat, agent, turn, purpose, re-ask), sends each call's routing
key (:mod:`madeval.llm.routing`), asks as its unit's :class:`~madeval.llm.shared.Asker` (so that an
identical call of another configuration's debate is made once) and records every call with its
purpose, tokens and latency in the transcript, and the debate it reused the reply of, if any.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from madeval.core.transcript import Call, Transcript
from madeval.llm.client import LLMClient
from madeval.llm.routing import RoutingKey, digest_parts
from madeval.llm.shared import Asker
from madeval.llm.structured import ReplySchema


@dataclass(frozen=True)
class ModelRef:
    """Which model, on which endpoint (a name from the run's endpoint table)."""

    model: str
    endpoint: str


def derive_seed(*parts: Any) -> int:
    """A stable 31-bit seed from any parts (the same parts always give the same seed)."""
    return int.from_bytes(digest_parts(*parts)[:4], "big") & 0x7FFFFFFF


class DebateSession:
    """Implements ``DebateLLM.chat`` for one (configuration, task, item, repeat) unit."""

    def __init__(
        self,
        client: LLMClient,
        *,
        agents: list[ModelRef],
        judge: ModelRef,
        generation: dict[str, Any],
        run_seed: int,
        item_id: str,
        repeat: int,
        transcript: Transcript,
        routing: RoutingKey | None = None,
        asker: Asker | None = None,
    ):
        self.client = client
        self.agents = agents
        self.judge = judge
        self.generation = generation
        self.run_seed = run_seed
        self.item_id = item_id
        self.repeat = repeat
        self.transcript = transcript
        self.routing = routing  # None: no routing header
        self.asker = asker  # None: no call of this debate is shared
        self._finished_depth = 0

    def seed(self, agent: int | None, nonce: int = 0) -> int:
        """The sampling seed of ``agent`` in this unit (``None``: the judge)."""
        who = "judge" if agent is None else agent
        return derive_seed(self.run_seed, self.item_id, self.repeat, who, nonce)

    async def chat(
        self,
        agent: int | None,
        messages: list[dict[str, str]],
        *,
        purpose: str,
        nonce: int = 0,
        max_tokens: int | None = None,
        reply: ReplySchema | None = None,
    ) -> str:
        """Send ``messages`` as ``agent`` and return the reply text; the call is recorded.

        ``reply``: ask for the reply in that JSON schema (see :meth:`LLMClient.complete`)."""
        ref = self.judge if agent is None else self.agents[agent]
        params = dict(self.generation)
        params["seed"] = self.seed(agent, nonce)
        if max_tokens is not None:
            params["max_tokens"] = max_tokens
        turn = self.transcript.turns_used
        scope = (self.item_id, self.repeat, "judge" if agent is None else agent, turn, purpose, nonce)
        depth = self._finished_depth + 1
        headers = None if self.routing is None else self.routing.headers(agent)
        completion = await self.client.complete(ref.endpoint, ref.model, messages, params, scope, headers, reply,
                                                self.asker)
        self._finished_depth = max(self._finished_depth, depth)
        self.transcript.calls.append(
            Call(
                purpose=purpose,
                agent=agent,
                turn=turn,
                model=ref.model,
                endpoint=ref.endpoint,
                prompt_tokens=completion.prompt_tokens,
                completion_tokens=completion.completion_tokens,
                latency_s=round(completion.latency_s, 4),
                attempts=completion.attempts,
                cached=completion.cached,
                errors=completion.errors,
                depth=depth,
                cached_prompt_tokens=completion.cached_prompt_tokens,
                transport=completion.transport,
                shared_from=completion.shared_from,
            )
        )
        return completion.text
