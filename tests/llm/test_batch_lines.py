"""Reading a batch's output and error files: hostile lines fail their call, never the run."""

from __future__ import annotations

import json

import pytest

from madeval.llm.batch.lines import read_outcomes
from madeval.llm.batch.settings import BatchSettings, parse_batch_options
from madeval.llm.wire import FatalError, RetryableError


def line(custom_id, response=None, error=None) -> bytes:
    return json.dumps({"id": "batch_req_1", "custom_id": custom_id, "response": response, "error": error}).encode()


def chat(text, prompt=7, completion=3) -> dict:
    return {"status_code": 200, "request_id": "r", "body": {
        "choices": [{"message": {"role": "assistant", "content": text}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion}}}


def test_polite_and_failed_lines():
    content = b"\n".join([
        line("a", chat("Final Solution: B")),
        line("b", {"status_code": 429, "body": {"error": {"message": "slow down"}}}),
        line("c", {"status_code": 400, "body": {"error": {"message": "bad request"}}}),
        line("d", None, {"code": "batch_expired", "message": "window ran out"}),
    ])
    outcomes = read_outcomes(content, 1 << 20, "expired")
    assert outcomes["a"] == ("Final Solution: B", 7, 3)
    assert isinstance(outcomes["b"], RetryableError) and outcomes["b"].status == 429
    assert isinstance(outcomes["c"], FatalError) and "bad request" in str(outcomes["c"])
    assert isinstance(outcomes["d"], RetryableError) and str(outcomes["d"]) == "batch line batch_expired"


def test_hostile_lines():
    deep = b'{"custom_id": "deep", "response": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    content = b"\n".join([
        b"not json at all",
        b"[1, 2, 3]",
        deep,
        line(17, chat("id is a number")),
        line("huge", chat("x" * 5000)),
        line("markup", chat("<script>alert(1)</script>\x1b[31m\x00")),
        line("content-list", {"status_code": 200, "body": {"choices": [{"message": {"content": [1]}}]}}),
        line("body-text", {"status_code": 200, "body": "{\"choices\": ["}),
        b'{"custom_id": "cut", "response": {"status_co',
    ])
    outcomes = read_outcomes(content, 4096, "completed")
    assert set(outcomes) == {"huge", "markup", "content-list", "body-text"}  # the rest are missing: retried
    assert isinstance(outcomes["huge"], FatalError) and "MiB" in str(outcomes["huge"])
    assert outcomes["markup"][0] == "<script>alert(1)</script>\x1b[31m\x00"  # text, kept as the model said it
    assert isinstance(outcomes["content-list"], RetryableError)
    assert isinstance(outcomes["body-text"], RetryableError)


def test_batch_options_are_checked():
    assert parse_batch_options("flush_s=0.5, max_lines=100") == {"flush_s": 0.5, "max_lines": 100}
    assert BatchSettings(**parse_batch_options({"window": "24h"})).window == "24h"
    for bad, why in [("flush=1", "no key 'flush'"), ("max_lines=60000", "max_lines must be between"),
                     ("poll_s=x", "poll_s must be a float"), ("flush_s", "key=value")]:
        with pytest.raises(ValueError, match=why):
            parse_batch_options(bad)


def test_a_window_is_a_duration():
    from madeval.llm.batch.settings import window_seconds

    assert [window_seconds(w) for w in ("24h", "30m", "0.5s", "2d", " 1H ")] == [86400, 1800, 0.5, 172800, 3600]
    for bad in ("24", "h", "-1h", "0s", "nanh", "infh", "31d", ""):
        with pytest.raises(ValueError, match="window must be"):
            window_seconds(bad)
    with pytest.raises(ValueError, match="window must be"):
        parse_batch_options("window=tomorrow")


def test_the_journal_keeps_each_batch_window_and_ignores_a_bad_one(tmp_path):
    from madeval.llm.batch.journal import BatchJournal, Earlier

    journal = BatchJournal(tmp_path)
    journal.uploaded("f1", ["a", "b"])
    journal.submitted("b1", "f1", "2h")
    journal.uploaded("f2", ["c"])
    journal.submitted("b2", "f2", "24h")
    journal.uploaded("f3", ["d"])  # killed before its batch was journaled
    with journal.path.open("a") as raw:  # a hand-edited or hostile line: the run's own window holds
        raw.write(json.dumps({"batch": "b2", "input_file": "f2", "window": "\x1b[31mforever"}) + "\n")
    again = BatchJournal(tmp_path)
    assert again.claim("a") == Earlier("f1", "b1", "2h") and again.claim("b") == Earlier("f1", "b1", "2h")
    assert again.claim("c") == Earlier("f2", "b2", None) and again.claim("d") == Earlier("f3", None, None)
    assert again.claim("a") is None  # claimed once


def test_a_repeated_custom_id_keeps_its_first_line_and_is_counted():
    from collections import Counter

    problems = Counter()
    content = b"\n".join([line("a", chat("first")), line("b", chat("bee")), line("a", chat("second")),
                          line("a", None, {"code": "server_error"})])
    outcomes = read_outcomes(content, 1 << 20, "completed", problems)
    assert outcomes["a"] == ("first", 7, 3) and outcomes["b"] == ("bee", 7, 3)
    assert problems == Counter(repeated=2)


def test_the_file_exchange_reads_only_the_lines_it_sent_and_says_so_once(tmp_path, capsys):
    """An output file that answers an unknown custom_id and repeats one is not taken for complete
    while a line of the request is missing; it is read once it stops growing, the missing line then
    retried, with one warning line naming what was odd."""
    import asyncio

    from madeval.llm.batch.exchange import STABLE_LOOKS, FileExchange

    exchange = FileExchange(tmp_path, 1 << 20)
    exchange.settings = BatchSettings(poll_s=0.01)

    async def main():
        name = await exchange.upload(b"three request lines\n" * 3, ["a", "b", "c"])
        (tmp_path / f"{name}.output.jsonl").write_bytes(b"\n".join(
            [line("a", chat("first")), line("zzz", chat("stranger")), line("a", chat("again")),
             line("b", chat("bee"))]))
        started = asyncio.get_running_loop().time()
        outcomes = await exchange.collect(name)
        return outcomes, asyncio.get_running_loop().time() - started

    outcomes, waited = asyncio.run(main())
    assert sorted(outcomes) == ["a", "b"] and outcomes["a"] == ("first", 7, 3)
    assert waited >= STABLE_LOOKS * 0.01  # three known-or-not lines for three sent did not end the wait
    warnings = capsys.readouterr().err.splitlines()
    assert len(warnings) == 1 and "1 repeat a custom_id (the first line of each kept)" in warnings[0]
    assert "1 name a custom_id it was not sent (ignored)" in warnings[0]


def test_a_concurrency_below_a_batch_is_named_in_the_warning():
    from madeval.llm.batch.settings import concurrency_note

    assert concurrency_note(None, None, {}) is None and concurrency_note(50_000, None, {}) is None
    assert concurrency_note(None, None, {"max_lines": 100}) is None
    assert concurrency_note(8, None, {}).startswith("--concurrency 8 caps each batch at 8 lines")
    assert concurrency_note(None, {"default": 300, "b": 20}, {"max_lines": 1000}).startswith(
        "--endpoint-concurrency 20 caps each batch at 20 lines")
    assert concurrency_note(30, 10, {}).startswith("--endpoint-concurrency 10 caps")
    assert concurrency_note(200, None, {"max_lines": 100}) is None


def test_a_file_is_read_line_by_line_with_each_line_bounded(tmp_path):
    """An output file read from disk: a line over the bound is never held whole (each yielded piece is
    at most the bound), its call fails as too large when its head names its custom_id, and a cut line
    naming none is counted; the lines around it are read as usual, the last one without a newline."""
    from collections import Counter

    from madeval.llm.batch.lines import CUT_HEAD, LINE_ENVELOPE, CutLine, file_lines, read_file_outcomes

    huge = b"x" * (3 << 20)
    path = tmp_path / "output.jsonl"
    path.write_bytes(b"\n".join([
        line("a", chat("Final Solution: A")),
        b'{"id": "r", "custom_id": "big", "response": {"status_code": 200, "body": "' + huge + b'"}}',
        b'{"id": "r", "response": {"status_code": 200, "body": "' + huge + b'"}, "custom_id": "late"}',
        b"\x00\x1b[2J" + b"[" * 100_000,
        line("b", chat("Final Solution: B")),
    ]))
    pieces = list(file_lines(path, 1 << 20))
    assert len(pieces) == 5 and max(map(len, pieces)) <= (1 << 20) + 1
    assert [isinstance(piece, CutLine) for piece in pieces] == [False, True, True, False, False]
    assert len(pieces[1]) == CUT_HEAD
    problems = Counter()
    max_reply = (1 << 20) - LINE_ENVELOPE  # the bound is the reply limit plus the envelope
    outcomes = read_file_outcomes(path, max_reply, "completed", problems)
    assert sorted(outcomes) == ["a", "b", "big"] and problems["cut"] == 1
    assert outcomes["a"][0] == "Final Solution: A" and outcomes["b"][0] == "Final Solution: B"
    assert isinstance(outcomes["big"], FatalError) and "reply over" in str(outcomes["big"])


def test_lines_naming_a_custom_id_never_sent_are_counted_not_kept():
    """100,000 output lines for requests never sent (and one not JSON) cost a count, not memory: only
    the lines sent are kept."""
    from collections import Counter

    problems = Counter()
    strangers = (line(f"stranger-{n}", chat("x")) for n in range(100_000))
    outcomes = read_outcomes([line("a", chat("mine")), b"<html>", *strangers, b"\n"], 1 << 20, "completed",
                             problems, {"a", "b"})
    assert outcomes == {"a": ("mine", 7, 3)}
    assert problems == Counter(unknown=100_000, bad=1)
