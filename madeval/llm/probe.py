"""The probe calls: short chat requests that show how fast a model answers and what the server says
about it (``system_fingerprint``). The first (:data:`PROBE_PROMPT`, a word of reply) is sent by
:meth:`madeval.llm.client.LLMClient.probe` before a run that may be long or uses the response cache;
the second (:data:`SPEED_PROMPT`, a reply of :data:`SPEED_TOKENS` tokens) times the reply's tokens,
so that a run's estimate can say how long a reply of its ``max_tokens`` takes (:class:`Speed`). The
simulator answers both as any model would."""

from __future__ import annotations

from dataclasses import dataclass

#: What the probe asks: answerable by any chat model in a token or two.
PROBE_PROMPT = "Reply with the single word OK."
PROBE_MESSAGES = [{"role": "user", "content": PROBE_PROMPT}]
#: The probe's sampling parameters: a few tokens, greedy.
PROBE_PARAMS = {"max_tokens": 8, "temperature": 0.0}
#: What the speed probe asks: any chat model writes more than :data:`SPEED_TOKENS` tokens of it.
SPEED_PROMPT = "Write a long story about a lighthouse keeper."
SPEED_MESSAGES = [{"role": "user", "content": SPEED_PROMPT}]
#: Tokens the speed probe's reply may have: enough to time a token, few enough to cost a second or so.
SPEED_TOKENS = 32
SPEED_PARAMS = {"max_tokens": SPEED_TOKENS, "temperature": 0.0}


@dataclass(frozen=True)
class Probe:
    """What one short call to a model showed: its latency, the reply's ``system_fingerprint`` and
    the tokens of its reply."""

    latency_s: float
    system_fingerprint: str | None
    tokens: int = 1


@dataclass(frozen=True)
class Speed:
    """How long a model's calls take: ``overhead_s`` before the reply's first token (the request,
    reading a short prompt) and ``per_token_s`` for each token of the reply. A debate's prompts are
    longer than the probes', so its calls also spend time reading them: an estimate from this is
    short of it by that much."""

    overhead_s: float
    per_token_s: float

    def call_s(self, max_tokens: int) -> float:
        """Seconds a call takes whose reply uses all of its ``max_tokens``."""
        return self.overhead_s + self.per_token_s * max_tokens

    @classmethod
    def measured(cls, long: tuple[float, int], short: tuple[float, int]) -> Speed:
        """The speed two calls show, each ``(seconds, reply tokens)``: the speed probe's, then the short
        probe's. Their difference is the time of the extra tokens. When the long reply came back no
        slower, its tokens cost nothing that can be measured: every call takes the short one's time.
        When it was no longer (a model that stopped early), its time is spread over its tokens: an
        estimate too long, never too short."""
        (long_s, long_tokens), (short_s, short_tokens) = long, short
        long_tokens, short_tokens = max(long_tokens, 1), max(short_tokens, 1)
        if long_tokens <= short_tokens:
            return cls(0.0, long_s / long_tokens)
        if long_s <= short_s:
            return cls(short_s, 0.0)
        per_token = (long_s - short_s) / (long_tokens - short_tokens)
        return cls(max(short_s - per_token * short_tokens, 0.0), per_token)
