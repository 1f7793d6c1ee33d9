"""Local JSON-lines mirrors read with the json module give exactly the rows ``datasets`` gives.

``datasets.load_dataset("json", ...)`` is the reference implementation: every mirror under the
shared data folder and a set of awkward synthetic files are read both ways and compared with
types (``1`` and ``1.0`` differ, as do ``None`` and a missing column) and key order."""

from __future__ import annotations

import io
import json
import os
import random
from pathlib import Path

import pytest

from helpers import madeval_in_process
from madeval.errors import UsageError
from madeval.task.mirrors import MirrorNotPlain, _reads_as_timestamp, mirror_rows, read_mirror
from madeval.task.sources import _load_json, _load_json_with_datasets

DATA = Path(os.environ.get("MADEVAL_DATA_DIR", "/work/shared/data"))
MIRRORS = sorted(p for p in DATA.rglob("*.jsonl") if "mallm" not in p.parts) if DATA.is_dir() else []


def exact(rows: list[dict]) -> list[str]:
    """Rows as JSON text: tells ints from floats, ``None`` from absent, and key order apart."""
    return [json.dumps(row, ensure_ascii=False, default=repr) for row in rows]  # repr: datetimes


@pytest.mark.skipif(not MIRRORS, reason="no shared data folder")
@pytest.mark.parametrize("path", MIRRORS, ids=lambda p: str(p.relative_to(DATA)))
def test_every_shared_mirror_reads_as_datasets_reads_it(path):
    ours = read_mirror(path)  # a refusal here fails the test: every shipped mirror must be plain
    assert exact(ours) == exact(_load_json_with_datasets(path))
    assert exact(list(mirror_rows(path))) == exact(ours)


def write(tmp_path: Path, text: str, name: str = "rows.jsonl") -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


AWKWARD = {
    # a column missing from some rows, and columns appearing late: None, in first-seen order
    "missing_columns": '{"a": 1}\n{"b": "x"}\n{"c": [1], "a": 2}\n',
    # ints and floats in one column, in a list and in a nested field: all floats
    "int_float_mix": '{"n": 1, "l": [1, 2.5], "s": {"v": 3}}\n{"n": 2.5, "l": [4], "s": {"v": 0.5}}\n',
    # nested objects with their fields in different orders; a null struct; all-null column
    "struct_order": '{"s": {"x": 1, "y": "a"}, "z": null}\n{"s": {"y": "b", "x": 2}, "z": null}\n{"s": null}\n',
    # lists of objects, empty lists, lists of nulls, booleans, unicode, blank lines, a BOM
    "lists_and_text": '\ufeff{"l": [{"k": 1}], "e": [], "b": true, "t": "caf\\u00e9 \\u0000 <b>"}\n\n'
                      '{"l": [], "e": [null], "b": false, "t": "\\u202e\\n"}\n   \n',
    # deep nesting
    "deep": '{"d": [[[[{"x": [1.5]}]]]]}\n{"d": [[[[{"x": [2]}]]]]}\n',
    # text opening with a date that pyarrow keeps as text: a question, an impossible date, fractional
    # seconds, two spaces, hour 24, an offset past 23 hours, a zone after a date alone
    "date_like_text": '{"q": "2021-01-01 is the day the law took effect. Why?", "l": ["2021-02-30"]}\n'
                      '{"q": "2021-01-01T10:00:00.123Z", "l": ["2021-01-01  10:00", "2021-01-01T24:00"]}\n'
                      '{"q": "2021-01-01T10:00:00+24:00", "l": ["2021-01-01+01:00", "1900-02-29"]}\n',
}


@pytest.mark.parametrize("name", sorted(AWKWARD))
def test_awkward_plain_files_read_as_datasets_reads_them(tmp_path, name):
    path = write(tmp_path, AWKWARD[name])
    assert exact(read_mirror(path)) == exact(_load_json_with_datasets(path))


REFUSED = {
    "kinds_conflict": '{"a": 1}\n{"a": "one"}\n',
    "structs_differ": '{"s": {"x": 1}}\n{"s": {"y": 2}}\n',
    "empty_object": '{"s": {}}\n',
    "timestamp": '{"when": "2021-01-01 10:00:00"}\n',
    "timestamp_date_alone": '{"q": "a question"}\n{"q": "2020-02-29"}\n',
    "timestamp_zoned_in_a_list": '{"l": ["text", "2021-01-01T10+0130"]}\n',
    "timestamp_in_a_nested_field": '{"s": {"when": "0000-01-01T23:59Z"}}\n',
    # pyarrow refuses a row naming a column twice (datasets fails); nested, datasets gives odd rows
    "duplicate_key": '{"a": 1, "b": "x"}\n{"a": 2, "a": 3, "b": "y"}\n',
    "duplicate_nested_key": '{"s": {"x": 1, "x": 2}}\n',
    "duplicate_key_in_a_list": '{"l": [{"x": "p", "x": "q"}]}\n',
    "big_int": '{"n": 123456789012345678901}\n',
    "array_file": '[{"a": 1}, {"a": 2}]\n',
    "agent_trace_like": '{"id": "1", "source": "s", "model": "m", "system_prompt": "p", "messages": ["hi"]}\n',
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_the_reader_cannot_vouch_for_goes_to_datasets(tmp_path, name):
    path = write(tmp_path, REFUSED[name])
    with pytest.raises(MirrorNotPlain):
        read_mirror(path)
    with pytest.raises(MirrorNotPlain):
        mirror_rows(path)  # refused before the first row, so a caller can still fall back
    assert outcome(_load_json, path) == outcome(_load_json_with_datasets, path)


def outcome(load, path: Path):
    """The rows ``load`` gives, or the type of its error (datasets refuses agent-trace-like files
    without the ``teich`` package, for instance)."""
    try:
        return exact(load(path))
    except Exception as error:  # the reference's own failure is the expected outcome
        return type(error)


@pytest.mark.parametrize("text", ['{"a": 1}\n[1, 2]\n', '{"a": NaN}\n'])
def test_lines_that_are_not_objects_are_refused(tmp_path, text):
    with pytest.raises(MirrorNotPlain):
        read_mirror(write(tmp_path, text))


def test_a_line_over_the_bound_is_refused_without_reading_it_whole(tmp_path, monkeypatch):
    monkeypatch.setattr("madeval.task.mirrors.MAX_LINE_BYTES", 100)
    path = write(tmp_path, '{"a": "' + "x" * 1000 + '"}\n')
    with pytest.raises(MirrorNotPlain, match="longer than 100 bytes"):
        read_mirror(path)


def test_columns_changing_after_datasets_first_chunk_are_refused(tmp_path, monkeypatch):
    """datasets infers the columns from its first chunk and casts the rest to them: a later
    float in an int column would be cast, not widened, so that file goes to datasets."""
    monkeypatch.setattr("madeval.task.mirrors.DATASETS_CHUNK_BYTES", 20)
    path = write(tmp_path, '{"n": 1, "pad": "xxxxxxxxxx"}\n{"n": 2.5, "pad": "y"}\n')
    with pytest.raises(MirrorNotPlain, match="columns change"):
        read_mirror(path)
    same = write(tmp_path, '{"n": 1, "pad": "xxxxxxxxxx"}\n{"n": 2, "pad": "y"}\n', "same.jsonl")
    assert read_mirror(same) == [{"n": 1, "pad": "xxxxxxxxxx"}, {"n": 2, "pad": "y"}]


@pytest.mark.parametrize("text", ['{"a": 1}\n{"a": \n', '{"a": 1}\n{not json\n', b'{"a": "\xff"}\n'.decode("latin-1")])
def test_a_line_that_is_not_json_is_one_clear_error_naming_the_line(tmp_path, text):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(text.encode("latin-1"))
    with pytest.raises(UsageError, match=r"rows.jsonl, line 2: not JSON" if "\xff" not in text else "line 1: not JSON"):
        _load_json(path)  # not handed to datasets, which fails on it with a traceback


@pytest.mark.parametrize("depth", [200_000, 900, 65])
def test_hostile_nesting_is_refused_not_a_crash(tmp_path, depth):
    """Too deep for json.loads (200,000), or past the reader's bound under a deep caller."""
    path = write(tmp_path, '{"a": ' + "[" * depth + "]" * depth + "}\n")

    def at_depth(levels):  # call read_mirror under ``levels`` extra frames, as a deep caller would
        return read_mirror(path) if levels == 0 else at_depth(levels - 1)

    with pytest.raises(MirrorNotPlain):
        at_depth(900)
    shallow = write(tmp_path, '{"a": ' + "[" * 20 + "1" + "]" * 20 + "}\n", "shallow.jsonl")
    assert exact(read_mirror(shallow)) == exact(_load_json_with_datasets(shallow))


# Forms around pyarrow's ISO 8601 timestamps: dates alone, T or space, hours/minutes/seconds,
# fractions, zones and offsets, impossible dates and times, leap years, stray characters.
TIMESTAMP_FORMS = [
    "2021-01-01", "2021-01-01 10:00:00", "2021-01-01T10:00:00", "2021-01-01T10:00", "2021-01-01 10",
    "2021-01-01T10:00:00Z", "2021-01-01T10:00:00+01:00", "2021-01-01T10:00:00+0100", "2021-01-01T10-05",
    "2021-01-01 10:00:00+01:00", "2021-01-01T10:00:00-00:00", "2021-01-01T10+23:59", "2021-01-01T10:00Z",
    "0000-01-01", "9999-12-31", "2020-02-29", "2000-02-29", "2400-02-29", "0004-02-29",
    "2021-01-01T10:00:00.123", "2021-01-01T10:00:00.000", "2021-01-01T10:00:00,5", "2021-01-01T10:00:00.",
    "2021-02-29", "1900-02-29", "2100-02-29", "2021-02-30", "2021-04-31", "2021-13-01", "2021-00-10",
    "2021-01-00", "2021-01-32", "2021-01-01T24:00:00", "2021-01-01T23:59:60", "2021-01-01T10:60",
    "2021-01-01T10:00:00+24:00", "2021-01-01T10:00:00+0160", "2021-01-01T10:00:00+1", "2021-01-01Z",
    "2021-01-01+01:00", "2021-01-01T1000", "2021-01-01T1", "2021-01-01t10:00:00", "2021-01-01T10:00:00z",
    "2021-01-01 ", " 2021-01-01", "2021-01-01\n", "2021-01-01  10:00", "2021-01-01\t10:00", "2021-1-1",
    "20210101", "+2021-01-01", "10000-01-01", "2021-W01-1", "\u0662\u0660\u0662\u0661-\u0660\u0661-\u0660\u0661",
    "2021-01-01T10:00:00 +01:00", "2021-01-01T10:00:00+01:00Z", "2021-01-01 is a date",
]


def random_forms(count: int, seed: int) -> list[str]:
    """Timestamp-shaped strings with random fields (some out of range) and random edits."""
    rng = random.Random(seed)
    forms = []
    for _ in range(count):
        year, day = rng.choice([rng.randrange(10000), 1900, 2000, 2100]), rng.choice([rng.randrange(33), 29])
        text = f"{year:04d}-{rng.randrange(14):02d}-{day:02d}"
        for part in (f"{rng.choice('T ')}{rng.randrange(26):02d}", f":{rng.randrange(62):02d}",
                     f":{rng.randrange(62):02d}"):
            if rng.random() < 0.3:
                break
            text += part
        if rng.random() < 0.5:
            text += rng.choice(["Z", f"+{rng.randrange(26):02d}", f"-{rng.randrange(26):02d}:{rng.randrange(62):02d}",
                                f"+{rng.randrange(26):02d}{rng.randrange(62):02d}", ".5"])
        for _ in range(rng.choice([0, 0, 1, 2])):
            at = rng.randrange(len(text) + 1)
            text = text[:at] + rng.choice("0123456789-:TZ+ .") + text[at + rng.randrange(2):]
        forms.append(text)
    return forms


def test_exactly_the_strings_pyarrow_reads_as_timestamps_are_refused():
    """datasets reads JSON lines with pyarrow's JSON reader: a string it types as a timestamp must
    never take the fast path, and any other string (a question opening with a date) keeps it."""
    import pyarrow as pa
    import pyarrow.json as paj

    forms = TIMESTAMP_FORMS + random_forms(20_000, seed=2026)
    table = paj.read_json(io.BytesIO(json.dumps({f"c{i}": form for i, form in enumerate(forms)}).encode()))
    arrow = [pa.types.is_timestamp(field.type) for field in table.schema]
    assert 2_000 < sum(arrow) < len(forms) - 2_000  # the search hits both sides
    assert [form for form, is_time in zip(forms, arrow) if is_time != _reads_as_timestamp(form)] == []


def test_a_mirror_datasets_cannot_read_either_is_one_line_exit_2_and_nothing_written(tmp_path, monkeypatch):
    """A key given twice goes to datasets, which refuses it (pyarrow: 'specified twice') with a
    traceback; the run says so in one line naming the file and exits 2 before any folder is made."""
    data = tmp_path / "data" / "gsm8k"
    data.mkdir(parents=True)
    (data / "test.jsonl").write_text('{"question": "q", "answer": "#### 1"}\n'
                                     '{"question": "q", "question": "r", "answer": "#### 2"}\n')
    out = tmp_path / "out"
    monkeypatch.setenv("MADEVAL_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    done = madeval_in_process("--tasks", "gsm8k", "--limit", "1", "--no-progress", "--base-url",
                              "http://127.0.0.1:9/v1", "-o", out)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "test.jsonl: datasets cannot read it" in lines[0] and "twice" in lines[0], lines
    assert not out.exists()
