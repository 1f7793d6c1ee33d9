"""The run folder's journal of shared replies (shared.jsonl): what a resumed run reads back, and
what the file keeps."""

from __future__ import annotations

import os

import pytest

from madeval.errors import UsageError
from madeval.llm.client import Completion
from madeval.llm.shared import Made
from madeval.records.shared_replies import SharedJournal, journal_line, read_line

ONE, TWO = '["t", "1", 0]', '["t", "2", 0]'


def made(text: str, by: str = '["c1", "t", "1", 0]') -> Made:
    return Made(Completion(text, 120, 30, 0.25, 2, False, ["HTTP 500"], "fp-1", 64, "aiohttp"), by)


def test_a_reply_reads_back_as_it_was_made_lone_surrogates_and_all():
    reply = made("Answer: B \ud800 (sure)")
    line = journal_line(ONE, "k1", reply)
    assert line.endswith(b"\n") and b"\\ud800" in line  # UTF-8 cannot hold a lone surrogate: escaped
    assert read_line(line) == (ONE, "k1", reply)


@pytest.mark.parametrize("line", [
    b"not json\n",
    b'{"group": "g", "key": "k", "by": "u"}\n',  # no reply
    b'{"group": "g", "key": "k", "by": "u", "reply": {"text": "x"}}\n',  # fields missing
    journal_line(ONE, "k", made("x")).replace(b'"prompt_tokens": 120', b'"prompt_tokens": "120"'),
    journal_line(ONE, "k", made("x")).replace(b'"cached": false', b'"cached": 0'),
    journal_line(ONE, "k", made("x")).replace(b'"prompt_tokens": 120', b'"prompt_tokens": true'),
    journal_line(ONE, "k", made("x")).replace(b'["HTTP 500"]', b'[500]'),
    b"[1, 2]\n",
], ids=["not-json", "no-reply", "fields-missing", "text-tokens", "int-flag", "bool-tokens", "errors", "list"])
def test_a_line_that_is_not_a_whole_reply_is_not_one(line):
    assert read_line(line) is None


def test_a_resume_reads_back_the_open_groups_and_the_file_keeps_only_them(tmp_path):
    journal = SharedJournal(tmp_path)
    journal.append(ONE, "k1", made("one"))
    journal.append(TWO, "k2", made("two"))
    journal.append(ONE, "k3", made("three", by='["c2", "t", "1", 0]'))
    journal.close({ONE, TWO})
    with open(tmp_path / "shared.jsonl", "ab") as handle:  # a kill mid-line, and a line of someone else's
        handle.write(b'{"nobody": 1}\n' + journal_line(TWO, "k4", made("cut"))[:40])

    resumed = SharedJournal(tmp_path)
    assert resumed.resume({ONE}) == [(ONE, "k1", made("one")), (ONE, "k3", made("three", by='["c2", "t", "1", 0]'))]
    resumed.append(ONE, "k5", made("five"))
    resumed.close({ONE})
    assert [read_line(line)[1] for line in (tmp_path / "shared.jsonl").read_bytes().splitlines(keepends=True)] == [
        "k1", "k3", "k5"]


def test_the_file_is_removed_once_no_group_needs_it(tmp_path):
    journal = SharedJournal(tmp_path)
    journal.append(ONE, "k1", made("one"))
    journal.close(set())
    assert not os.path.lexists(tmp_path / "shared.jsonl")
    assert SharedJournal(tmp_path).resume({ONE}) == []


def test_a_link_in_place_of_the_journal_is_refused_not_followed(tmp_path):
    elsewhere = tmp_path / "elsewhere.txt"
    elsewhere.write_text("keep me\n")
    (tmp_path / "run").mkdir()
    os.symlink(elsewhere, tmp_path / "run" / "shared.jsonl")
    with pytest.raises(UsageError, match="symbolic link"):
        SharedJournal(tmp_path / "run").resume({ONE})
    assert elsewhere.read_text() == "keep me\n"
