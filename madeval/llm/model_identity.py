"""Which model a ``/models`` entry describes: the one list of the fields that do not say so.

Three places ask what an endpoint reports about a model: the response cache's keys
(:mod:`madeval.llm.cache`), the cache's warning about a model it cannot tell apart
(:mod:`madeval.run.cache_key`) and a run folder's fingerprint (:mod:`madeval.run.resume`). They
all read :func:`served_identity`, so they agree on what makes two models different.

Everything an entry says identifies the model except :data:`NOT_IDENTIFYING`:

- ``id`` is the name, which every key and fingerprint already holds;
- ``object`` is always ``"model"``;
- ``created`` is the time of the request on vLLM (and of the last pull on Ollama);
- ``owned_by`` names the server software or the organisation (``vllm``, ``llamacpp``, ``openai``);
- ``permission`` is vLLM's list of permission cards, each with a fresh random ``id`` and the time
  of the request: kept in a key, no two runs would ever share a reply.

``parent`` *does* identify the model: vLLM lists a LoRA adapter with ``root`` (the adapter's path)
and ``parent`` (the base model it was trained on). The same adapter name over another base model,
or a fine-tune re-trained from another base and served under the old name, gives other answers:
another model. Likewise ``root``, ``max_model_len`` (vLLM), ``meta`` (llama.cpp: parameters,
vocabulary, training context) and ``fingerprint`` (madeval's simulator), and any field a server
adds that is not listed here (unknown fields err on the side of a cache miss or a refused resume,
never of answers from another model).

An entry is untrusted input like a reply: what the keys, ``run.json`` and the fingerprint hold of it
is :func:`bounded_identity`, the entry itself while its JSON is at most :data:`MAX_IDENTITY_BYTES`
(every real server's is far smaller) and its SHA-256 beyond that, computed once per model (a 12 MB
entry was re-serialised into every call's cache key, 30 ms a call, and written into ``run.json``
twice).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

#: ``/models`` fields that do not tell one model from another (see the module's docstring).
NOT_IDENTIFYING = frozenset({"id", "object", "created", "owned_by", "permission"})
#: How madeval's simulator begins the ``fingerprint`` of its ``/models`` entries (and each reply's
#: ``system_fingerprint``): a run whose ``run.json`` lists a model so was answered by synthetic agents.
SIMULATOR_FINGERPRINT = "fp_sim_"
#: The name the simulator answers to when a run names no model.
SIMULATOR_MODEL = "simulator"


def simulated_models(models: Any, used: set[str]) -> list[str]:
    """Which of the model names ``used`` madeval's simulator answered, by what a ``run.json``'s
    ``models`` list (``models``) says of them: a simulator fingerprint, or (a run that listed no
    models) the simulator's own name. Sorted."""
    listed = models if isinstance(models, list) else []
    found = {str(entry.get("model")) for entry in listed if isinstance(entry, dict)
             and str(entry.get("fingerprint") or "").startswith(SIMULATOR_FINGERPRINT)}
    return sorted(name for name in used if name in found or name == SIMULATOR_MODEL)

#: The JSON of an identity kept whole at most (vLLM's is about 100 bytes, llama.cpp's ``meta`` 200).
MAX_IDENTITY_BYTES = 4096


def served_identity(entry: dict[str, Any] | None) -> dict[str, Any] | None:
    """What a ``/models`` entry says about a model beyond its name, without the fields in
    :data:`NOT_IDENTIFYING`; ``None`` when it says nothing more (or is not an entry)."""
    if not isinstance(entry, dict):
        return None
    identity = {key: value for key, value in entry.items() if key not in NOT_IDENTIFYING}
    return identity or None


def bounded_identity(identity: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the cache keys, ``run.json`` and a run's fingerprint hold of ``identity`` (a
    :func:`served_identity`): itself when its JSON is at most :data:`MAX_IDENTITY_BYTES`, else
    ``{"sha256": ..., "bytes": ...}`` of that JSON (keys sorted), which tells two entries apart as
    well; ``None`` stays ``None``."""
    if identity is None:
        return None
    text = json.dumps(identity, sort_keys=True, ensure_ascii=False, default=str).encode("utf-8", "backslashreplace")
    if len(text) <= MAX_IDENTITY_BYTES:
        return identity
    return {"sha256": hashlib.sha256(text).hexdigest(), "bytes": len(text)}
