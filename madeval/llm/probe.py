"""The probe call: one short chat request that shows how fast a model answers and what the server
says about it (``system_fingerprint``). Sent by :meth:`madeval.llm.client.LLMClient.probe` before a
run that may be long or uses the response cache; the simulator answers it as any model would."""

from __future__ import annotations

from dataclasses import dataclass

#: What the probe asks: answerable by any chat model in a token or two.
PROBE_PROMPT = "Reply with the single word OK."
PROBE_MESSAGES = [{"role": "user", "content": PROBE_PROMPT}]
#: The probe's sampling parameters: a few tokens, greedy.
PROBE_PARAMS = {"max_tokens": 8, "temperature": 0.0}


@dataclass(frozen=True)
class Probe:
    """What one short call to a model showed: its latency and the reply's ``system_fingerprint``."""

    latency_s: float
    system_fingerprint: str | None
