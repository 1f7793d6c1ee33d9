"""``madeval import lm-eval``: lm-eval ``--log_samples`` files as single-agent runs paired on items.

The fixtures are two real lm-eval 0.4.13 runs of gsm8k (100 documents) against simulators of
different accuracy (``tests/importers/fixtures/lmeval/PROVENANCE.md``); expected figures are computed here
from the files themselves and from statsmodels' exact McNemar test.
"""

from __future__ import annotations

import contextlib
import gzip
import importlib.util
import json
from pathlib import Path

import pytest

from helpers import madeval_in_process
from madeval.importers.matching import doc_hash
from madeval.records.folder import read_records

FIXTURES = Path(__file__).parent / "fixtures" / "lmeval"
HIGH = next((FIXTURES / "sim-acc80").glob("samples_gsm8k_*.jsonl.gz"))
LOW = next((FIXTURES / "sim-acc50").glob("samples_gsm8k_*.jsonl.gz"))
PLUGIN = importlib.util.find_spec("madeval_lmeval") is not None and importlib.util.find_spec("lm_eval") is not None
needs_plugin = pytest.mark.skipif(not PLUGIN, reason="madeval-lmeval and lm-eval are not installed")


@pytest.fixture(scope="session")
def lm_eval_index_file(tmp_path_factory) -> Path | None:
    """lm-eval's index of its own tasks, built once for the session and shared by xdist's workers,
    as madeval-lmeval's own tests do (:func:`madeval_lmeval.testing.shared_index_file`): walking
    lm-eval's ~14,700 task files takes 10 s of CPU, which every command would otherwise spend again
    in its fresh cache folder. None without the plugin."""
    if not PLUGIN:
        return None
    from madeval_lmeval.testing import shared_index_file

    return shared_index_file(tmp_path_factory)


def seed_index(index_file: Path | None) -> None:
    """Copy lm-eval's index into this cache folder (when the plugin is installed)."""
    if index_file is not None:
        from madeval_lmeval.testing import seed_index as copy_index

        copy_index(index_file)


@contextlib.contextmanager
def lm_eval_plugin():
    """The madeval-lmeval plugin registered, as its installed entry point would be, when installed."""
    if not PLUGIN:
        yield
        return
    from madeval.testing import registered
    from madeval_lmeval import plugin

    with registered(plugin):
        yield


@pytest.fixture(autouse=True)
def plugin_allowed(isolated):
    """Every command runs with the madeval-lmeval plugin, when installed (the suite loads none by default)."""
    with lm_eval_plugin():
        yield


@pytest.fixture
def lm_eval_index(isolated, lm_eval_index_file):
    """This test's cache folder holds lm-eval's index (for the commands that name an ``lm_eval:`` task)."""
    seed_index(lm_eval_index_file)


def madeval(*args, cwd=None):
    """The command line, in this process (``helpers.madeval_in_process``): exit status, stdout, stderr."""
    return madeval_in_process(*args, cwd=cwd)


def samples(path: Path, filter_name: str) -> dict[int, dict]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        lines = [json.loads(line) for line in handle]
    return {line["doc_id"]: line for line in lines if line["filter"] == filter_name}


def exact_mcnemar(first: dict[int, float], second: dict[int, float]) -> float:
    from statsmodels.stats.contingency_tables import mcnemar

    both = sorted(set(first) & set(second))
    table = [[sum(first[i] == a and second[i] == b for i in both) for b in (1.0, 0.0)] for a in (1.0, 0.0)]
    return float(mcnemar(table, exact=True).pvalue)


@pytest.fixture(scope="module")
def lm_eval_board(tmp_path_factory, lm_eval_index_file):
    """Both runs imported once for the module, in a cache folder of its own (a module's fixture runs
    before each test's isolated one is set up)."""
    folder = tmp_path_factory.mktemp("lmeval") / "run"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MADEVAL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
        patch.setenv("MADEVAL_LOAD_PLUGINS", "")
        patch.setenv("HF_HUB_OFFLINE", "1")
        seed_index(lm_eval_index_file)
        with lm_eval_plugin():
            done = madeval("import", "lm-eval", HIGH, LOW, "--task", "lm_eval:gsm8k", "--filter",
                           "flexible-extract", "--output-path", folder)
    assert done.returncode == 0, done.stderr
    return folder, done


@needs_plugin
def test_lm_eval_samples_score_as_lm_eval_scored_them(lm_eval_board):
    folder, done = lm_eval_board
    assert "differs" not in done.stderr  # madeval's score of every sample is lm-eval's stored one
    board = json.loads((folder / "leaderboard.json").read_text())
    rows = {r["label"]: r for r in board["rows"] if r["metric"] == "exact_match,flexible-extract"}
    results = {path: json.loads(next(path.parent.glob("results_*.json")).read_text()) for path in (HIGH, LOW)}
    for path, label in ((HIGH, "sim-acc80/gsm8k@2026-11-27T05-05-09"), (LOW, "sim-acc50/gsm8k@2026-11-27T05-05-46")):
        stored = samples(path, "flexible-extract")
        assert rows[label]["items"] == len(stored) == 100
        assert rows[label]["score"] == pytest.approx(sum(s["exact_match"] for s in stored.values()) / 100)
        assert rows[label]["score"] == pytest.approx(results[path]["results"]["gsm8k"]["exact_match,flexible-extract"])
    for record in read_records(folder):
        doc_id = int(record["unit"]["item"].rpartition("-")[2])
        details = record["transcript"]["decision"]["details"]
        assert details["doc_id"] == doc_id and details["filter"] == "flexible-extract"
        assert record["metrics"]["exact_match,flexible-extract"] == details["lm_eval_metrics"]["exact_match"]


@needs_plugin
def test_two_lm_eval_runs_get_a_paired_mcnemar_test(lm_eval_board):
    folder, _ = lm_eval_board
    board = json.loads((folder / "leaderboard.json").read_text())
    low = next(r for r in board["rows"] if r["metric"] == "exact_match,flexible-extract" and not r["reference"])
    high_scores = {i: s["exact_match"] for i, s in samples(HIGH, "flexible-extract").items()}
    low_scores = {i: s["exact_match"] for i, s in samples(LOW, "flexible-extract").items()}
    assert low["test"] == "mcnemar"
    assert low["p_value"] == pytest.approx(exact_mcnemar(high_scores, low_scores))
    assert low["delta"] == pytest.approx((sum(low_scores.values()) - sum(high_scores.values())) / 100)
    assert low["mde"] is not None and low["significant"] is True


@needs_plugin
def test_a_file_of_several_filters_needs_one_named(tmp_path, lm_eval_index):
    done = madeval("import", "lm-eval", HIGH, "--task", "lm_eval:gsm8k", "--output-path", tmp_path / "out")
    assert done.returncode == 2
    assert "holds samples of several filters (strict-match, flexible-extract): choose one with --filter" in done.stderr
    assert not (tmp_path / "out").exists()
    done = madeval("import", "lm-eval", HIGH, "--task", "lm_eval:gsm8k", "--filter", "loose",
                   "--output-path", tmp_path / "out")
    assert done.returncode == 2 and "has no sample of filter 'loose'" in done.stderr
    assert not (tmp_path / "out").exists()


def test_samples_pair_with_madeval_s_own_task_by_content(tmp_path):
    """madeval's gsm8k names items by content: each sample lands on the item whose row lm-eval hashed."""
    done = madeval("import", "lm-eval", HIGH, "--task", "gsm8k", "--filter", "strict-match",
                   "--output-path", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    stored = samples(HIGH, "strict-match")
    records = list(read_records(tmp_path / "out"))
    assert len(records) == 100
    from madeval.core.plugins import registries
    from madeval.settings.config import RunSettings
    from madeval.task.definition import load_tasks

    task = load_tasks(RunSettings(tasks=["gsm8k"]), registries())["gsm8k"]
    items = {item.id: item for item in task.items}
    for record in records:
        details = record["transcript"]["decision"]["details"]
        line = stored[details["doc_id"]]
        assert doc_hash(items[record["unit"]["item"]].doc) == line["doc_hash"]
        assert record["target"] == line["target"].rpartition("#### ")[2]
        assert record["transcript"]["messages"][0]["text"] == line["resps"][0][0]


def test_a_madeval_run_and_an_lm_eval_file_share_one_board(tmp_path):
    """A single agent run by madeval on the same 100 gsm8k items pairs with the imported lm-eval run."""
    from helpers import run_quietly
    from madeval.core.plugins import registries
    from madeval.settings.config import RunSettings, debate_config
    from madeval.simulator import simulate
    from madeval.task.definition import load_tasks

    task = load_tasks(RunSettings(tasks=["gsm8k"]), registries())["gsm8k"]
    with simulate(tasks=[task], accuracy=0.6, seed=3) as sim:
        run_quietly(RunSettings(tasks=["gsm8k"], limit=100, base_url=sim.base_url, cache="off",
                                output_path=str(tmp_path / "madeval"),
                                configurations=[debate_config({"preset": "baseline_cot"})]))
    assert madeval("import", "lm-eval", LOW, "--task", "gsm8k", "--filter", "flexible-extract",
                   "--output-path", tmp_path / "lm").returncode == 0
    shown = madeval("leaderboard", "show", tmp_path / "madeval", tmp_path / "lm", "--output", tmp_path / "board")
    assert shown.returncode == 0, shown.stderr
    board = json.loads((tmp_path / "board" / "leaderboard.json").read_text())
    imported = next(r for r in board["rows"] if r["label"].startswith("sim-acc50/"))
    assert imported["test"] == "mcnemar" and imported["p_value"] is not None
    ours = {r["unit"]["item"]: r["metrics"]["math_equivalence"] for r in read_records(tmp_path / "madeval")}
    theirs = {r["unit"]["item"]: r["metrics"]["math_equivalence"] for r in read_records(tmp_path / "lm")}
    assert set(ours) == set(theirs) and len(ours) == 100  # the same 100 items, by content id
    assert imported["p_value"] == pytest.approx(exact_mcnemar(ours, theirs))


def test_a_moved_doc_is_found_by_its_hash_and_noted(tmp_path, lm_eval_index):
    lines = [line for line in samples(HIGH, "strict-match").values()][:3]
    lines[0], lines[1] = {**lines[0], "doc_id": 1}, {**lines[1], "doc_id": 0}  # swapped positions
    lines[2] = {**lines[2], "doc_hash": "0" * 64}  # a hash that is not its doc's
    path = tmp_path / "sim" / "samples_gsm8k_2026-01-01T00-00-00.jsonl"
    path.parent.mkdir()
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    if importlib.util.find_spec("madeval_lmeval") is None:
        pytest.skip("madeval-lmeval is not installed")
    done = madeval("import", "lm-eval", path, "--task", "lm_eval:gsm8k", "--output-path", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert "2 docs sit at another position" in done.stderr
    assert "1 doc_hash values are not the hash of their doc" in done.stderr
    items = [r["unit"]["item"] for r in read_records(tmp_path / "out")]
    assert items == ["lm_eval:gsm8k-0", "lm_eval:gsm8k-1", "lm_eval:gsm8k-2"]  # each on the doc it holds


@pytest.mark.parametrize(("content", "expected"), [
    ('{"doc_id": 0, "doc": {}, "resps": [], "filter": "x"}\n{"doc_id": 1, "doc"', "line 2 is not JSON"),
    ('{"doc_id": 0, "doc": {}, "resps": []}\n', "line 1 has no 'filter': not lm-eval --log_samples output"),
    ('[1, 2]\n', "line 1 is not a JSON object"),
])
def test_bad_sample_files_are_one_line(tmp_path, content, expected):
    path = tmp_path / "samples_gsm8k_x.jsonl"
    path.write_text(content)
    done = madeval("import", "lm-eval", path, "--task", "gsm8k", "--output-path", tmp_path / "out")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and expected in done.stderr
    assert not (tmp_path / "out").exists()


def test_a_cut_gzip_sample_file_is_one_line(tmp_path):
    whole = HIGH.read_bytes()
    path = tmp_path / "samples_gsm8k_cut.jsonl.gz"
    path.write_bytes(whole[: len(whole) // 2])
    done = madeval("import", "lm-eval", path, "--task", "gsm8k", "--filter", "strict-match",
                   "--output-path", tmp_path / "out")
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "is cut short or damaged; nothing imported" in done.stderr
    assert not (tmp_path / "out").exists()
