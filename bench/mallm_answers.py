"""``python -m bench mallm-answers``: how well madeval reads the answers of real MALLM debates.

Reads the shared corpus of 372 MALLM debates (Llama-3.1-70B on MMLU-Pro, ``mallm/`` in the data
folder; its README gives provenance and format) with the ``mmlu_pro`` task's extractor chain and
prints:

* the share of the 7,812 agent solutions read as no answer (MALLM's own pattern beside it);
* agreement with the hand-labelled sample ``tests/metrics/fixtures/mallm_answers/labels.jsonl`` and the
  number of replies read as a letter other than the labelled one (a label of "none" included);
* the accuracy of the 372 final answers as madeval reads them and as MALLM's scorer reads them;
* the time to read all 7,812 solutions (best of ``--repeats``).

Each item's options come from the record's ``input[0]`` (the question, a blank line, then
``A) ...`` lines), the way they reach the extractor in a run (``Item.choices``).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

ROOT = Path(__file__).resolve().parent.parent
CORPUS = "mallm/mmlu_pro_memory_llama31_70b.json.gz"
LABELS = ROOT / "tests" / "metrics" / "fixtures" / "mallm_answers" / "labels.jsonl"
OPTION_LINE = re.compile(r"([A-Z])\) (.*)")
NOTE_LETTER = re.compile(r"\b[A-Z]\b")
NOTE_DETAIL = re.compile(r"\s*\([^()]*\)|:.*")

# MALLM's scorer as its README describes it (reimplemented here, not copied): the letter after
# "Final Solution:" (in any case: "FINAL SOLUTION: B"; case-sensitive it scores 214 final answers,
# not the 215 = 57.8% MALLM reports), else the first capital letter followed by ")", "]", ":" or
# the end of the text.
MALLM_FINAL = re.compile(r"Final Solution\s*:\s*([A-Z])", re.IGNORECASE)
MALLM_LETTER = re.compile(r"([A-Z])([)\]:]|$)")


def corpus_path() -> Path:
    """The shared corpus file under ``MADEVAL_DATA_DIR``."""
    return Path(os.environ.get("MADEVAL_DATA_DIR", "/work/shared/data")) / CORPUS


def load_corpus(path: Path | None = None) -> list[dict[str, Any]]:
    """The corpus's records (a JSON array, gzipped)."""
    with gzip.open(path or corpus_path(), "rt", encoding="utf-8") as handle:
        return json.load(handle)


def options_of(question: str) -> tuple[str, ...]:
    """The option texts of a MALLM input: the ``A) ...`` lines of its last paragraph, in order
    (a line that is no option continues the option before it)."""
    options: list[str] = []
    for line in question.rsplit("\n\n", 1)[-1].splitlines():
        match = OPTION_LINE.fullmatch(line)
        if match and match.group(1) == chr(ord("A") + len(options)):
            options.append(match.group(2))
        elif options:
            options[-1] += "\n" + line
    return tuple(options)


def item_of(record: dict[str, Any]):
    """The madeval item of one MALLM record: its question with options, gold letter and choices."""
    from madeval.core.item import Item

    question = record["input"][0]
    return Item(str(record["exampleId"]), question, record["references"][0], choices=options_of(question))


def solutions(records: list[dict[str, Any]]) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Every ``(record, message)`` of the corpus, in order."""
    for record in records:
        for message in record["globalMemory"]:
            yield record, message


def mallm_letter(text: str | None) -> str | None:
    """The letter MALLM's scorer reads in ``text`` (see :data:`MALLM_FINAL`)."""
    if not text:
        return None
    match = MALLM_FINAL.search(text) or MALLM_LETTER.search(text)
    return match.group(1) if match else None


def reader(task_name: str = "mmlu_pro"):
    """``(text, item) -> (answer, note)`` with the task's own extractor chain.

    The task reads each reply once for both (:meth:`Task.read` with :meth:`Task.reader`, as a
    run does); an older madeval, for a before/after comparison, is asked twice (``extract``, then
    ``no_answer_reason``), and one from before parse notes gives no note.
    """
    from madeval.core.plugins import registries
    from madeval.task.definition import task_loader
    from madeval.task.files import task_index

    found = registries()
    task = task_loader(task_index(found, []), found.extractors, found.metrics)(task_name)
    if hasattr(task, "reader"):  # one reading of each reply, as a run reads its solutions
        def read_once(text: str, item) -> tuple[str | None, str | None]:
            reading = task.read(text, item)
            return reading.answer, reading.note

        return read_once
    explain = getattr(task, "no_answer_reason", None)  # madeval before parse notes has none

    def read(text: str, item) -> tuple[str | None, str | None]:
        answer = task.extract(text, item)
        return answer, (explain(text, item) if answer is None and explain else None)

    return read


def kind_of(note: str) -> str:
    """A parse note without its particulars ("names several options (A, E)" -> "names several
    options"), to count notes by kind."""
    return NOTE_DETAIL.sub("", NOTE_LETTER.sub("X", note)).strip()


def load_labels(path: Path = LABELS) -> list[dict[str, Any]]:
    """The labelled sample: one JSON object a line (see the fixture's README)."""
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def label_agreement(read, records: list[dict[str, Any]], labels: list[dict[str, Any]]) -> dict[str, Any]:
    """How the reader's answers compare with the labels: agreements, wrong letters (a letter other
    than the label, a label of none included) and the disagreements themselves."""
    by_key = {(str(r["exampleId"]), m["message_id"]): (r, m) for r, m in solutions(records)}
    items = {str(r["exampleId"]): item_of(r) for r in records}
    agree, wrong, missed = 0, [], []
    for label in labels:
        record, message = by_key[(label["exampleId"], label["message_id"])]
        answer, _ = read(message["solution"], items[label["exampleId"]])
        if answer == label["answer"]:
            agree += 1
        elif answer is None:
            missed.append(label)
        else:
            wrong.append({**label, "read": answer})
    return {"labels": len(labels), "agree": agree, "wrong": wrong, "missed": missed}


def measure(read, records: list[dict[str, Any]], labels: list[dict[str, Any]], repeats: int = 3) -> dict[str, Any]:
    """Every figure the command prints (see the module docstring)."""
    items = {str(r["exampleId"]): item_of(r) for r in records}
    pairs = [(m["solution"], items[str(r["exampleId"])]) for r, m in solutions(records)]
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        readings = [read(text, item) for text, item in pairs]
        best = min(best, time.perf_counter() - started)
    notes = Counter(kind_of(note) for answer, note in readings if answer is None and note)
    finals = [(read(r["finalAnswer"] or "", items[str(r["exampleId"])])[0], mallm_letter(r["finalAnswer"]),
               r["references"][0]) for r in records]
    return {
        "solutions": len(pairs),
        "unparsed": sum(answer is None for answer, _ in readings),
        "unparsed_mallm": sum(mallm_letter(text) is None for text, _ in pairs),
        "notes": notes.most_common(),
        "labels": label_agreement(read, records, labels) if labels else None,
        "finals": len(finals),
        "final_correct": sum(ours == gold for ours, _, gold in finals),
        "final_correct_mallm": sum(theirs == gold for _, theirs, gold in finals),
        "final_unparsed": sum(ours is None for ours, _, _ in finals),
        "final_unparsed_mallm": sum(theirs is None for _, theirs, _ in finals),
        "extract_s": best,
    }


def print_report(figures: dict[str, Any], show: int) -> None:
    """The figures as a plain table, the targets of issue 22 beside them."""
    n, f = figures["solutions"], figures["finals"]
    rows = [
        ("unparsed solutions", f"{figures['unparsed']} of {n} ({100 * figures['unparsed'] / n:.1f}%; target <= 7%); "
                               f"MALLM's pattern {figures['unparsed_mallm']} "
                               f"({100 * figures['unparsed_mallm'] / n:.1f}%)"),
        ("why unparsed", ", ".join(f"{note} {count}" for note, count in figures["notes"]) or "(no notes)"),
    ]
    labels = figures["labels"]
    if labels:
        rows += [
            ("agreement with labels", f"{labels['agree']} of {labels['labels']} "
                                      f"({100 * labels['agree'] / labels['labels']:.1f}%; target >= 98%)"),
            ("wrong letters",
             f"{len(labels['wrong'])} (target 0); {len(labels['missed'])} labelled answers read as none"),
        ]
    rows += [
        ("final answers, madeval",
         f"{figures['final_correct']} of {f} correct ({100 * figures['final_correct'] / f:.1f}%), "
                                   f"{figures['final_unparsed']} unparsed"),
        ("final answers, MALLM", f"{figures['final_correct_mallm']} of {f} correct "
                                 f"({100 * figures['final_correct_mallm'] / f:.1f}%), "
                                 f"{figures['final_unparsed_mallm']} unparsed"),
        ("time to read all", f"{figures['extract_s']:.3f} s for {n} solutions "
                             f"({1e6 * figures['extract_s'] / n:.0f} us each, best of repeats)"),
    ]
    width = max(len(name) for name, _ in rows)
    for name, value in rows:
        print(f"{name.ljust(width)}  {value}")
    if labels:
        for kind in ("wrong", "missed"):
            for label in labels[kind][:show]:
                print(f"  {kind}: {label['exampleId']}#{label['message_id']} label {label['answer'] or 'none'}"
                      f"{' read ' + label['read'] if 'read' in label else ''}: {label['solution'][-160:]!r}")


def main(argv: list[str] | None = None) -> None:
    """Parse the options, measure, print."""
    parser = argparse.ArgumentParser(prog="python -m bench mallm-answers", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=None, help=f"default: $MADEVAL_DATA_DIR/{CORPUS}")
    parser.add_argument("--labels", type=Path, default=LABELS)
    parser.add_argument("--task", default="mmlu_pro")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--show", type=int, default=10, help="disagreements with the labels to print")
    args = parser.parse_args(argv)
    corpus = args.corpus or corpus_path()
    if not corpus.is_file():
        parser.error(f"no MALLM corpus at {corpus} (set MADEVAL_DATA_DIR or give --corpus)")
    records = load_corpus(corpus)
    labels = load_labels(args.labels) if args.labels.exists() else []
    if not labels:
        print(f"no labels at {args.labels}: agreement not measured", file=sys.stderr)
    print_report(measure(reader(args.task), records, labels, args.repeats), args.show)


if __name__ == "__main__":
    main()
