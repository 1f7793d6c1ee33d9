"""An lm-eval task's prepared items kept on disk (madeval_lmeval.item_cache): a warm load reads them
without importing lm-eval's task package, gives the same items and the same scores as building
them, and is rebuilt when anything they came from changes or the file is not what madeval wrote."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from test_lmeval_index_cache import lm_eval_folder  # noqa: F401 - a small stand-in for lm-eval's task folder

from madeval import UsageError
from madeval_lmeval import cache_files, index_cache, item_cache, lmeval_api, mirrors, plugin
from madeval_lmeval.plugin import LmEvalTasks

SUMS_YAML = """\
task: sums
dataset_path: openai/gsm8k
dataset_name: main
output_type: generate_until
test_split: test
doc_to_text: !function utils.doc_to_text
doc_to_target: "{{answer.split('####')[-1].strip()}}"
generation_kwargs:
  until: ["Question:"]
filter_list:
  - name: strict-match
    filter:
      - function: regex
        regex_pattern: "#### (\\\\-?[0-9\\\\.\\\\,]+)"
      - function: take_first
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
"""
UTILS = 'def doc_to_text(doc):\n    return "Question: " + doc["question"] + "\\nAnswer:"\n'
LETTERS_YAML = """\
task: letters
dataset_path: cais/mmlu
dataset_name: tiny_subject
output_type: multiple_choice
test_split: test
doc_to_text: "{{question.strip()}}\\nAnswer:"
doc_to_choice: choices
doc_to_target: answer
metric_list:
  - metric: acc
"""
SUMS = [{"question": "What is 16 - 3 - 4?", "answer": "16 - 3 - 4 = 9\n#### 9"},
        {"question": "Twice 2,000?", "answer": "2 * 2000 = 4000\n#### 4,000"}]
LETTERS = [{"question": "Which is even?", "subject": "tiny_subject", "choices": ["1", "3", "4"], "answer": 2},
           {"question": "Other subject", "subject": "else", "choices": ["a", "b"], "answer": 0},
           {"question": " Which is odd? ", "subject": "tiny_subject", "choices": ["2", "5"], "answer": 1}]


def write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.fixture
def mirrored(lm_eval_folder, tmp_path, monkeypatch):  # noqa: F811
    """An include folder of two lm-eval tasks whose rows come from madeval's mirrors (gsm8k's and
    MMLU's, small copies under a MADEVAL_DATA_DIR of their own)."""
    data = tmp_path / "data"
    write_jsonl(data / "gsm8k" / "test.jsonl", SUMS)
    write_jsonl(data / "mmlu" / "test.jsonl", LETTERS)
    monkeypatch.setenv("MADEVAL_DATA_DIR", str(data))
    folder = tmp_path / "tasks"
    folder.mkdir()
    (folder / "sums.yaml").write_text(SUMS_YAML)
    (folder / "utils.py").write_text(UTILS)
    (folder / "letters.yaml").write_text(LETTERS_YAML)
    cache_files._WARNED.clear()
    return folder, data


def load(folder: Path, name: str, settings=None):
    """``name`` loaded as a new process would (a new provider: nothing kept from an earlier load)."""
    from madeval.core.plugins import registries

    built = registries()
    return LmEvalTasks((str(folder),)).load(name, built.extractors, built.metrics, settings)


def rows_of(task) -> list:
    return [(i.id, i.input, i.target, i.context, i.choices, i.doc) for i in task.items]


def stored_files() -> list[Path]:
    return sorted(Path(os.environ["MADEVAL_CACHE_DIR"]).glob("lmeval-items-*.json"))


def test_cached_items_and_scores_equal_the_built_ones(mirrored):
    folder, _ = mirrored
    built = load(folder, "sums")
    assert not built.from_cache and len(stored_files()) == 0
    assert [item.target for item in built.items] == ["9", "4,000"]  # the strict-match filter's reading
    assert built.items[0].input == "Question: What is 16 - 3 - 4?\nAnswer:"
    assert len(stored_files()) == 1  # stored once the items were built
    cached = load(folder, "sums")
    assert cached.from_cache and rows_of(cached) == rows_of(built)
    assert not cached._lm_task.started  # lm-eval's task object: built once the run asks for a prompt
    assert cached.prompt(cached.items[0]) == built.prompt(built.items[0])
    assert cached._lm_task.started
    assert (cached.answer_type, cached.metric_names, cached.source, cached.path) == \
        (built.answer_type, built.metric_names, built.source, built.path)
    replies = ["#### 9", "#### 4,000", "The answer is 9", "#### 10", "", "#### 9\x00<b>" * 1000]
    for item in built.items:
        assert [cached.score(r, item) for r in replies] == [built.score(r, item) for r in replies]
    assert cached.score("so #### 4,000", cached.items[1]) == {"exact_match,strict-match": 1.0}
    assert cached.score("so #### 4000", cached.items[1]) == {"exact_match,strict-match": 0.0}

    letters = load(folder, "letters")
    assert [(i.input, i.target) for i in letters.items] == [
        ("Which is even?\nAnswer:\nA) 1\nB) 3\nC) 4", "C"), ("Which is odd?\nAnswer:\nA) 2\nB) 5", "B")]
    again = load(folder, "letters")
    assert again.from_cache and rows_of(again) == rows_of(letters)
    for item in letters.items:
        for reply in ("Final Solution: C", "B", "A) 1", "(c) 4", "none"):
            assert again.score(again.extract(reply, item), item) == letters.score(letters.extract(reply, item), item)


def test_a_warm_load_imports_no_lm_eval_task_package(mirrored):
    folder, data = mirrored
    load(folder, "letters").items  # noqa: B018 - read for its effect: the items load
    load(folder, "sums").items  # noqa: B018 - read for its effect: the items load
    stand_in = index_cache.lm_eval_task_folder()  # the index this process stored is over it
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        from madeval.core.plugins import registries
        from madeval_lmeval import index_cache
        from madeval_lmeval.plugin import LmEvalTasks
        index_cache.lm_eval_task_folder = lambda: Path({str(stand_in)!r})
        built = registries()
        provider = LmEvalTasks(({str(folder)!r},))
        names = provider.names()
        task = provider.load("letters", built.extractors, built.metrics)
        items = task.items
        print(task.from_cache, "sums" in names, "lm_eval.tasks" in sys.modules, "datasets" in sys.modules)
        print(task.score(task.extract("Final Solution: C", items[0]), items[0]))
        sums = provider.load("sums", built.extractors, built.metrics)
        print(sums.from_cache, sums.score("#### 4,000", sums.items[1]))
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "MADEVAL_LOAD_PLUGINS": ""}
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = done.stdout.splitlines()[-3:]
    assert lines == ["True True False False", "{'accuracy': 1.0}", "True {'exact_match,strict-match': 1.0}"]


def change(path: Path, text: str | None = None) -> None:
    """Rewrite ``path`` (same text unless given) with a later modification time."""
    path.write_text(path.read_text() if text is None else text)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


def test_what_the_items_came_from_changed_rebuilds_them(mirrored, monkeypatch):
    folder, data = mirrored
    load(folder, "sums").items  # noqa: B018 - read for its effect: the items load
    assert load(folder, "sums").from_cache

    change(folder / "utils.py", UTILS.replace("Question: ", "Q: "))  # a !function's module
    rebuilt = load(folder, "sums")
    assert not rebuilt.from_cache and rebuilt.items[0].input.startswith("Q: What is")
    assert load(folder, "sums").from_cache

    write_jsonl(data / "gsm8k" / "test.jsonl", [*SUMS, {"question": "1+1?", "answer": "#### 2"}])  # the mirror
    rebuilt = load(folder, "sums")
    assert not rebuilt.from_cache and [i.target for i in rebuilt.items] == ["9", "4,000", "2"]
    assert load(folder, "sums").from_cache

    (folder / "_template.yaml").write_text("output_type: generate_until\n")  # a new file beside the task's
    rebuilt = load(folder, "sums")
    assert not rebuilt.from_cache and rebuilt.items
    assert load(folder, "sums").from_cache

    real = item_cache.importlib.metadata.version
    monkeypatch.setattr(item_cache.importlib.metadata, "version",
                        lambda name: "0.4.99" if name == "lm_eval" else real(name))
    assert not load(folder, "sums").from_cache  # another lm-eval
    monkeypatch.setattr(item_cache.importlib.metadata, "version", real)

    edited = folder.parent / "lm_eval_utils.py"
    edited.write_text("x = 1\n")
    monkeypatch.setattr(item_cache, "lm_eval_code_files", lambda: [edited])
    load(folder, "sums").items  # noqa: B018 - read for its effect: the items load
    assert load(folder, "sums").from_cache
    change(edited, "x = 2\n")  # lm-eval edited in place, same version
    assert not load(folder, "sums").from_cache

    code = folder.parent / "code.py"
    code.write_text("A = 1\n")
    monkeypatch.setattr(item_cache, "code_files", lambda: [code])
    load(folder, "sums").items  # noqa: B018 - read for its effect: the items load
    assert load(folder, "sums").from_cache
    code.write_text("A = 2\n")  # madeval's item-building code changed
    assert not load(folder, "sums").from_cache

    keys = {item_cache.key_of("sums", (str(folder),), shots, seed) for shots, seed in [(0, 1), (0, 2), (2, 1), (2, 2)]}
    assert len(keys) == 3  # the seed counts only with few-shot examples


def test_an_included_template_is_followed_to_its_folder(mirrored):
    folder, _ = mirrored
    shared = folder.parent / "shared"
    shared.mkdir()
    (shared / "_base.yaml").write_text(SUMS_YAML.replace("task: sums\n", "").replace(
        "!function utils.doc_to_text", '"Base: {{question}}"'))
    (folder / "based.yaml").write_text("include: ../shared/_base.yaml\ntask: based\n")
    first = load(folder, "based")
    assert first.items[0].input == "Base: What is 16 - 3 - 4?" and load(folder, "based").from_cache
    change(shared / "_base.yaml", (shared / "_base.yaml").read_text().replace("Base: ", "Shared: "))
    rebuilt = load(folder, "based")
    assert not rebuilt.from_cache and rebuilt.items[0].input == "Shared: What is 16 - 3 - 4?"


@pytest.mark.parametrize("text", [
    "{not json", "[" * 100_000 + "]" * 100_000, '{"format": "madeval-lmeval-items/1"}', "\x00\xff" * 10,
    None,  # the real file with an item whose input is a number
])
def test_a_corrupt_or_hostile_cache_file_is_ignored_with_one_warning(mirrored, capsys, text):
    folder, _ = mirrored
    built = load(folder, "sums")
    expected = rows_of(built)
    (stored,) = stored_files()
    if text is None:
        data = json.loads(stored.read_text())
        data["items"][0][1] = 12
        text = json.dumps(data)
    stored.write_bytes(text.encode("utf-8", "surrogateescape"))
    capsys.readouterr()
    again = load(folder, "sums")
    assert not again.from_cache and rows_of(again) == expected
    assert load(folder, "sums").from_cache  # rebuilt and stored over the bad file
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith("madeval: warning: ignored the lm-eval item cache")


def test_a_mirror_split_is_read_once_until_its_file_changes(mirrored, monkeypatch):
    _, data = mirrored
    mirror = data / "gsm8k" / "test.jsonl"
    first, file = mirrors.rows("lm_eval:sums", "openai/gsm8k", "main", "test")
    assert file == mirror and first == SUMS
    read = []
    with monkeypatch.context() as spy:
        spy.setattr(mirrors, "load_docs_with_source", lambda *args: read.append(args) or ([], "hub"))
        again, file = mirrors.rows("lm_eval:other", "openai/gsm8k", "main", "test")  # another task, one split
        assert (again, file, read) == (first, mirror, []) and again is not first  # kept; a list of its own
        change(mirror, mirror.read_text().replace("16 - 3", "17 - 3"))  # the same size, a later time
        assert mirrors.rows("lm_eval:sums", "openai/gsm8k", "main", "test") == ([], None) and len(read) == 1
    assert mirrors.rows("lm_eval:sums", "openai/gsm8k", "main", "test")[0][0]["question"] == "What is 17 - 3 - 4?"
    monkeypatch.setattr(mirrors, "hub_reachable", lambda: True)
    monkeypatch.setattr(mirrors, "load_docs_with_source", lambda *args: read.append(args) or ([], "hub"))
    assert mirrors.rows("lm_eval:sums", "openai/gsm8k", "main", "test") == ([], None) and len(read) == 2  # the hub


def test_with_the_hub_reachable_the_cache_is_not_read(mirrored, monkeypatch):
    folder, _ = mirrored
    load(folder, "sums").items  # noqa: B018 - read for its effect: the items load
    monkeypatch.setattr(plugin, "hub_reachable", lambda: True)
    assert not load(folder, "sums").from_cache


def test_more_choices_than_letters_is_one_line_naming_the_row(mirrored):
    folder, data = mirrored
    many = [str(n) for n in range(27)]
    write_jsonl(data / "mmlu" / "test.jsonl", [{**LETTERS[0], "choices": many[:26], "answer": 25},
                                               {**LETTERS[0], "choices": many, "answer": 26}])
    task = load(folder, "letters")
    with pytest.raises(UsageError, match=r"^task lm_eval:letters: row 1: 27 choices, more than the 26 "
                                         r"option letters A-Z$"):
        task.items  # noqa: B018 - read for its effect: the items load
    write_jsonl(data / "mmlu" / "test.jsonl", [{**LETTERS[0], "choices": many[:26], "answer": 25}])
    (item,) = load(folder, "letters").items  # 26 options are all lettered, Z the last
    assert item.target == "Z" and item.input.endswith("\nZ) 25")


def test_the_raw_index_reads_the_stored_index_without_entries(lm_eval_folder, tmp_path):  # noqa: F811
    folder, calls = lm_eval_folder
    first = index_cache.load_raw(())
    assert calls and first["gsm8k"][0] == "TASK" and first["gsm8k"][1].endswith("gsm8k.yaml")
    assert index_cache.load_raw(()) == first and len(calls) == 1
    (stored,) = Path(os.environ["MADEVAL_CACHE_DIR"]).glob("lmeval-index-*.json")
    data = json.loads(stored.read_text())
    data["entries"]["gsm8k"][0] = "NOT_A_KIND"
    stored.write_text(json.dumps(data))
    assert index_cache.load_raw(()) == first and len(calls) == 2  # refused, rebuilt
    lmeval_api._task_manager.cache_clear()


def test_lm_evals_gsm8k_and_a_multiple_choice_task_score_the_same_from_the_cache():
    if not os.environ.get("MADEVAL_DATA_DIR"):
        pytest.skip("MADEVAL_DATA_DIR (the local mirrors) is not set")
    from madeval.core.plugins import registries

    built_in = registries()
    for name, size in (("gsm8k", 1319), ("mmlu_abstract_algebra", 100)):
        built = LmEvalTasks(()).load(name, built_in.extractors, built_in.metrics)
        assert len(built.items) == size and not built.from_cache
        cached = LmEvalTasks(()).load(name, built_in.extractors, built_in.metrics)
        assert cached.from_cache and rows_of(cached) == rows_of(built)
        assert (cached.answer_type, cached.metric_names) == (built.answer_type, built.metric_names)
        right = wrong = 0
        for item in built.items:
            for reply in (built.reference_reply(item), built.wrong_reply(item), "Final Solution: 18", "#### 3"):
                predicted = cached.extract(reply, item)
                assert predicted == built.extract(reply, item)
                score = cached.score(predicted, item)
                assert score == built.score(predicted, item)
                first = next(iter(score.values()))
                right += reply == built.reference_reply(item) and first == 1.0
                wrong += reply == built.wrong_reply(item) and first == 0.0
        assert right == wrong == size  # the gold reply scores 1 and a wrong one 0 on every item
    lmeval_api._task_manager.cache_clear()
