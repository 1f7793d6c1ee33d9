"""``madeval export RUN --format inspect``: a simulator run plus two hand-made debates written as an
inspect-ai eval log through its public API, read back with ``read_eval_log``: one sample per (item,
configuration, repeat) with every message (agent, persona, turn in its metadata), the score with
the extracted answer, the dynamics of the debate in the sample's metadata, and each (configuration,
task)'s score as the leaderboard computes it."""

from __future__ import annotations

import os

import pytest

from debates_by_hand import HOSTILE, HOSTILE_LABEL, HOSTILE_RECORD, LOST
from helpers import madeval_in_process, run_quietly
from madeval.analysis.debate_facts import debate_facts
from madeval.export.inspect_log import sample_id
from madeval.leaderboard import build_leaderboard
from madeval.records.folder import encode_line, read_records
from madeval.settings.config import build_settings
from madeval.simulator import simulate

try:
    from inspect_ai.log import read_eval_log
except ImportError:  # the optional extra madeval[inspect]; make install installs it
    if os.environ.get("CI"):
        raise
    pytest.skip("inspect-ai is not installed (pip install 'madeval[inspect]')", allow_module_level=True)


@pytest.fixture(scope="module")
def exported(generated_tasks, tmp_path_factory):
    """A debate configuration and the direct baseline on arith_mc, 4 items, 2 repeats, plus LOST
    and HOSTILE_RECORD; exported with the command line."""
    folder = tmp_path_factory.mktemp("export") / "run"
    options = {"tasks": ["arith_mc"], "repeats": 2, "limit": 4, "seed": 3, "cache": "off",
               "common": {"agents": 3, "max_turns": 3}, "grid": {"decider": ["simple_voting"]},
               "runs": [{"preset": "baseline_direct"}]}
    with simulate(tasks=generated_tasks.values(), accuracy=0.6, conformity=0.3) as sim:
        run_quietly(build_settings({**options, "base_url": sim.base_url, "output_path": str(folder)}))
    with open(folder / "records.jsonl", "ab") as handle:
        handle.write(encode_line(LOST) + encode_line(HOSTILE_RECORD))
    output = folder.parent / "run.eval"
    done = madeval_in_process("export", str(folder), "--format", "inspect", "--output", str(output))
    assert done.returncode == 0, done.stderr
    return folder, output, done.stdout


def test_every_debate_is_one_sample_with_every_message(exported, generated_tasks):
    folder, output, printed = exported
    records = list(read_records(folder))
    assert printed.strip() == f"{len(records)} samples in {output}" and len(records) == 2 * 2 * 4 + 2
    log = read_eval_log(str(output))
    assert log.status == "success" and log.eval.task == "madeval/run"
    samples = {(s.id, s.epoch): s for s in log.samples}
    assert len(samples) == len(records)
    questions = {item.id: item.input for item in generated_tasks["arith_mc"].items}
    for record in records:
        unit, transcript = record["unit"], record["transcript"]
        plain = f"arith_mc/{unit['item']}/{record['config_label']}"
        assert (sample_id(record) == plain) == (record is not records[-1])  # the hostile ids are made safe
        sample = samples[(sample_id(record), unit["repeat"] + 1)]
        question = record.get("input") or questions[unit["item"]]
        assert sample.input == question and sample.target == record["target"]
        assert sample.messages[0].role == "user" and sample.messages[0].text == question
        said = sample.messages[1:]
        assert len(said) == len(transcript["messages"])
        names = {a["index"]: a["persona"]["name"] for a in transcript["agents"]}
        for shown, message in zip(said, transcript["messages"]):
            assert shown.role == "assistant"
            assert (shown.metadata["agent"], shown.metadata["turn"], shown.metadata["persona"],
                    shown.metadata["answer"]) \
                == (message["agent"], message["turn"], names[message["agent"]], message["answer"])
            if message["text"] != HOSTILE:  # checked in the next test
                assert shown.text == message["text"]
        score = sample.scores["accuracy"]
        assert score.value == record["metrics"]["accuracy"] and score.answer == record["prediction"]
        assert sample.metadata["dynamics"] == debate_facts(record, "accuracy").to_dict()
        assert sample.metadata["decision"]["reason"] == transcript["decision"]["reason"]


def test_the_hand_made_debates_keep_their_figures_and_their_text(exported):
    _, output, _ = exported
    log = read_eval_log(str(output))
    lost = next(s for s in log.samples if s.id == "arith_mc/lost-item/hand")
    dynamics = lost.metadata["dynamics"]
    assert dynamics["votes"] == ["B", "A"] and dynamics["vote_right"] == [True, False]
    assert (dynamics["first_turn_vote_right"], dynamics["final_right"], dynamics["drift"]) == (True, False, True)
    assert dynamics["transitions"] == {"correct_to_correct": 0, "correct_to_wrong": 2, "wrong_to_correct": 0,
                                       "wrong_to_wrong": 1}
    hostile = next(s for s in log.samples if s.metadata["configuration"] == HOSTILE_LABEL)
    assert hostile.metadata["item"] == HOSTILE.replace("\ud800",
                                                       "\ufffd") and "<" not in hostile.id and "\x00" not in hostile.id
    text = hostile.messages[1].text
    assert text == HOSTILE.replace("\ud800", "\ufffd")  # a lone surrogate cannot be stored as UTF-8
    assert hostile.messages[1].metadata["answer"] is None and hostile.metadata["dynamics"]["unparsed"] == 1


def test_the_log_s_results_are_the_leaderboard_s_scores(exported):
    folder, output, _ = exported
    log = read_eval_log(str(output), header_only=True)
    shown = {score.name: score.metrics["accuracy"].value for score in log.results.scores}
    board = build_leaderboard(folder)
    rows = {f"{r['label']}/{r['task']}": r["score"] for r in board["rows"] if r["metric"] == "accuracy"}
    assert len(rows) == 2 and {name: shown[name] for name in rows} == pytest.approx(rows)
    assert len(shown) == 4 and shown["hand/arith_mc"] == 0.0  # the board reads run.json's configurations only


def test_bad_input_is_one_line_and_status_2_with_nothing_written(exported, tmp_path):
    folder, _, _ = exported
    for arguments, said in [([str(tmp_path / "none"), "--output", str(tmp_path / "x.eval")],
                             "not a madeval run folder"),
                            ([str(folder), "--output", str(tmp_path / "x.txt")], "a .eval or .json file")]:
        done = madeval_in_process("export", *arguments, "--format", "inspect")
        assert done.returncode == 2 and said in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_record_of_another_shape_is_left_out_and_named(exported, tmp_path):
    import shutil

    from madeval.export.inspect_log import export_inspect

    folder, _, _ = exported
    copy = tmp_path / "run"
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("run.lock"))
    odd = {**LOST, "unit": {**LOST["unit"], "key": "odd", "item": "odd-item"},
           "transcript": {"messages": ["not a message"]}}
    with open(copy / "records.jsonl", "ab") as handle:
        handle.write(encode_line(odd))
    done = export_inspect(copy, tmp_path / "odd.eval")
    assert (done["samples"] == 2 * 2 * 4 + 2
            and done["notes"] == ["1 record with a transcript of another shape left out (odd)"])
    assert len(read_eval_log(str(tmp_path / "odd.eval")).samples) == done["samples"]


def test_the_export_and_the_viewer_say_the_same_of_what_they_left_out(exported, tmp_path):
    import shutil

    from madeval.export.inspect_log import export_inspect
    from madeval.viewer import write_viewer

    folder, _, _ = exported
    copy = tmp_path / "run"
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("run.lock"))
    lines = b"".join(encode_line({**LOST, "unit": {**LOST["unit"], "key": f"odd{n}", "item": f"odd-{n}"},
                                  "transcript": {"messages": [n]}}) for n in range(4))
    with open(copy / "records.jsonl", "ab") as handle:
        handle.write(lines + b"{not json\n")
    said = ["records left out: 1 broken line skipped (records.jsonl:%d)" % (2 * 2 * 4 + 2 + 4 + 1),
            "4 records with a transcript of another shape left out (odd0, odd1, odd2, ...)"]
    assert export_inspect(copy, tmp_path / "odd.eval")["notes"] == said
    assert write_viewer(copy, tmp_path / "odd.html")["notes"] == said


def usage_by_hand(record) -> dict[str, tuple[int, int, int, int | None]]:
    """Model -> (input, output, total, cache read) summed over the record's calls, response-cache hits
    left out; cache read None when no call of the model said."""
    found: dict[str, list] = {}
    for call in record["transcript"]["calls"]:
        if call.get("cached"):
            continue
        row = found.setdefault(call["model"], [0, 0, 0, None])
        row[0] += call["prompt_tokens"]
        row[1] += call["completion_tokens"]
        row[2] += call["prompt_tokens"] + call["completion_tokens"]
        if call.get("cached_prompt_tokens") is not None:
            row[3] = (row[3] or 0) + call["cached_prompt_tokens"]
    return {model: tuple(row) for model, row in found.items()}


def shown_usage(sample) -> dict[str, tuple]:
    return {model: (u.input_tokens, u.output_tokens, u.total_tokens, u.input_tokens_cache_read)
            for model, u in sample.model_usage.items()}


def test_each_sample_s_model_usage_is_its_calls_tokens(exported, tmp_path):
    """Read back with inspect-ai's reader: each sample's model_usage is its debate's calls summed per
    model (the simulator says nothing of its prompt cache: cache read None); with calls that said
    their cached prompt tokens (0 included), input_tokens_cache_read is their sum; the log's stats
    are the samples' sum. Before, model_usage was empty."""
    import shutil

    from madeval.export.inspect_log import export_inspect

    folder, output, _ = exported
    records = {(sample_id(r), r["unit"]["repeat"] + 1): r for r in read_records(folder)}
    samples = read_eval_log(str(output)).samples
    with_calls = [s for s in samples if records[(s.id, s.epoch)]["transcript"]["calls"]]
    assert len(with_calls) == 2 * 2 * 4  # the hand-made debates recorded no calls
    for sample in samples:
        assert shown_usage(sample) == usage_by_hand(records[(sample.id, sample.epoch)])
    assert all(u.input_tokens > 0 and u.input_tokens_cache_read is None
               for s in with_calls for u in s.model_usage.values())

    copy = tmp_path / "run"
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("run.lock"))
    told = []
    for record in read_records(folder):
        for n, call in enumerate(record["transcript"]["calls"]):
            call["cached_prompt_tokens"] = None if n % 3 == 2 else (n % 3) * (call["prompt_tokens"] // 2)
        told.append(record)
    (copy / "records.jsonl").write_bytes(b"".join(encode_line(r) for r in told))
    export_inspect(copy, tmp_path / "told.eval")
    log = read_eval_log(str(tmp_path / "told.eval"))
    records = {(sample_id(r), r["unit"]["repeat"] + 1): r for r in told}
    for sample in log.samples:
        assert shown_usage(sample) == usage_by_hand(records[(sample.id, sample.epoch)])
    assert any(u.input_tokens_cache_read for s in log.samples for u in s.model_usage.values())
    total = {}
    for record in told:
        for model, row in usage_by_hand(record).items():
            old = total.get(model, (0, 0, 0, None))
            total[model] = (*(a + b for a, b in zip(old[:3], row[:3])),
                            None if old[3] is None and row[3] is None else (old[3] or 0) + (row[3] or 0))
    assert {m: (u.input_tokens, u.output_tokens, u.total_tokens, u.input_tokens_cache_read)
            for m, u in log.stats.model_usage.items()} == total
