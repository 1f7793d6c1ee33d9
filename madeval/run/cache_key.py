"""Opening the response cache for a run, and saying what its replies are keyed on.

The cache is opt-in (``--cache on`` or ``--cache FILE``): a run folder already makes re-runs and
resumes free, and a shared cache keyed only by URL, model name and request would hand a restarted
server's old answers to a new run. When it is on, every model a run uses is identified by what its
endpoint reports: its ``/models`` entry (llama.cpp's ``meta``, vLLM's ``max_model_len``, the
simulator's ``fingerprint``) enters every key, and a probe call's ``system_fingerprint`` is compared
with each stored reply's. A model its endpoint says nothing about is named in a warning: the cache
cannot tell a different model served under the same name.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from madeval.errors import LLMError, UsageError
from madeval.llm.cache import ResponseCache
from madeval.llm.model_identity import bounded_identity, served_identity
from madeval.util.cache_dir import cache_root
from madeval.util.shown_text import terminal_text

#: What every key holds, as said to the user.
KEY_PARTS = "endpoint URL, model name, messages, sampling parameters, seed and place in the debate"


def default_cache_path() -> Path:
    """``$MADEVAL_CACHE_DIR/responses.sqlite``, else ``~/.cache/madeval/responses.sqlite``."""
    return cache_root() / "responses.sqlite"


def cache_path(setting: str | None) -> Path | None:
    """The cache file of a ``--cache`` value: ``None`` for ``off`` (the default), the default file
    for ``on``, else the value as a path."""
    if setting is None or setting.strip().lower() in ("off", ""):
        return None
    if setting.strip().lower() == "on":
        return default_cache_path()
    return Path(setting).expanduser()


def open_cache(setting: str | None) -> ResponseCache | None:
    """The run's response cache, or ``None`` when off; a one-line UsageError when it cannot be used."""
    path = cache_path(setting)
    return None if path is None else ResponseCache(path)


async def key_cache(client: Any, refs: list[Any], cache: ResponseCache) -> dict[str, Any]:
    """Identify every model of ``refs`` (:class:`madeval.debate.session.ModelRef`) by what its endpoint
    reports, for the cache keys; say on stderr what the cache is keyed on, and warn about each model
    it cannot tell apart from another served under the same name. Returns what run.json keeps.

    A probe call that the endpoint refuses (404, 400: a re-run cannot fix it) is a one-line
    UsageError before anything is written; one that fails otherwise leaves the fingerprint unknown."""
    models = []
    for ref in dict.fromkeys((ref.endpoint, ref.model) for ref in refs):
        endpoint, model = ref
        await client.model_cards(endpoint)  # read once per endpoint, kept by id in client.model_entries
        served = served_identity(client.model_entries[endpoint].get(model))
        kept = bounded_identity(served)  # once per model: a huge entry enters every key as its digest
        client.identify(endpoint, model, kept)
        try:
            fingerprint = (await client.probe(endpoint, model)).system_fingerprint
        except LLMError as error:
            if not error.retryable:
                raise UsageError(f"a test call to model {model} failed: {error}") from None
            fingerprint = None
        fields = sorted(map(str, served or {}))  # each identifies the model (madeval.llm.model_identity)
        models.append({"endpoint": endpoint, "model": model, "models_entry": kept,
                       "system_fingerprint": fingerprint, "told_apart": bool(fields or fingerprint)})
        told = [f"its /models entry ({_listed(fields)})"] * bool(fields)
        told += [f"system_fingerprint {fingerprint}"] * bool(fingerprint)
        if told:
            print(f"madeval: response cache {cache.path}: replies of {model}@{endpoint} are reused when the "
                  f"{KEY_PARTS} match, and {' and '.join(told)}", file=sys.stderr)
        else:
            print(f"madeval: warning: response cache {cache.path}: endpoint '{endpoint}' reports nothing about "
                  f"model {model} beyond its name (no /models details, no system_fingerprint), so the cache "
                  f"cannot tell a different model served under that name: its stored replies would be reused "
                  f"(use --cache off when the model may have changed)", file=sys.stderr)
    return {"file": str(cache.path), "keyed_on": KEY_PARTS, "models": models}


def _listed(fields: list[str], shown: int = 6) -> str:
    """The first ``shown`` field names of an entry, each cut to 40 characters, and how many more:
    an endpoint's entry may have any number of fields, of any length, with any characters."""
    names = [terminal_text(name if len(name) <= 40 else name[:37] + "...") for name in fields[:shown]]
    return ", ".join(names) + (f" and {len(fields) - shown} more" if len(fields) > shown else "")
