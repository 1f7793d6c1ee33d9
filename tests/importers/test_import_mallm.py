"""``madeval import mallm``: MALLM output files become ordinary run folders.

The real corpus (``shared/data/mallm``, 372 MMLU-Pro debates written by MALLM's own writer) and
small records in MALLM's exact layout (:func:`mallm_record`) whose outcomes are worked out by hand.
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import madeval_in_process
from madeval.core.plugins import registries
from madeval.core.transcript import Transcript
from madeval.importers.mallm import MallmImporter, vote_events
from madeval.importers.writer import import_files
from madeval.records.folder import read_records
from madeval.settings.config import RunSettings
from madeval.task.definition import load_tasks

CORPUS = Path(os.environ.get("MADEVAL_DATA_DIR", "")) / "mallm" / "mmlu_pro_memory_llama31_70b.json.gz"
MIRROR = Path(os.environ.get("MADEVAL_DATA_DIR", "")) / "mmlu_pro" / "test.jsonl"
needs_corpus = pytest.mark.skipif(not CORPUS.is_file(), reason="the shared MALLM corpus is not here")


def madeval(*args: str, cwd=None) -> subprocess.CompletedProcess:
    """The command line, in this process (the memory limit's test below starts its own)."""
    return madeval_in_process(*args, cwd=cwd)


@pytest.fixture(scope="module")
def mmlu_pro():
    return load_tasks(RunSettings(tasks=["mmlu_pro"]), registries())["mmlu_pro"]


def mirror_rows(count: int) -> list[dict]:
    with open(MIRROR, encoding="utf-8") as handle:
        return [json.loads(line) for _, line in zip(range(count), handle)]


def question_input(row: dict) -> str:
    """The question as MALLM shows it: the question, a blank line, then lettered options."""
    letters = "ABCDEFGHIJ"
    return row["question"] + "\n\n" + "\n".join(f"{letters[i]}) {o}" for i, o in enumerate(row["options"]))


def mallm_record(row: dict, example: str, messages: list[tuple[int, int, bool, str | None]], final: str | None,
                 *, dataset_id=True, votes: dict | None = None) -> dict:
    """A MALLM discussion record: ``messages`` are (turn, agent, agreement, solution)."""
    agents = [f"agent-{example}-{i}" for i in range(3)]
    memory = [{"message_id": n, "turn": turn, "agent_id": agents[agent], "persona": f"Expert {agent}",
               "contribution": "improve", "message": ("[AGREE] " if agreement else "[DISAGREE] ") + str(solution),
               "agreement": agreement, "solution": solution, "memory_ids": [], "additional_args": {}}
              for n, (turn, agent, agreement, solution) in enumerate(messages)]
    return {
        "dataset": "data/datasets/mmlu_pro.json", "exampleId": example,
        "datasetId": str(row["question_id"]) if dataset_id else None,
        "instruction": "Answer the provided question by choosing one option.", "coordinatorId": "c",
        "personas": [{"agentId": a, "model": "test-model", "persona": f"Expert {i}", "personaDescription": "knows"}
                     for i, a in enumerate(agents)],
        "persona_diversity": None, "paradigm": "memory", "input": [question_input(row)], "context": None,
        "finalAnswer": final, "votesEachTurn": votes or {}, "challengedAnswers": {}, "references": [row["answer"]],
        "metadata": None, "decisionSuccess": final is not None, "agreements": [],
        "turns": max(m[0] for m in messages), "clockSeconds": 12.5, "globalMemory": memory, "agentMemory": None,
    }


def write_json(path: Path, records, compress: bool = False) -> Path:
    data = json.dumps(records).encode()
    path.write_bytes(gzip.compress(data) if compress else data)
    return path


# ---------------------------------------------------------------- the real corpus


@pytest.fixture(scope="module")
def corpus_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mallm") / "run"
    done = madeval("import", "mallm", CORPUS, "--task", "mmlu_pro", "--output-path", folder)
    assert done.returncode == 0, done.stderr
    return folder, done


@needs_corpus
def test_the_corpus_imports_every_debate_on_its_own_item(corpus_run, mmlu_pro):
    folder, done = corpus_run
    with gzip.open(CORPUS, "rt", encoding="utf-8") as handle:
        source = json.load(handle)
    records = list(read_records(folder))
    assert len(records) == len(source) == 372
    for stored, original in zip(records, source):
        # datasetId is MMLU-Pro's question_id: MALLM's own reference letter is the item's gold
        assert stored["unit"]["item"] == original["datasetId"]
        assert stored["target"] == original["references"][0]
        transcript = Transcript.from_dict(stored["transcript"])
        assert [m.text for m in transcript.messages] == [m["message"] for m in original["globalMemory"]]
        assert [(m.turn, m.agreement, m.solution) for m in transcript.messages] == [
            (m["turn"], m["agreement"], m["solution"]) for m in original["globalMemory"]]
        assert [a.persona.name for a in transcript.agents] == [p["persona"] for p in original["personas"]]
        assert [m.agent for m in transcript.messages] == [
            [p["agentId"] for p in original["personas"]].index(m["agent_id"]) for m in original["globalMemory"]]
        assert transcript.decision.answer == original["finalAnswer"]
        assert [e["turn"] for e in transcript.events if e["kind"] == "vote"] == list(range(1, 8))
        assert stored["wall_s"] == original["clockSeconds"]
        item = next(i for i in mmlu_pro.items if i.id == original["datasetId"])
        # answers read by the task's own extractor chain, the same path a live debate takes
        assert [m.answer for m in transcript.messages] == [mmlu_pro.extract(m["solution"], item)
                                                           for m in original["globalMemory"]]
        assert stored["prediction"] == mmlu_pro.extract(original["finalAnswer"], item)
        assert stored["metrics"]["accuracy"] == float(stored["prediction"] == original["references"][0])


@needs_corpus
def test_the_corpus_board_shows_the_accuracy_of_the_final_answers(corpus_run, mmlu_pro):
    folder, done = corpus_run
    with gzip.open(CORPUS, "rt", encoding="utf-8") as handle:
        source = json.load(handle)
    items = {i.id: i for i in mmlu_pro.items}
    correct = sum(mmlu_pro.extract(r["finalAnswer"], items[r["datasetId"]]) == r["references"][0] for r in source)
    board = json.loads((folder / "leaderboard.json").read_text())
    row = next(r for r in board["rows"] if r["metric"] == "accuracy" and r["scope"] == "task")
    assert row["items"] == 372
    assert row["score"] == pytest.approx(correct / 372)
    shown = madeval("leaderboard", "show", folder)
    assert shown.returncode == 0, shown.stderr
    assert "mmlu_pro_memory_llama31_70b" in shown.stdout and "accuracy" in shown.stdout
    assert "372 debates imported" in done.stdout


@needs_corpus
def test_a_second_import_adds_nothing(corpus_run):
    folder, _ = corpus_run
    before = (folder / "records.jsonl").read_bytes()
    again = madeval("import", "mallm", CORPUS, "--task", "mmlu_pro", "--output-path", folder)
    assert again.returncode == 0, again.stderr
    assert "0 debates imported" in again.stdout and "372 already there" in again.stdout
    assert (folder / "records.jsonl").read_bytes() == before


@needs_corpus
def test_majority_consensus_replays_on_the_stored_agreement_flags(corpus_run, tmp_path):
    """Majority consensus re-decided on the seven-turn debates, checked against a direct count:
    after each message the current draft is the latest message that did not agree, its backers
    are its author and the agents whose latest message agreed with it, and two of three decide."""
    folder, _ = corpus_run
    copy = tmp_path / "run"
    copy.mkdir()
    for name in ("run.json", "records.jsonl"):
        (copy / name).write_bytes((folder / name).read_bytes())
    done = madeval("rescore", copy, "--decider", "majority_consensus", "--cache", "off")
    assert done.returncode == 0, done.stderr
    rescored = {r["unit"]["item"]: r for r in read_records_file(copy / "rescored.jsonl")}
    with gzip.open(CORPUS, "rt", encoding="utf-8") as handle:
        source = json.load(handle)
    assert len(rescored) == len(source)
    for original in source:
        expected_turn, expected_solution = majority_by_hand(original)
        record = rescored[original["datasetId"]]
        assert record["transcript"]["decision"]["turn"] == expected_turn
        assert record["transcript"]["decision"]["answer"] == expected_solution
        assert record["new_calls"] == 0


def majority_by_hand(record: dict) -> tuple[int, str]:
    agents = [p["agentId"] for p in record["personas"]]
    latest: dict[str, int] = {}
    backs: list[int] = []
    draft = None
    for n, message in enumerate(record["globalMemory"]):
        if message["agreement"] and draft is not None:
            backs.append(draft)
        else:
            backs.append(n)
            draft = n
        latest[message["agent_id"]] = n
        backers = sum(backs[latest[a]] == draft for a in agents if a in latest)
        if backers * 2 > len(agents):
            return message["turn"], record["globalMemory"][draft]["solution"]
    return record["globalMemory"][-1]["turn"], record["globalMemory"][draft]["solution"]


def read_records_file(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# ---------------------------------------------------------------- small records, outcomes by hand


def test_a_small_debate_is_kept_message_by_message(tmp_path, mmlu_pro):
    row = mirror_rows(1)[0]  # question 70, gold I
    votes = {"1": {"answers": ["Final Solution: C", "Final Solution: I"], "type": "consensus_voting",
                   "voting_process_string": "...",
                   "alterations": {"public": {"votes": [1, 1, 0], "final_answer": "Final Solution: I",
                                              "most_voted": 1, "agreed": True}}}}
    record = mallm_record(row, "e1", [(1, 0, False, "Final Solution: C"), (1, 1, False, "Final Solution: I"),
                                      (1, 2, True, "Final Solution: I")], "Final Solution: I", votes=votes)
    path = write_json(tmp_path / "small.json.gz", [record], compress=True)
    outcome = import_files(registries().importers.create("mallm"), [path], mmlu_pro, tmp_path / "out")
    assert outcome.added == 1 and outcome.files[0].label == "small"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out", "small.json.gz"]  # nothing beside the input
    (stored,) = read_records(tmp_path / "out")
    transcript = Transcript.from_dict(stored["transcript"])
    assert [(m.turn, m.step, m.agent, m.answer, m.agreement, m.backs) for m in transcript.messages] == [
        (1, 0, 0, "C", False, 0), (1, 1, 1, "I", False, 1), (1, 2, 2, "I", True, 1)]
    (vote,) = transcript.events
    assert [b["ballot"] for b in vote["ballots"]] == [2, 2, 1] and vote["winner"] == 2
    assert vote["totals"] == {"1": 1.0, "2": 2.0}
    assert (stored["prediction"], stored["metrics"]["accuracy"], stored["decision_success"]) == ("I", 1.0, True)
    run = json.loads((tmp_path / "out" / "run.json").read_text())
    (config,) = run["configurations"].values()
    assert (config["label"], config["agents"], config["max_turns"], config["paradigm"]) == ("small", 3, 1, "memory")
    assert config["imported"]["format"] == "mallm" and config["imported"]["vote_types"] == ["consensus_voting"]
    assert run["tasks"]["mmlu_pro"]["items"] == ["70"]


def test_items_without_an_id_match_by_their_question_text(tmp_path, mmlu_pro):
    rows = mirror_rows(3)
    records = [mallm_record(row, f"e{n}", [(1, 0, False, "Final Solution: A")], "A", dataset_id=False)
               for n, row in enumerate(rows)]
    records[1]["input"] = [rows[1]["question"] + "\n" + "\n".join(f"({c}) {o}" for c, o in zip("ABCDEFGHIJ",
                                                                                               rows[1]["options"]))]
    path = write_json(tmp_path / "noid.json", records)
    import_files(registries().importers.create("mallm"), [path], mmlu_pro, tmp_path / "out")
    assert [r["unit"]["item"] for r in read_records(tmp_path / "out")] == [str(r["question_id"]) for r in rows]


def test_refusals_and_a_null_final_answer_are_unparsed_answers(tmp_path, mmlu_pro):
    row = mirror_rows(1)[0]
    records = [mallm_record(row, "e1", [(1, 0, False, "I cannot answer this question.")], None),
               mallm_record(row, "e2", [(1, 0, False, "[DISAGREE]")], "I'm sorry, I can't help with that.")]
    path = write_json(tmp_path / "refusals.json", records)
    import_files(registries().importers.create("mallm"), [path], mmlu_pro, tmp_path / "out")
    first, second = read_records(tmp_path / "out")
    assert (first["unit"]["repeat"], second["unit"]["repeat"]) == (0, 1)  # the same item twice: two repeats
    for record in (first, second):
        assert record["prediction"] is None and record["parse_failure"] is True
        assert record["metrics"]["accuracy"] == 0.0
        assert record["parse_failures"]["unparseable_solutions"] == 1
    assert first["decision_success"] is False and second["decision_success"] is True


def test_rescore_consensus_on_a_hand_worked_debate(tmp_path):
    """Turn 1: agent 0 drafts C, agent 1 disagrees with I, agent 2 agrees (with I); turn 2: agent 0
    agrees. Majority (2 of 3 back I) decides after turn 1's third message; unanimity in turn 2."""
    row = mirror_rows(1)[0]
    record = mallm_record(row, "e1", [(1, 0, False, "Final Solution: C"), (1, 1, False, "Final Solution: I"),
                                      (1, 2, True, "Final Solution: I"), (2, 0, True, "Final Solution: I"),
                                      (2, 1, True, "Final Solution: I"), (2, 2, True, "Final Solution: I")],
                          "Final Solution: I")
    path = write_json(tmp_path / "worked.json", [record])
    assert madeval("import", "mallm", path, "--task", "mmlu_pro", "--output-path", tmp_path / "out").returncode == 0
    done = madeval("rescore", tmp_path / "out", "--decider", "majority_consensus,unanimity_consensus,counting",
                   "--cache", "off")
    assert done.returncode == 0, done.stderr
    rescored = read_records_file(tmp_path / "out" / "rescored.jsonl")
    decided = {r["configuration"]["replayed_decider"]: r for r in rescored}
    majority, unanimity, counting = (decided[d]["transcript"]["decision"] for d in
                                     ("majority_consensus", "unanimity_consensus", "counting"))
    assert (majority["turn"], majority["answer"], majority["success"]) == (1, "Final Solution: I", True)
    assert [m["id"] for m in decided["majority_consensus"]["transcript"]["messages"]] == [0, 1, 2]
    assert (unanimity["turn"], unanimity["answer"]) == (2, "Final Solution: I")
    assert (counting["turn"], counting["answer"]) == (2, "I")  # counting at max_turns: plurality of I, I, I


def test_a_decider_that_needs_calls_says_so_in_one_line(tmp_path):
    row = mirror_rows(1)[0]
    record = mallm_record(row, "e1", [(t, a, False, "Final Solution: C") for t in (1, 2, 3) for a in range(3)], "C")
    path = write_json(tmp_path / "votes.json", [record])
    assert madeval("import", "mallm", path, "--task", "mmlu_pro", "--output-path", tmp_path / "out").returncode == 0
    done = madeval("rescore", tmp_path / "out", "--decider", "simple_voting", "--cache", "off")
    assert done.returncode == 2
    assert "needs model calls" in done.stderr and "give --base-url" in done.stderr
    assert not (tmp_path / "out" / "rescored.jsonl").exists()


# ---------------------------------------------------------------- bad input


def assert_refused(done: subprocess.CompletedProcess, expected: str, out: Path) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("madeval: error: "), done.stderr
    assert expected in lines[0], lines[0]
    assert not out.exists()
    assert not [p for p in out.parent.iterdir() if ".importing" in p.name]


def test_a_truncated_gzip_file_is_refused_and_nothing_is_written(tmp_path):
    rows = mirror_rows(5)
    whole = gzip.compress(json.dumps([mallm_record(r, f"e{n}", [(1, 0, False, "A")], "A")
                                      for n, r in enumerate(rows)]).encode())
    path = tmp_path / "cut.json.gz"
    path.write_bytes(whole[: len(whole) * 2 // 3])
    done = madeval("import", "mallm", path, "--task", "mmlu_pro", "--output-path", tmp_path / "out")
    assert_refused(done, "cut.json.gz is not complete JSON", tmp_path / "out")


def test_a_json_array_cut_short_is_refused(tmp_path):
    rows = mirror_rows(3)
    text = json.dumps([mallm_record(r, f"e{n}", [(1, 0, False, "A")], "A") for n, r in enumerate(rows)])
    path = tmp_path / "cut.json"
    path.write_text(text[:-200])
    done = madeval("import", "mallm", path, "--task", "mmlu_pro", "--output-path", tmp_path / "out")
    assert_refused(done, "cut.json is not complete JSON", tmp_path / "out")


def test_a_file_that_is_not_json_is_refused(tmp_path):
    path = tmp_path / "notes.json"
    path.write_text("these are my notes, not MALLM output\n")
    done = madeval("import", "mallm", path, "--task", "mmlu_pro", "--output-path", tmp_path / "out")
    assert_refused(done, "notes.json is not MALLM output", tmp_path / "out")


def test_records_of_another_version_name_the_missing_key(tmp_path):
    record = mallm_record(mirror_rows(1)[0], "e1", [(1, 0, False, "A")], "A")
    del record["globalMemory"]
    path = write_json(tmp_path / "old.json", [record])
    done = madeval("import", "mallm", path, "--task", "mmlu_pro", "--output-path", tmp_path / "out")
    assert_refused(done, "old.json: record 1 has no 'globalMemory'", tmp_path / "out")


def test_a_task_that_matches_no_record_is_refused(tmp_path):
    record = mallm_record(mirror_rows(1)[0], "e1", [(1, 0, False, "A")], "A")
    path = write_json(tmp_path / "mmlu.json", [record])
    done = madeval("import", "mallm", path, "--task", "gsm8k", "--output-path", tmp_path / "out")
    assert_refused(done, "task gsm8k has no item for any of the 1 records of mmlu.json", tmp_path / "out")


def test_a_bad_file_leaves_an_earlier_import_as_it_was(tmp_path, mmlu_pro):
    rows = mirror_rows(2)
    good = write_json(tmp_path / "good.json", [mallm_record(rows[0], "e1", [(1, 0, False, "A")], "A")])
    import_files(registries().importers.create("mallm"), [good], mmlu_pro, tmp_path / "out")
    before = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir() if p.name != "run.lock"}
    second = mallm_record(rows[1], "e2", [(1, 0, False, "A")], "A")
    del second["finalAnswer"]
    bad = write_json(tmp_path / "bad.json", [mallm_record(rows[1], "e3", [(1, 0, False, "A")], "A"), second])
    done = madeval("import", "mallm", bad, "--task", "mmlu_pro", "--output-path", tmp_path / "out")
    assert done.returncode == 2 and "record 2 has no 'finalAnswer'" in done.stderr
    after = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir() if p.name != "run.lock"}
    assert after == before


def test_duplicates_and_unmatched_records_are_counted_never_dropped_silently(tmp_path):
    rows = mirror_rows(2)
    stranger = {**rows[1], "question_id": 99999999, "question": "A question no benchmark asks?"}
    records = [mallm_record(rows[0], "e1", [(1, 0, False, "A")], "A"),
               mallm_record(rows[0], "e1", [(1, 0, False, "B")], "B"),
               mallm_record(stranger, "e2", [(1, 0, False, "A")], "A"),
               mallm_record(rows[1], "e3", [(1, 0, False, "F")], "F")]
    path = write_json(tmp_path / "mixed.json", records)
    done = madeval("import", "mallm", path, "--task", "mmlu_pro", "--output-path", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 2
    assert "1 record matches no item" in lines[0] and '"99999999"' in lines[0]
    assert "1 duplicate record skipped" in lines[1] and 'exampleId "e1", record 2' in lines[1]
    stored = list(read_records(tmp_path / "out"))
    assert [(r["unit"]["item"], r["prediction"]) for r in stored] == [("70", "A"), ("71", "F")]


def test_fifty_thousand_records_stream_through(tmp_path, mmlu_pro):
    """50,000 records (items repeated) import one at a time; the memory figure is the benchmark's
    (``python -m bench import``), not this test's."""
    rows = mirror_rows(50)
    path = tmp_path / "big.json"
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("[")
        for n in range(50_000):
            record = mallm_record(rows[n % 50], f"e{n}", [(1, 0, False, "Final Solution: A")], "A")
            handle.write(("," if n else "") + json.dumps(record))
        handle.write("]")
    outcome = import_files(registries().importers.create("mallm"), [path], mmlu_pro, tmp_path / "out")
    assert outcome.added == 50_000
    with open(tmp_path / "out" / "records.jsonl", "rb") as handle:
        assert sum(1 for _ in handle) == 50_000
    last = json.loads(line_at_end(tmp_path / "out" / "records.jsonl"))
    assert (last["unit"]["item"], last["unit"]["repeat"]) == (str(rows[49]["question_id"]), 999)


def line_at_end(path: Path) -> str:
    with open(path, "rb") as handle:
        handle.seek(max(0, path.stat().st_size - 65536))
        return handle.read().splitlines()[-1].decode()


def test_mallm_votes_become_vote_events():
    votes = {"2": {"answers": ["x", "y"], "type": "approval_voting",
                   "alterations": {"public": {"votes": [0, 7], "most_voted": 0, "agreed": False}}},
             "1": {"answers": ["x"], "type": "approval_voting",
                   "alterations": {"public": {"votes": [0, 0, 0], "most_voted": 0, "agreed": True}}}}
    first, second = vote_events(votes, 3)
    assert (first["turn"], first["winner"], [b["ballot"] for b in first["ballots"]]) == (1, 1, [1, 1, 1])
    assert (second["turn"], second["winner"], second["tie"]) == (2, None, True)
    assert [b["abstained"] for b in second["ballots"]] == [False, True, True]  # 7 is no answer; agent 3 gave none


def test_the_importers_are_plugins(tmp_path):
    listed = json.loads(madeval("plugins", "--json").stdout)
    (builtin,) = [p for p in listed if p["name"] == "madeval.importers.plugin"]
    assert builtin["components"]["importers"] == ["lm-eval", "mallm"]
    assert "register_importers" in builtin["hooks"]
    done = madeval("import", "malm", tmp_path / "x.json", "--task", "mmlu_pro", "--output-path", tmp_path / "out")
    assert done.returncode == 2 and "unknown importer 'malm'; did you mean mallm" in done.stderr


def test_a_second_plugin_with_the_same_importer_name_is_refused():
    from madeval.core.hookspecs import hookimpl
    from madeval.errors import UsageError
    from madeval.testing import registered

    class Clash:
        @staticmethod
        @hookimpl
        def register_importers(register):
            register("mallm", MallmImporter)

    with pytest.raises(UsageError, match="importer name 'mallm' is registered by both plugin"):
        with registered(Clash):
            registries()


def test_hostile_fields_are_kept_as_text_and_never_crash_the_import(tmp_path, mmlu_pro):
    """Control characters, markup, a 2 MB reply, fields of the wrong type."""
    row = mirror_rows(1)[0]
    hostile = "<script>alert(1)</script>\x1b[2J\u0000" + "x" * 2_000_000 + " FINAL SOLUTION: I"
    record = mallm_record(row, "e1", [(1, 0, False, hostile)], "FINAL SOLUTION: I")
    record.update(references=[["I"], {"x": 1}], metadata={"a": [[[{"b": None}]]]}, clockSeconds="soon")
    record["personas"][0]["persona"] = {"name": ["nested"]}
    path = write_json(tmp_path / "hostile.json", [record])
    outcome = import_files(registries().importers.create("mallm"), [path], mmlu_pro, tmp_path / "out")
    assert outcome.added == 1
    (stored,) = read_records(tmp_path / "out")
    message = stored["transcript"]["messages"][0]
    assert message["text"] == "[DISAGREE] " + hostile and message["answer"] == "I"
    assert stored["transcript"]["decision"]["details"]["references"] == []  # not letters: not kept
    assert stored["transcript"]["agents"][0]["persona"]["name"] == "Agent 1"  # not text: a placeholder
    assert (stored["prediction"], stored["wall_s"]) == ("I", None)


def test_json_nested_past_any_record_is_refused_in_bounded_memory(tmp_path):
    """100,000 nested brackets (200 KB): ijson's item prefixes alone would take gigabytes."""
    row = mirror_rows(1)[0]
    text = json.dumps(mallm_record(row, "e1", [(1, 0, False, "A")], "A"))
    path = tmp_path / "deep.json"
    path.write_text("[" + text.replace('"metadata": null', '"metadata": ' + "[" * 100_000 + "]" * 100_000) + "]")
    done = subprocess.run(["bash", "-c", 'ulimit -v 2000000; exec "$@"', "-", sys.executable, "-m", "madeval",
                           "import", "mallm", str(path), "--task", "mmlu_pro", "--output-path", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=600)
    assert_refused(done, "deep.json: JSON nested more than 64 levels deep", tmp_path / "out")


def test_an_unread_solution_keeps_the_reason_as_a_live_debate_does(tmp_path, mmlu_pro):
    row = mirror_rows(1)[0]
    record = mallm_record(row, "e1", [(1, 0, False, "ANSWER: A, E"), (1, 1, False, "Final Solution: C"),
                                      (1, 2, False, "I cannot answer this question.")], "ANSWER: A, E")
    import_files(registries().importers.create("mallm"), [write_json(tmp_path / "n.json", [record])], mmlu_pro,
                 tmp_path / "out")
    (stored,) = read_records(tmp_path / "out")
    notes = [m.parse_notes for m in Transcript.from_dict(stored["transcript"]).messages]
    assert notes[1] == ()  # read as C: nothing to say
    assert notes[0] == (f"no answer: {mmlu_pro.no_answer_reason('ANSWER: A, E', None)}",)
    assert notes[2] and notes[2][0].startswith("no answer: ") and notes[2] != notes[0]
    assert stored["parse_note"] == mmlu_pro.no_answer_reason("ANSWER: A, E", None)


def test_import_prints_the_table_and_quotes_a_label_as_text(tmp_path):
    """The board printed after an import is the table (the rest is in leaderboard.md, or --explain); a
    label given or read from a file reaches the terminal without the escape sequences it holds (an
    OSC 52 sequence would write the clipboard). Before, the whole board went out with them."""
    row = mirror_rows(1)[0]
    record = mallm_record(row, "e1", [(1, agent, True, "Final Solution: C") for agent in range(3)], "Final Solution: C")
    path = write_json(tmp_path / "one.json", [record])
    out = tmp_path / "out"
    done = madeval("import", "mallm", path, "--task", "mmlu_pro", "--output-path", out, "--label",
                   "evil\x1b]52;c;aGk=\x07")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout
    (row,) = [line for line in done.stdout.splitlines() if line.startswith("| evil")]
    assert "52;c;aGk=" in row and "debates imported as 'evil]52;c;aGk='" in done.stdout
    assert "Columns:" not in done.stdout and "Columns:" in (out / "leaderboard.md").read_text()
    assert f"{out / 'leaderboard.md'} and .html; --explain prints them." in done.stdout
