"""A user's own lm-eval-format task folder, found through --include-path, runs through lm-eval."""

from __future__ import annotations

import io
import json

from madeval.evaluation import run
from madeval.settings.config import RunSettings, debate_config
from madeval.simulator import simulate

TASK_YAML = """\
task: tiny_sums
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
output_type: generate_until
test_split: test
doc_to_text: !function utils.doc_to_text
doc_to_target: "{{{{answer}}}}"
generation_kwargs:
  until: ["\\n\\n"]
filter_list:
  - name: final-number
    filter:
      - function: regex
        regex_pattern: "(?i)final solution:\\\\s*(-?[0-9]+)"
      - function: take_first
metric_list:
  - metric: exact_match
    aggregation: mean
    higher_is_better: true
"""

UTILS = '''
def doc_to_text(doc):
    return f"What is {doc['a']} plus {doc['b']}? (tiny_sums #{doc['id']})"
'''


def write_folder(tmp_path):
    folder = tmp_path / "lm_tasks"
    folder.mkdir()
    data = tmp_path / "sums.jsonl"
    rows = [{"id": i, "a": i, "b": 2 * i + 1, "answer": str(3 * i + 1)} for i in range(12)]
    data.write_text("".join(json.dumps(row) + "\n" for row in rows))
    (folder / "tiny_sums.yaml").write_text(TASK_YAML.format(data=data))
    (folder / "utils.py").write_text(UTILS)
    return folder, rows


def test_lmeval_yaml_folder_runs_through_include_path(tmp_path):
    from madeval.core.plugins import registries
    from madeval.task.definition import task_loader
    from madeval.task.files import task_index

    folder, rows = write_folder(tmp_path)
    index = task_index(registries(), [str(folder)])
    assert index.expand("tiny_sums") == ["lm_eval:tiny_sums"]  # claimed: lm-eval's format, not madeval's
    task = task_loader(index, registries().extractors, registries().metrics)("lm_eval:tiny_sums")
    items = task.items
    assert [item.input for item in items[:2]] == ["What is 0 plus 1? (tiny_sums #0)",
                                                  "What is 1 plus 3? (tiny_sums #1)"]
    assert task.metric_names == ["exact_match,final-number"]
    assert task.score("Final Solution: 4", items[1]) == {"exact_match,final-number": 1.0}
    assert task.score("Final Solution: 5", items[1]) == {"exact_match,final-number": 0.0}
    assert task.score("4", items[1]) == {"exact_match,final-number": 0.0}  # the regex needs its marker
    with simulate(tasks=[task], accuracy=1.0, conformity=0.0) as sim:
        result = run(RunSettings(tasks=["tiny_sums"], include_path=[str(folder)], base_url=sim.base_url,
                                 configurations=[debate_config({"preset": "baseline_cot"})],
                                 output_path=str(tmp_path / "run"), cache="off", transport="direct"),
                     show_progress=False, out=io.StringIO())
    assert result.outcome.finished == len(rows)
    row = next(r for r in result.rows if r["metric"] == "exact_match,final-number")
    assert row["task"] == "lm_eval:tiny_sums" and row["score"] == 1.0  # always-right agents, lm-eval's filter
