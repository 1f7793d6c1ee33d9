"""JSON as madeval writes it everywhere: UTF-8, with text a model wrote kept readable."""

from __future__ import annotations

import json
from typing import Any


def encode_json(value: Any) -> bytes:
    """``value`` as JSON in UTF-8. Text from a model may hold lone surrogates, which UTF-8 cannot
    encode: they are written as JSON escapes (``\\ud800``), which read back as the same text.
    Records (:func:`madeval.records.folder.encode_line`) and the response cache
    (:func:`madeval.llm.cache.storable`) both write text so."""
    return json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", "backslashreplace")
