"""How long building a task's items takes, from its local mirror (the rows read and the items made).

    PYTHONPATH=. python bench/task_load.py [--repeats 7] [TASK ...]   (default: mmlu_pro mmlu)

Prints, per task, the best CPU seconds of ``task.items`` (the rows read from the data folder's
mirror and every item built) and of the item building alone (:meth:`madeval.task.definition.Task._item`
over the rows already read): each row is rendered, its options and target checked and its
prompt text written, so a per-row cost shows here (mmlu_pro has 12,032 rows, mmlu 14,042).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from madeval import load_task  # noqa: E402
from madeval.errors import UsageError  # noqa: E402


def best_cpu(work, repeats: int) -> float:
    """The least CPU time (seconds) of ``repeats`` calls of ``work``."""
    best = float("inf")
    for _ in range(repeats):
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best


def measure(name: str, repeats: int) -> tuple[int, float, float]:
    """``(items, seconds to load them, seconds to build them from read rows)`` for task ``name``."""
    items = load_task(name).items
    loading = best_cpu(lambda: load_task(name).items, repeats)
    task = load_task(name)
    docs = [item.doc for item in task.items]
    building = best_cpu(lambda: [task._item(index, doc) for index, doc in enumerate(docs)], repeats)
    return len(items), loading, building


def main() -> None:
    """Measure each task and print one line each."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tasks", nargs="*", default=["mmlu_pro", "mmlu"])
    parser.add_argument("--repeats", type=int, default=7, help="best of this many (default 7)")
    args = parser.parse_args()
    print(f"{'task':16} {'items':>7} {'load (s)':>9} {'build (s)':>9}  (best CPU of {args.repeats})")
    for name in args.tasks:
        try:
            count, loading, building = measure(name, args.repeats)
        except UsageError as error:  # no local mirror and no hub: say so, measure the others
            print(f"{name:16} skipped: {error}")
            continue
        print(f"{name:16} {count:7d} {loading:9.3f} {building:9.3f}  ({1e6 * building / count:.1f} us per item)")


if __name__ == "__main__":
    main()
