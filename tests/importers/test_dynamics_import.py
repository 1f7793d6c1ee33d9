"""Dynamics of imported runs (``madeval import mallm``): two MALLM debates worked out by hand, and
the 372 real MALLM debates against a direct count on MALLM's own JSON (issue 23 quotes, with
ce2f287's reader: first-turn vote 62.6%, final 54.0%, 113 agents right to wrong, 55 wrong to right,
unanimity 63% to 83%; the reader of real replies reads more answers, so the figures move)."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from test_import_mallm import CORPUS, MIRROR, mallm_record, mirror_rows, needs_corpus, write_json

from bench.mallm_answers import item_of, load_corpus
from madeval.core.plugins import registries
from madeval.importers.writer import import_files
from madeval.leaderboard import build_leaderboard
from madeval.settings.config import RunSettings
from madeval.task.definition import load_tasks
from madeval.viewer.debates import view_debate

needs_mirror = pytest.mark.skipif(not MIRROR.is_file(), reason="the MMLU-Pro mirror is not here")


@pytest.fixture(scope="module")
def mmlu_pro():
    return load_tasks(RunSettings(tasks=["mmlu_pro"]), registries())["mmlu_pro"]


def accuracy_entry(folder):
    board = build_leaderboard(folder)
    (entry,) = [e for e in board["dynamics"] if e["metric"] == "accuracy"]
    return entry


@needs_mirror
def test_two_imported_debates_counted_by_hand(tmp_path, mmlu_pro):
    first, second = mirror_rows(2)
    gold, other = first["answer"], "A" if first["answer"] != "A" else "B"
    right, wrong = f"Final Solution: {gold}", f"Final Solution: {other}"
    # turn 1: right, wrong, right (vote right); turn 2: all wrong (vote wrong, unanimous); decision wrong
    drifted = mallm_record(first, "e1", [(1, 0, False, right), (1, 1, False, wrong), (1, 2, False, right),
                                         (2, 0, False, wrong), (2, 1, True, wrong), (2, 2, True, wrong)], wrong)
    gold2, other2 = second["answer"], "A" if second["answer"] != "A" else "B"
    # turn 1: nobody commits to an answer (no vote: wrong); turn 2: right, right, wrong; decision right
    late = mallm_record(second, "e2", [(1, 0, False, "I cannot say."), (1, 1, False, "I cannot say."),
                                       (1, 2, False, "I cannot say."), (2, 0, False, f"Final Solution: {gold2}"),
                                       (2, 1, True, f"Final Solution: {gold2}"),
                                       (2, 2, False, f"Final Solution: {other2}")], f"Final Solution: {gold2}")
    path = write_json(tmp_path / "two.json", [drifted, late])
    import_files(registries().importers.create("mallm"), [path], mmlu_pro, tmp_path / "out")
    entry = accuracy_entry(tmp_path / "out")
    assert entry["items"] == 2 and entry["turns"] == 2
    assert (entry["first_turn_vote"], entry["final"]) == (0.5, 0.5)
    assert entry["vote_by_turn"] == [0.5, 0.5]
    assert entry["unanimous_by_turn"] == [0.0, 0.5]
    assert entry["agent_transitions"] == {"correct_to_correct": 0, "correct_to_wrong": 2, "wrong_to_correct": 2,
                                          "wrong_to_wrong": 2}
    assert (entry["drift"], entry["recovered"], entry["oracle_gap"], entry["unparsed"]) == (0.5, 0.0, 0.5, 3)
    assert entry["final_vs_first_turn_vote"]["delta"] == 0.0


def reference_figures(records, extract):
    """The issue's definitions worked directly on MALLM's own JSON (not through the importer, the
    transcript or madeval.dynamics): per record, each agent's answer per turn from its last message
    of the turn, the turn's vote by Counter.most_common, unanimity, transitions and the final answer."""
    first_votes = finals = unanimous_first = unanimous_last = 0
    moves = Counter()
    for record in records:
        item = item_of(record)
        gold = item.target
        turns = sorted({m["turn"] for m in record["globalMemory"]})
        agents = [p["agentId"] for p in record["personas"]]
        held: dict[str, str | None] = {}
        by_turn = []
        for turn in turns:
            for message in record["globalMemory"]:
                if message["turn"] == turn:  # the last message of the turn wins
                    held[message["agent_id"]] = extract(message["solution"], item) if message["solution"] else None
            by_turn.append(dict(held))
        first, last = by_turn[0], by_turn[-1]
        order = [a for m in record["globalMemory"] if m["turn"] == turns[0] for a in [m["agent_id"]]]
        parsed = [first[a] for a in dict.fromkeys(order) if first.get(a) is not None]
        first_votes += bool(parsed) and Counter(parsed).most_common(1)[0][0] == gold
        finals += extract(record["finalAnswer"], item) == gold if record["finalAnswer"] else 0
        for answers, bump in ((first, "first"), (last, "last")):
            values = [answers.get(a) for a in agents]
            if None not in values and len(set(values)) == 1:
                if bump == "first":
                    unanimous_first += 1
                else:
                    unanimous_last += 1
        for agent in agents:
            if agent in first:
                moves[("correct" if first[agent] == gold else "wrong") + "_to_"
                      + ("correct" if last.get(agent) == gold else "wrong")] += 1
    n = len(records)
    return {"first_turn_vote": first_votes / n, "final": finals / n, "unanimous_first": unanimous_first / n,
            "unanimous_last": unanimous_last / n, "moves": dict(moves)}


@pytest.fixture(scope="module")
def corpus_folder(tmp_path_factory, mmlu_pro):
    """The 372 real MALLM debates imported once for this module's tests."""
    folder = tmp_path_factory.mktemp("corpus") / "out"
    import_files(registries().importers.create("mallm"), [CORPUS], mmlu_pro, folder)
    return folder


@needs_corpus
def test_the_372_mallm_debates_give_the_figures_of_a_direct_count(corpus_folder, mmlu_pro):
    entry = accuracy_entry(corpus_folder)
    expected = reference_figures(load_corpus(), mmlu_pro.extract)
    assert entry["items"] == 372 and entry["turns"] == 7
    assert entry["first_turn_vote"] == pytest.approx(expected["first_turn_vote"])
    assert entry["final"] == pytest.approx(expected["final"])
    assert entry["agent_transitions"] == {k: expected["moves"].get(k, 0) for k in entry["agent_transitions"]}
    assert sum(entry["agent_transitions"].values()) == 3 * 372
    assert entry["unanimous_by_turn"][0] == pytest.approx(expected["unanimous_first"])
    assert entry["unanimous_by_turn"][-1] == pytest.approx(expected["unanimous_last"])
    # what the issue found with ce2f287's reader holds with today's: the debate ends below its first-turn vote
    assert entry["first_turn_vote"] > entry["final"]
    assert entry["agent_transitions"]["correct_to_wrong"] > entry["agent_transitions"]["wrong_to_correct"]
    versus = entry["final_vs_first_turn_vote"]
    assert versus["test"] == "mcnemar" and versus["delta"] == pytest.approx(entry["final"] - entry["first_turn_vote"])


@needs_corpus
def test_records_board_and_viewer_count_the_same_unread_replies(corpus_folder, mmlu_pro):
    """Every MALLM reply writes a solution of its own, agreeing or not: one the extractor cannot
    read is a parse failure of the record (it was one only when the reply disagreed, so a debate
    the viewer listed with unparsed answers could show none in its parse failures), an unparsed
    answer of the board's dynamics and of the viewer's row, counted directly on MALLM's JSON."""
    unread, unread_agreeing = Counter(), Counter()
    for record in load_corpus():
        item = item_of(record)
        for message in record["globalMemory"]:
            if mmlu_pro.read(message["solution"], item).answer is None:
                unread[str(record["datasetId"])] += 1
                unread_agreeing[str(record["datasetId"])] += message["agreement"] is True
    assert sum(unread_agreeing.values()) > 0  # the replies the records did not count
    records = [json.loads(line) for line in (corpus_folder / "records.jsonl").read_text().splitlines()]
    assert len(records) == 372
    counted = {str(r["unit"]["item"]): r["parse_failures"]["unparseable_solutions"] for r in records}
    viewed = {str(r["unit"]["item"]): view_debate(r, None, recorded=False).row["unparsed"] for r in records}
    assert {item: n for item, n in counted.items() if n} == dict(unread)
    assert viewed == counted
    assert accuracy_entry(corpus_folder)["unparsed"] == sum(unread.values())
