"""lm-eval's task index kept on disk (madeval_lmeval.index_cache): built once by lm-eval, read back
the same, rebuilt when lm-eval's version or an include path changes, and the manager built over it
builds tasks; lm-eval's advice about its own --metadata option is not shown."""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

import pytest
from test_lmeval_include_path import write_folder

from madeval_lmeval import cache_files, index_cache, lmeval_api


@pytest.fixture
def lm_eval_folder(tmp_path, monkeypatch):
    """A small stand-in for lm-eval's task folder (its gsm8k and a tag over it), so the test does not
    walk lm-eval's 14,700 files; a spy on lm-eval's TaskIndex.build; and an empty cache folder (not
    the one holding lm-eval's real index that conftest.py gives every test)."""
    from lm_eval.tasks._index import TaskIndex

    monkeypatch.setenv("MADEVAL_CACHE_DIR", str(tmp_path / "empty-cache"))
    real = index_cache.lm_eval_task_folder()
    folder = tmp_path / "lm_eval_tasks"
    shutil.copytree(real / "gsm8k", folder / "gsm8k", ignore=shutil.ignore_patterns("*cot*", "*.md"))
    monkeypatch.setattr(index_cache, "lm_eval_task_folder", lambda: folder)
    calls = []
    built = TaskIndex.__dict__["build"]

    def spy(paths, **options):
        calls.append([str(p) for p in paths])
        return built.__func__(paths, **options)

    monkeypatch.setattr(TaskIndex, "build", staticmethod(spy))
    lmeval_api._task_manager.cache_clear()
    yield folder, calls
    lmeval_api._task_manager.cache_clear()


def described(index):
    return {name: (e.kind.name, str(e.yaml_path), sorted(e.tags)) for name, e in index.items()}


def test_the_index_is_built_once_then_read_from_disk(lm_eval_folder, tmp_path):
    folder, calls = lm_eval_folder
    include, _ = write_folder(tmp_path)
    first = index_cache.load_index((str(include),))
    assert calls == [[str(folder)], [str(include)]]  # each folder on its own, in lm-eval's order
    assert {"gsm8k", "tiny_sums", "math_word_problems"} <= set(first)
    stored = list(Path(os.environ["MADEVAL_CACHE_DIR"]).glob("lmeval-index-*.json"))
    assert len(stored) == 2  # one file per folder
    again = index_cache.load_index((str(include),))
    assert len(calls) == 2  # read, not walked
    assert described(again) == described(first)
    assert all(entry.cfg is None for entry in again.values())
    assert lmeval_api.config_of(again["gsm8k"]) == first["gsm8k"].cfg  # read on first use, as lm-eval reads it


def test_the_folders_merge_as_lm_eval_merges_them(lm_eval_folder, tmp_path, caplog):
    """Kept one file per folder, the index is lm-eval's over all folders at once: an include folder's
    task replaces lm-eval's of the same name, and its tag replaces the tag, as TaskIndex.build does."""
    from lm_eval.tasks._index import TaskIndex

    folder, _ = lm_eval_folder
    include, _ = write_folder(tmp_path)
    (include / "gsm8k_again.yaml").write_text("task: gsm8k\ntag: [math_word_problems]\ndataset_path: json\n")
    with caplog.at_level(logging.WARNING, logger="lm_eval.tasks._index"):
        merged = index_cache.load_index((str(include),))
    assert "Task 'gsm8k' from" in caplog.text  # lm-eval's warning, when the index is built
    whole = TaskIndex.build([folder, include])  # lm-eval's own, over every folder at once
    assert described(merged) == described(whole)
    assert merged["gsm8k"].yaml_path == include / "gsm8k_again.yaml"
    assert described(index_cache.load_index((str(include),))) == described(whole)  # read back from the files
    raw = index_cache.load_raw((str(include),))
    assert {name: (kind, str(file), tags) for name, (kind, file, tags) in raw.items()} == described(whole)


def test_a_changed_include_path_or_lm_eval_version_rebuilds_it(lm_eval_folder, tmp_path, monkeypatch):
    folder, calls = lm_eval_folder
    include, _ = write_folder(tmp_path)
    index_cache.load_index((str(include),))
    (include / "more_sums.yaml").write_text((include / "tiny_sums.yaml").read_text().replace("tiny_sums", "more_sums"))
    assert "more_sums" in index_cache.load_index((str(include),)) and len(calls) == 3
    assert calls[2] == [str(include)]  # the changed folder alone is walked again, not lm-eval's
    assert "more_sums" not in index_cache.load_index(())  # without the include path: lm-eval's index, kept
    assert len(calls) == 3
    import importlib.metadata

    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "0.4.99" if name == "lm_eval" else real(name))
    index_cache.load_index((str(include),))
    assert calls[3:] == [[str(folder)], [str(include)]]  # another lm-eval: every folder again


def test_a_broken_cache_file_is_rebuilt_with_one_warning(lm_eval_folder, tmp_path, capsys):
    """A truncated file is rebuilt and said once, naming the file (before: silently); reading it again
    in the same process, while broken, says nothing more."""
    _, calls = lm_eval_folder
    include, _ = write_folder(tmp_path)
    index_cache.load_index((str(include),))
    stored = index_cache.cache_file(index_cache.include_key(str(include)))
    assert stored.is_file()
    broken = '{"format": "madeval-lmeval-index/2", "key": "' + index_cache.include_key(str(include)) + '", '
    stored.write_text(broken)
    cache_files._WARNED.discard(str(stored))
    assert "tiny_sums" in index_cache.load_index((str(include),)) and calls[2:] == [[str(include)]]
    err = capsys.readouterr().err
    assert err.count("warning: ignored the lm-eval index cache") == 1 and str(stored) in err, err
    stored.write_text(broken)
    assert index_cache.load_raw((str(include),))["tiny_sums"][0] == "TASK" and calls[3:] == [[str(include)]]
    assert capsys.readouterr().err == ""


def test_a_cache_file_of_another_key_is_rebuilt_without_a_word(lm_eval_folder, tmp_path, capsys):
    _, calls = lm_eval_folder
    include, _ = write_folder(tmp_path)
    index_cache.load_index((str(include),))
    stored = index_cache.cache_file(index_cache.include_key(str(include)))
    stored.write_text('{"format": "madeval-lmeval-index/2", "key": "another", "entries": {}}')
    assert "tiny_sums" in index_cache.load_index((str(include),)) and calls[2:] == [[str(include)]]
    assert capsys.readouterr().err == ""


def test_the_manager_over_the_cached_index_builds_tasks(lm_eval_folder, tmp_path):
    from madeval.core.plugins import registries
    from madeval_lmeval.plugin import LmEvalTasks

    _, calls = lm_eval_folder
    include, rows = write_folder(tmp_path)
    fresh = lmeval_api.task_manager((str(include.resolve()),))
    lmeval_api._task_manager.cache_clear()  # as a new process would
    cached = lmeval_api.task_manager((str(include.resolve()),))
    assert len(calls) == 2 and cached is not fresh  # lm-eval's folder and the include folder, once each
    assert cached.all_tasks == fresh.all_tasks and cached.all_groups == fresh.all_groups
    built = registries()
    task = LmEvalTasks((str(include),)).load("tiny_sums", built.extractors, built.metrics)
    assert [item.input for item in task.items[:1]] == ["What is 0 plus 1? (tiny_sums #0)"]
    assert task.score("Final Solution: 4", task.items[1]) == {"exact_match,final-number": 1.0}
    assert LmEvalTasks((str(include),)).expand("math_word_problems") == ["gsm8k"]


def test_lm_evals_advice_about_its_metadata_option_is_not_shown(caplog):
    lmeval_api._quiet_metadata_hint()
    logger = logging.getLogger("lm_eval.api.task")
    with caplog.at_level(logging.WARNING, logger="lm_eval.api.task"):
        logger.warning("gsm8k: Custom kwargs can be passed to `--metadata` in console (as json string) or to the "
                       "TaskManager.\nFor example --metadata='{\"max_seq_lengths\":[4096, 8192]}'.")
        logger.warning("another warning")
    assert [r.getMessage() for r in caplog.records] == ["another warning"]


def test_templates_compiled_once_render_as_lm_eval_renders_them():
    from lm_eval import utils

    lmeval_api._compile_templates_once()
    template = "Question: {{question}}\nAnswer:{{ ' ' ~ answer | regex_replace('#+', '') }}"
    docs = [{"question": "What is 2+2?", "answer": "## 4"}, {"question": "Why {{x}}?", "answer": "#5"}]
    assert utils.apply_template is not utils.apply_template.uncached
    for doc in docs:
        assert utils.apply_template(template, doc) == utils.apply_template.uncached(template, doc)
    with pytest.raises(Exception) as cached:  # StrictUndefined: an unknown field fails, in both
        utils.apply_template("{{missing}}", {})
    with pytest.raises(Exception) as original:
        utils.apply_template.uncached("{{missing}}", {})
    assert type(cached.value) is type(original.value)
