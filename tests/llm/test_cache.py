"""The response cache: stable keys, and when a stored reply becomes visible to other processes."""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3

from madeval.llm.cache import COMMIT_DELAY_S, CachedReply, ResponseCache, request_key


def rows_seen_by_another_connection(path) -> int:
    with sqlite3.connect(str(path)) as other:
        return other.execute("SELECT COUNT(*) FROM replies").fetchone()[0]


def test_a_reply_keeps_its_original_cost_and_fingerprint(tmp_path):
    cache = ResponseCache(tmp_path / "responses.sqlite")
    cache.put("a", "text", 12, 34, 1.25, "fp_x")
    cache.put("b", "other", 1, 2)
    assert cache.get("a") == CachedReply("text", 12, 34, 1.25, "fp_x")
    assert cache.get("b") == CachedReply("other", 1, 2, 0.0, None)
    cache.put("a", "newer", 5, 6, 0.5, "fp_y", replace=True)  # a stale reply is replaced
    assert cache.get("a") == CachedReply("newer", 5, 6, 0.5, "fp_y")
    cache.close()


def test_request_key_is_the_sha256_of_the_sorted_json_of_request_and_scope():
    request = {"model": "m", "messages": [{"role": "user", "content": "Zürich?"}], "seed": 3}
    scope = ("item-7", 1, 0, 2, "vote", 0)
    text = ('[{"messages": [{"content": "Zürich?", "role": "user"}], "model": "m", "seed": 3}, '
            '["item-7", 1, 0, 2, "vote", 0]]')
    assert request_key(request, scope) == hashlib.sha256(text.encode("utf-8")).hexdigest()
    # repeats (and any other part of the scope) get their own key
    assert request_key(request, ("item-7", 2, 0, 2, "vote", 0)) != request_key(request, scope)


def test_writes_on_an_event_loop_are_committed_together_shortly_after(tmp_path):
    path = tmp_path / "responses.sqlite"
    cache = ResponseCache(path)

    async def main():
        cache.put("a", "A", 1, 2)
        cache.put("b", "B", 1, 2)
        # visible to this process at once, to others once committed
        assert cache.get("a")[:3] == ("A", 1, 2) and len(cache) == 2
        assert rows_seen_by_another_connection(path) == 0
        await asyncio.sleep(COMMIT_DELAY_S * 3)
        assert rows_seen_by_another_connection(path) == 2
        cache.put("c", "C", 1, 2)  # a new batch schedules a new commit

    asyncio.run(main())
    assert rows_seen_by_another_connection(path) == 2  # the loop ended before that commit was due

    async def next_run():  # a new loop schedules its own commit, which takes "c" along
        cache.put("d", "D", 1, 2)
        await asyncio.sleep(COMMIT_DELAY_S * 3)
        cache.put("e", "E", 1, 2)

    asyncio.run(next_run())
    assert rows_seen_by_another_connection(path) == 4
    cache.close()  # commits what was still due
    assert rows_seen_by_another_connection(path) == 5


def test_writes_without_an_event_loop_commit_at_once_and_the_first_reply_wins(tmp_path):
    path = tmp_path / "responses.sqlite"
    cache = ResponseCache(path)
    cache.put("a", "first", 1, 2)
    assert rows_seen_by_another_connection(path) == 1
    cache.put("a", "second", 5, 5)
    assert cache.get("a")[:3] == ("first", 1, 2)
    cache.close()
    cache.close()  # closing twice is harmless
