"""How long answer extraction takes on hostile replies of about 10 MB, per shipped task.

    PYTHONPATH=. python bench/extraction_speed.py [--megabytes 10]

Each reply is built to make a careless extractor slow: runs of white space after "answer:" (a
pattern that can split the run in every way backtracks quadratically), a million "Final
Solution:" markers (copying the rest of the reply per marker is quadratic), an unclosed
``\\boxed{{{...``, parentheses and digits, "####" lines. It prints the seconds each task's
extractor chain takes and the slowest; every one should be well under a second.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from madeval.core.plugins import registries  # noqa: E402
from madeval.task.definition import Item, task_loader  # noqa: E402
from madeval.task.files import task_index  # noqa: E402

TASKS = ("mmlu_pro", "gsm8k", "math500", "aime2024", "strategyqa", "musr_murder_mysteries", "squad_v2")
TEN = Item("y", "q", "J", choices=tuple(f"option {i}" for i in range(10)))


def hostile_replies(size: int) -> dict[str, str]:
    """Replies of about ``size`` characters, each aimed at one way a regex or a loop goes wrong."""
    return {
        "answer: then spaces": "answer:" + " " * size + "1",
        "answer is x then spaces": "the answer is x" + " " * size + "y",
        "final then spaces": "final" + " " * size + "x",
        "markers, no line ends": "Final Solution: " * (size // 16),
        "marked lines": "FINAL SOLUTION: A\n" * (size // 18),
        "parentheses and digits": "(1) ((2)) (A) 3,4. (b) \\boxed{{5} " * (size // 34),
        "an open box": "\\boxed{" + "{" * size,
        "hash lines": "#### 5 = 5 = 5\n" * (size // 15),
        "digits and commas": "1," * (size // 2),
        "I and spaces": ("I" + " " * 1000) * (size // 1001),
        "restated option": "FINAL SOLUTION: (E) " + "option 4 " * (size // 9),
    }


def main() -> None:
    """Time every task's extractor chain on every hostile reply and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--megabytes", type=float, default=10.0, help="size of each reply (default 10)")
    args = parser.parse_args()
    built = registries()
    load = task_loader(task_index(built, []), built.extractors, built.metrics)
    tasks = [load(name) for name in TASKS]
    replies = hostile_replies(int(args.megabytes * 1_000_000))
    print(f"{'reply (' + str(args.megabytes) + ' MB)':28}" + "".join(f" {t.name[:10]:>10}" for t in tasks))
    slowest = (0.0, "", "")
    for name, reply in replies.items():
        row = []
        for task in tasks:
            started = time.perf_counter()
            task.extract(reply, TEN)
            seconds = time.perf_counter() - started
            slowest = max(slowest, (seconds, name, task.name))
            row.append(seconds)
        print(f"{name:28}" + "".join(f" {s:>9.3f}s" for s in row))
    print(f"slowest: {slowest[0]:.3f} s ({slowest[1]}, {slowest[2]})")


if __name__ == "__main__":
    main()
