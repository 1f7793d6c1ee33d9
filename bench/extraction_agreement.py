"""Answer extraction: madeval against lm-eval's own filters, on a corpus of reply forms.

    PYTHONPATH=. MADEVAL_DATA_DIR=/work/shared/data python bench/extraction_agreement.py \\
        [--lm-eval-python /work/lmeval-venv/bin/python] [--items N] [--show K]

For every item of the gsm8k and mmlu_pro mirrors it writes replies in many forms (polite ones
such as "The answer is 18." and hostile ones such as "#### 18" followed by a check sentence that
mentions 25, or an option restated with its own sub-labels), each form twice: stating the gold
answer and stating a wrong one (the gold number plus one, the next option). madeval's extractor
chain reads each reply; so do lm-eval's filters for the task (gsm8k: strict-match and
flexible-extract; mmlu_pro: custom-extract), run by ``bench/lmeval_filters.py`` in lm-eval's own
venv and compared with lm-eval's exact_match settings. It prints, per reply form, how many
replies each reader reads as the answer they state and how many madeval cannot answer, then how
often madeval and each lm-eval filter agree (both read the stated answer, or both do not), and
examples where they differ.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from madeval.core.plugins import registries  # noqa: E402
from madeval.metrics.answers import answers_match  # noqa: E402
from madeval.task.definition import LETTERS, Item, task_loader  # noqa: E402
from madeval.task.files import task_index  # noqa: E402

LMEVAL_PYTHON = "/work/lmeval-venv/bin/python"
NO_ANSWER = "[invalid]"  # lm-eval's RegexFilter fallback
FILTERS = {"gsm8k": ("strict-match", "flexible-extract"), "mmlu_pro": ("custom-extract",)}


def gsm8k_forms() -> dict[str, Callable[[int, random.Random], str]]:
    """Reply forms stating the GSM8K answer ``n`` (``rng`` picks the other numbers in them)."""
    return {
        "#### N": lambda n, r: f"She buys {r.randint(2, 9)} packs.\n#### {n}",
        "The answer is N.": lambda n, r: f"Adding it up, the answer is {n}.",
        "FINAL SOLUTION: N": lambda n, r: f"Step 1: {r.randint(2, 9)} bags.\nFINAL SOLUTION: {n}",
        "\\boxed{N}": lambda n, r: f"So the total is $\\boxed{{{n}}}$.",
        "The answer is $N.00": lambda n, r: f"The answer is ${n}.00",
        "N apples": lambda n, r: f"{r.randint(2, 9)} friends share them, so each gets\n{n} apples",
        "#### 1,234 (separators)": lambda n, r: f"In total:\n#### {n:,}",
        "The answer is 1,234.": lambda n, r: f"The answer is {n:,}.",
        "x = N": lambda n, r: f"Let x be the total. Then\nx = {n}",
        "a negative number, then #### N": lambda n, r: f"The level first fell by -{r.randint(2, 9)}.\n#### {n}",
        "**Final Answer:** N": lambda n, r: f"**Final Answer:** {n}",
        "The answer is A + B = N.": lambda n, r: (lambda k: f"The answer is {n - k} + {k} = {n}.")(r.randint(1, 9)),
        "FINAL SOLUTION: A + B = N": lambda n, r: (lambda k: f"FINAL SOLUTION: {n - k} + {k} = {n}")(r.randint(1, 9)),
        "\\boxed{A + B = N}": lambda n, r: (lambda k: f"Hence \\boxed{{{n - k} + {k} = {n}}}.")(r.randint(1, 9)),
        "#### N, then a check with other numbers": lambda n, r: (
            lambda k: f"#### {n}\nCheck: {n} + {k} = {n + k}, which matches the {n + k} she had."
        )(r.randint(2, 30)),
        "#### N, then a wrong line before a right one": lambda n, r: f"#### {n + 3}\nWait, I added 3 twice.\n#### {n}",
        "#### Step headings, then #### N": lambda n, r: f"#### Step 1: count\n{r.randint(2, 9)} boxes.\n#### {n}",
        "The answer is N. Then a double check": lambda n, r: (
            lambda k: f"The answer is {n}. Double-check: {n} - {k} = {n - k}."
        )(r.randint(1, 9)),
        "The answer is N (= A + B).": lambda n, r: (
            lambda k: f"The answer is {n} (= {n - k} + {k})."
        )(r.randint(1, 9)),
        "#### $N": lambda n, r: f"#### ${n}",
        "#### **N**": lambda n, r: f"#### **{n}**",
    }


def mmlu_pro_forms() -> dict[str, Callable[[str, str, str], str]]:
    """Reply forms stating the MMLU-Pro option ``letter`` with text ``text`` (``other``: another)."""
    return {
        "FINAL SOLUTION: L": lambda L, t, o: f"Let me think.\nFINAL SOLUTION: {L}",
        "The answer is (L).": lambda L, t, o: f"Let me think step by step. The answer is ({L}).",
        "The answer is L.": lambda L, t, o: f"The answer is {L}.",
        "Answer: L.": lambda L, t, o: f"Answer: {L}.",
        "**L**": lambda L, t, o: f"**{L}**",
        "The correct option is L.": lambda L, t, o: f"Checking each one, the correct option is {L}.",
        "L) text": lambda L, t, o: f"{L}) {t}",
        "final solution: l": lambda L, t, o: f"final solution: {L.lower()}",
        "L (a lone letter)": lambda L, t, o: L,
        "FINAL SOLUTION: (L) text": lambda L, t, o: f"FINAL SOLUTION: ({L}) {t}",
        "FINAL SOLUTION: L) text": lambda L, t, o: f"FINAL SOLUTION: {L}) {t}",
        "The answer is (L) text": lambda L, t, o: f"The answer is ({L}) {t}",
        "(M) mentioned, then the answer is (L)": lambda L, t, o: (
            f"Option ({o}) looks plausible, but it fails. The answer is ({L})."
        ),
        "the answer is (M) first, then (L)": lambda L, t, o: (
            f"At first the answer is ({o}), I thought; on reflection the answer is ({L})."
        ),
        "(M) mentioned, then FINAL SOLUTION: L": lambda L, t, o: (
            f"({o}) is wrong because of the units.\nFINAL SOLUTION: {L}"
        ),
    }


@dataclass
class Reply:
    """One reply of the corpus and what each reader made of it."""

    task: str
    form: str
    text: str
    item: Item
    stated: str
    lm_target: str
    madeval: str | None = None
    madeval_reads: bool = False
    lm_eval: dict[str, tuple[str, int]] = field(default_factory=dict)


def corpus(loaded: dict, limit: int | None) -> list[Reply]:
    """Every form of reply for the first ``limit`` items (all when ``None``) of each task."""
    rng = random.Random(0)
    replies = []
    for item in loaded["gsm8k"].items[:limit]:
        gold = int(float(item.target))
        for form, write in gsm8k_forms().items():
            for stated in (gold, gold + 1):
                replies.append(Reply("gsm8k", form, write(stated, rng), item, str(stated), f"#### {stated}"))
    for item in loaded["mmlu_pro"].items[:limit]:
        for index in (LETTERS.index(item.target), (LETTERS.index(item.target) + 1) % len(item.choices)):
            letter, other = LETTERS[index], LETTERS[(index + 3) % len(item.choices)]
            for form, write in mmlu_pro_forms().items():
                text = write(letter, item.choices[index], other)
                replies.append(Reply("mmlu_pro", form, text, item, letter, letter))
    return replies


def read_with_madeval(loaded: dict, replies: list[Reply]) -> None:
    """madeval's answer for every reply, and whether it is the answer the reply states."""
    for reply in replies:
        task = loaded[reply.task]
        reply.madeval = task.extract(reply.text, reply.item)
        reply.madeval_reads = answers_match(task.answer_type, reply.madeval, reply.stated)


def read_with_lm_eval(python: str, replies: list[Reply]) -> None:
    """lm-eval's filtered answer and exact match for every reply, from lm-eval's own venv."""
    rows = "".join(
        json.dumps({"task": r.task, "reply": r.text, "target": r.lm_target}) + "\n" for r in replies
    )
    done = subprocess.run(
        [python, str(Path(__file__).with_name("lmeval_filters.py"))],
        input=rows, capture_output=True, text=True, check=True,
    )
    for reply, line in zip(replies, done.stdout.splitlines(), strict=True):
        reply.lm_eval = {name: tuple(value) for name, value in json.loads(line).items()}


def report(task: str, replies: list[Reply], show: int) -> None:
    """Print the table of one task: per form, replies read as the answer they state."""
    filters = FILTERS[task]
    by_form: dict[str, list[Reply]] = defaultdict(list)
    for reply in replies:
        by_form[reply.form].append(reply)
    items = len({r.item.id for r in replies})
    print(f"\n{task}: {len(replies):,} replies ({items:,} items x {len(by_form)} forms x gold and wrong), "
          "read as the answer they state")
    header = f"{'form':48} {'madeval':>8} {'no answer':>9}" + "".join(f" {name:>16}" for name in filters)
    print(header)
    totals = Counter()
    for form, group in by_form.items():
        right = sum(r.madeval_reads for r in group)
        none = sum(r.madeval is None for r in group)
        lm = [sum(r.lm_eval[name][1] for r in group) for name in filters]
        totals.update({"madeval": right, "none": none, **{name: n for name, n in zip(filters, lm)}})
        print(f"{form[:48]:48} {right:>8,} {none:>9,}" + "".join(f" {n:>16,}" for n in lm))
    print(f"{'all forms':48} {totals['madeval']:>8,} {totals['none']:>9,}"
          + "".join(f" {totals[name]:>16,}" for name in filters))
    for name in filters:
        differ = [r for r in replies if r.madeval_reads != bool(r.lm_eval[name][1])]
        print(f"madeval and lm-eval {name} agree on {len(replies) - len(differ):,} of {len(replies):,}; "
              f"only madeval reads the stated answer in {sum(r.madeval_reads for r in differ):,}, "
              f"only {name} in {sum(not r.madeval_reads for r in differ):,}")
        found = [r for r in replies if r.lm_eval[name][0] != NO_ANSWER]
        differ = [r for r in found if r.madeval_reads != bool(r.lm_eval[name][1])]
        print(f"  where {name} finds an answer ({len(found):,} replies) they agree on {len(found) - len(differ):,}; "
              f"differing, with examples:")
        shown = Counter()
        for reply in differ:
            if shown[reply.form] < show:
                shown[reply.form] += 1
                print(f"    [{reply.form}] {reply.text[:90]!r}\n        states {reply.stated!r}: "
                      f"madeval {reply.madeval!r}, {name} {reply.lm_eval[name][0]!r}")


def main() -> None:
    """Build the corpus, read it with both harnesses and print the comparison."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lm-eval-python", default=LMEVAL_PYTHON, help="a Python with lm-eval installed")
    parser.add_argument("--items", type=int, default=None, help="the first N items of each task (default all)")
    parser.add_argument("--show", type=int, default=1, help="differing examples shown per form (default 1)")
    args = parser.parse_args()
    built = registries()
    load = task_loader(task_index(built, []), built.extractors, built.metrics)
    loaded = {name: load(name) for name in FILTERS}
    replies = corpus(loaded, args.items)
    read_with_madeval(loaded, replies)
    read_with_lm_eval(args.lm_eval_python, replies)
    for task in FILTERS:
        report(task, [r for r in replies if r.task == task], args.show)


if __name__ == "__main__":
    main()
