"""Helpers for tests: run madeval in-process against an endpoint.

The scripted LLM and the in-process debate are madeval.testing's, the ones plugin authors get.
"""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

from madeval.evaluation import run
from madeval.settings.config import DebateConfig, RunSettings
from madeval.testing import ScriptedLLM, debate  # noqa: F401  (the tests import them from here)


def run_quietly(settings: RunSettings):
    """Run madeval in-process without the progress bar; return the result and the printed text."""
    out = io.StringIO()
    result = run(settings, show_progress=False, out=out)
    return result, out.getvalue()


def settings_for(base_url: str, tmp_path, **overrides) -> RunSettings:
    """Run settings against ``base_url`` with one configuration built from the debate keys."""
    debate_keys = set(DebateConfig.__dataclass_fields__)
    debate_options = {k: v for k, v in overrides.items() if k in debate_keys}
    run_options = {k: v for k, v in overrides.items() if k not in debate_keys}
    run_options.setdefault("output_path", str(tmp_path / "run"))
    run_options.setdefault("tasks", ["arith_mc"])
    return RunSettings(base_url=base_url, configurations=[DebateConfig(**debate_options)], **run_options)


def cache_key_record(base_url: str, cache_path: Path) -> dict:
    """What the response cache's keying records (and says on stderr) for the model ``simulator``
    at ``base_url``, with a cache file at ``cache_path``: a client opened and closed around it."""
    from madeval.debate.session import ModelRef
    from madeval.llm.cache import ResponseCache
    from madeval.llm.client import Endpoint, LLMClient
    from madeval.run.cache_key import key_cache

    async def keyed(cache):
        client = LLMClient({"e": Endpoint("e", base_url)})
        try:
            return await key_cache(client, [ModelRef("simulator", "e")], cache)
        finally:
            await client.aclose()

    cache = ResponseCache(cache_path)
    try:
        return asyncio.run(keyed(cache))
    finally:
        cache.close()
