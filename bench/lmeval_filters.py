"""lm-eval's own answer filters and exact-match scoring, applied to replies (run in lm-eval's venv).

Reads JSON lines ``{"task": "gsm8k" | "mmlu_pro", "reply": ..., "target": ...}`` on stdin and
writes, per line, ``{filter name: [filtered answer, exact match 0/1]}``. The filters and the
metric settings are read from lm-eval's installed task files (``gsm8k/gsm8k.yaml``,
``mmlu_pro/_default_template_yaml``), so the reference is lm-eval's configuration, not a copy.
``bench/extraction_agreement.py`` starts this script; it needs no madeval import.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import lm_eval
import yaml
from lm_eval.api.metrics import exact_match_hf_evaluate
from lm_eval.filters import build_filter_ensemble

TASK_FILES = {"gsm8k": "gsm8k/gsm8k.yaml", "mmlu_pro": "mmlu_pro/_default_template_yaml"}


class TaskFileLoader(yaml.SafeLoader):
    """A YAML loader for lm-eval task files that leaves ``!function`` references unresolved."""


TaskFileLoader.add_constructor("!function", lambda loader, node: None)


def task_config(task: str) -> dict:
    """lm-eval's configuration of ``task`` (its filter_list and metric_list)."""
    path = Path(lm_eval.__file__).parent / "tasks" / TASK_FILES[task]
    return yaml.load(path.read_text(), Loader=TaskFileLoader)


def pipelines(task: str) -> list[tuple[str, object]]:
    """(name, filter ensemble) for each filter pipeline of ``task``, as lm-eval builds them."""
    built = []
    for entry in task_config(task)["filter_list"]:
        steps = [(step["function"], {k: v for k, v in step.items() if k != "function"}) for step in entry["filter"]]
        built.append((entry["name"], build_filter_ensemble(entry["name"], steps)))
    return built


def exact_match_settings(task: str) -> dict:
    """The keyword arguments of lm-eval's exact_match metric for ``task``."""
    metric = next(m for m in task_config(task)["metric_list"] if m["metric"] == "exact_match")
    return {k: v for k, v in metric.items() if k in ("regexes_to_ignore", "ignore_case", "ignore_punctuation")}


def filtered(ensemble, reply: str) -> str:
    """The answer lm-eval's filter pipeline keeps from one reply."""
    responses = [[reply]]
    for make_filter in ensemble.filters:
        responses = list(make_filter().apply(responses, [{}]))
    return responses[0]


def main() -> None:
    """Filter and score every JSON line of stdin; one JSON line out per line in."""
    cache: dict[str, tuple[list, dict]] = {}
    for line in sys.stdin:
        row = json.loads(line)
        task = row["task"]
        if task not in cache:
            cache[task] = (pipelines(task), exact_match_settings(task))
        built, settings = cache[task]
        out = {}
        for name, ensemble in built:
            answer = filtered(ensemble, row["reply"])
            score = exact_match_hf_evaluate([answer], [row["target"]], **settings)["exact_match"]
            out[name] = [answer, int(score)]
        sys.stdout.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
