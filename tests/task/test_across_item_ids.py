"""Content-based item ids (``doc_to_id: !content``): a re-ordered copy of a dataset's mirror gives
every item the same id, so runs on either copy pair item for item; identical items get numbered ids."""

from __future__ import annotations

import hashlib
import json
import random
import textwrap

from helpers import run_quietly, settings_for
from madeval.core.plugins import registries
from madeval.leaderboard import build_merged_leaderboard
from madeval.records.folder import read_records
from madeval.settings.config import RunSettings
from madeval.simulator import simulate
from madeval.task.definition import load_tasks

ROWS = [{"question": f"What is {i} + {i % 5}?", "choices": [str(i), str(i + i % 5), str(i + 9)], "answer": 1}
        for i in range(12)]
#: Row 12 repeats row 3 exactly: the two copies are interchangeable and get ``<id>`` and ``<id>-2``.
ROWS.append(dict(ROWS[3]))


def write_task(folder):
    """A multiple-choice task read from the mirror ``mini/test.jsonl``, named by content."""
    folder.mkdir()
    (folder / "mini.yaml").write_text(textwrap.dedent("""
        task: mini
        dataset: {path: nobody/mini, split: test, mirror: mini/test.jsonl}
        doc_to_id: !content
        doc_to_text: question
        doc_to_choice: choices
        doc_to_target: answer
        answer_type: choice
        instruction: "Pick one. Make absolutely sure to provide your solution in the end: 'FINAL SOLUTION: <Letter>'."
        answer_extraction: [final_solution]
    """))
    return folder


def write_mirror(root, rows):
    (root / "mini").mkdir(parents=True)
    (root / "mini" / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return root


def mini_task(tasks_folder):
    return load_tasks(RunSettings(tasks=["mini"], include_path=[str(tasks_folder)]), registries())["mini"]


def expected_id(row):
    """The id by hand: SHA-256 of the canonical JSON [text, context, options, target letter], 12 hex digits."""
    canonical = json.dumps([row["question"], None, row["choices"], "ABC"[row["answer"]]],
                           ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def test_across_content_ids_are_hashes_of_the_item_and_repeats_are_numbered(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("MADEVAL_DATA_DIR", str(write_mirror(tmp_path / "data", ROWS)))
    items = mini_task(write_task(tmp_path / "tasks")).items
    assert [item.id for item in items[:12]] == [expected_id(row) for row in ROWS[:12]]
    assert items[12].id == expected_id(ROWS[3]) + "-2"


def test_across_reordered_mirror_gives_the_same_ids_item_for_item(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    tasks_folder = write_task(tmp_path / "tasks")
    shuffled = ROWS[:]
    random.Random(7).shuffle(shuffled)
    assert shuffled != ROWS
    runs = {}
    folders = []
    for agents, (name, rows) in enumerate((("original", ROWS), ("reordered", shuffled)), start=2):
        monkeypatch.setenv("MADEVAL_DATA_DIR", str(write_mirror(tmp_path / f"data-{name}", rows)))
        task = mini_task(tasks_folder)
        with simulate(tasks=[task], accuracy=0.7) as sim:
            settings = settings_for(sim.base_url, tmp_path, tasks=["mini"], include_path=[str(tasks_folder)],
                                    output_path=str(tmp_path / name), max_turns=1, agents=agents)
            result, _ = run_quietly(settings)
        folders.append(result.folder)
        by_input = {item.input: item.id for item in task.items}
        # every recorded unit's item, by the question it asked (the copy of row 3 asks the same one)
        runs[name] = {record["unit"]["item"] for record in read_records(result.folder)}, by_input
    (ids_a, inputs_a), (ids_b, inputs_b) = runs["original"], runs["reordered"]
    assert len(ids_a) == len(ROWS) and ids_a == ids_b
    assert inputs_a == inputs_b  # the same question has the same id in both copies
    # the run on the re-ordered copy pairs with the original's on every item
    merged = build_merged_leaderboard(folders)
    (comparison,) = [c for c in merged["comparisons"] if c["metric"] == "accuracy"]
    assert comparison["items"] == len(ROWS) and comparison["units"] == len(ROWS) and merged["merged"]["notes"] == []
