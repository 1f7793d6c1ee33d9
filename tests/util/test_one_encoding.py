"""One way to write model text as JSON (records and the response cache) and one way to collapse
white space (item matching and import messages), each tested on the text that needs it."""

from __future__ import annotations

import json

from madeval.importers.base import short
from madeval.importers.matching import collapse
from madeval.llm.cache import ResponseCache, storable
from madeval.records.folder import encode_line
from madeval.util.json_text import encode_json

BROKEN_EMOJI = "\ud83d"  # a lone surrogate: half of an emoji cut by a gateway; UTF-8 cannot encode it


def test_a_lone_surrogate_is_written_as_its_json_escape_by_records_and_the_cache():
    text = f"Final Solution: B {BROKEN_EMOJI}"
    assert encode_json(text) == b'"Final Solution: B \\ud83d"'
    assert storable(text) == encode_json(text).decode("utf-8") == '"Final Solution: B \\ud83d"'
    assert json.loads(storable(text)) == text  # reads back as the same text
    assert encode_line({"reply": text}) == b'{"reply": "Final Solution: B \\ud83d"}\n'
    assert json.loads(encode_line({"reply": text}))["reply"] == text
    assert storable("é ✓") == '"é ✓"'  # other text stays as it is (UTF-8, not escaped)


def test_the_cache_stores_and_serves_a_reply_with_a_lone_surrogate(tmp_path):
    cache = ResponseCache(tmp_path / "cache.sqlite")
    try:
        cache.put("key", f"A {BROKEN_EMOJI}", 3, 2, 0.5)
        assert cache.get("key").text == f"A {BROKEN_EMOJI}"
    finally:
        cache.close()


def test_import_messages_collapse_white_space_as_item_matching_does():
    hostile = "a\n\t b\u00a0\u2028c\x1b[31m <b>"
    assert collapse(hostile) == "a b c\x1b[31m <b>"
    assert short(hostile) == json.dumps(collapse(hostile), ensure_ascii=True)  # control characters escaped
    assert short("x " * 50, limit=7) == '"x x x x..."'
