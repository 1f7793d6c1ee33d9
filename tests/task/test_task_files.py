"""Task YAML mechanics: include, !function, templates, groups, include paths and data sources."""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import pytest

from madeval.core.plugins import registries
from madeval.errors import UsageError
from madeval.settings.config import RunSettings
from madeval.task.definition import load_tasks
from madeval.task.files import task_index
from madeval.task.sources import DataUnavailable


def write(folder, name, text):
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


@pytest.fixture
def task_folder(tmp_path):
    folder = tmp_path / "tasks"
    folder.mkdir()
    write(folder, "_mc_template.yaml", """
        answer_type: choice
        instruction: Pick one.
        answer_extraction: [final_solution, lone_letter]
        metric_list: [{metric: accuracy}]
    """)
    write(folder, "rows.py", '''
        def make(size, seed):
            return [{"q": f"Question {i}?", "opts": ["x", "y", "z"], "gold": "y", "n": i} for i in range(size)]

        def upper(doc):
            return doc["q"].upper()
    ''')
    write(folder, "templated.yaml", """
        task: templated
        include: _mc_template.yaml
        tag: [mine]
        dataset: {generator: !function rows.make, size: 5, seed: 1}
        doc_to_id: "item-{{ n }}"
        doc_to_text: !function rows.upper
        doc_to_choice: opts
        doc_to_target: gold
    """)
    write(folder, "jsonl.yaml", """
        task: from_mirror
        include: _mc_template.yaml
        dataset: {path: someone/some-dataset, name: default, split: test, mirror: some/test.jsonl}
        doc_to_text: "{{ question }} ({{ subject }})"
        doc_to_choice: "{{ choices }}"
        doc_to_target: answer
    """)
    write(folder, "group.yaml", """
        group: my_group
        task: [templated, from_mirror]
    """)
    return folder


def tasks_named(names, folder):
    return load_tasks(RunSettings(tasks=names, include_path=[str(folder)]), registries())


def test_include_function_and_template_fields(task_folder):
    task = tasks_named(["templated"], task_folder)["templated"]
    assert task.instruction == "Pick one." and task.answer_type == "choice"
    first = task.items[0]
    assert first.id == "item-0" and first.target == "B"
    assert first.input == "QUESTION 0?\nA) x\nB) y\nC) z"
    assert task.extract("final solution: c", first) == "C"
    assert task.score("B", first) == {"accuracy": 1.0} and task.score(None, first) == {"accuracy": 0.0}


def test_task_code_edited_between_two_loads_in_one_process_is_read_afresh(task_folder, monkeypatch):
    """A notebook runs a task, edits its code and runs it again: the second load uses the new code,
    also when a relative include path names another folder from another working directory."""
    assert tasks_named(["templated"], task_folder)["templated"].items[0].input.startswith("QUESTION 0?")
    code = (task_folder / "rows.py").read_text().replace("doc[\"q\"].upper()", "doc[\"q\"].lower() + '!'")
    (task_folder / "rows.py").write_text(code)
    assert tasks_named(["templated"], task_folder)["templated"].items[0].input.startswith("question 0?!")
    other = task_folder.parent / "elsewhere"
    (other / "tasks").mkdir(parents=True)
    for path in task_folder.iterdir():
        (other / "tasks" / path.name).write_text(path.read_text().replace("Question", "Other"))
    monkeypatch.chdir(task_folder.parent)
    assert tasks_named(["templated"], "tasks")["templated"].items[0].input.startswith("question 0?!")
    monkeypatch.chdir(other)
    assert tasks_named(["templated"], "tasks")["templated"].items[0].input.startswith("other 0?!")


def test_mirror_is_read_when_the_data_dir_holds_it(task_folder, tmp_path, monkeypatch):
    data = tmp_path / "data" / "some"
    data.mkdir(parents=True)
    rows = [{"question": f"Q{i}", "subject": "logic", "choices": ["a", "b", "c", "d"],
             "answer": i % 4} for i in range(7)]
    (data / "test.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    monkeypatch.setenv("MADEVAL_DATA_DIR", str(tmp_path / "data"))
    task = tasks_named(["from_mirror"], task_folder)["from_mirror"]
    assert len(task.items) == 7
    assert task.items[3].input.startswith("Q3 (logic)\nA) a") and task.items[3].target == "D"
    assert task.items[3].id == "from_mirror-3"


def test_missing_data_names_the_variable(task_folder, monkeypatch):
    monkeypatch.delenv("MADEVAL_DATA_DIR", raising=False)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    expected = r"set MADEVAL_DATA_DIR to the folder of local mirrors \(mirror file some/test.jsonl\)"
    with pytest.raises(DataUnavailable, match=expected):
        tasks_named(["from_mirror"], task_folder)


def test_missing_data_with_the_variable_set_names_the_missing_file(task_folder, tmp_path, monkeypatch):
    monkeypatch.setenv("MADEVAL_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(DataUnavailable) as raised:
        tasks_named(["from_mirror"], task_folder)
    assert f"MADEVAL_DATA_DIR is set ({tmp_path}) but has no file some/test.jsonl" in str(raised.value)
    assert "set MADEVAL_DATA_DIR to" not in str(raised.value)


def test_unknown_keys_fail_with_the_closest_known_key(task_folder):
    write(task_folder, "typo.yaml", """
        task: typo_key
        include: _mc_template.yaml
        dataset: {generator: !function rows.make, size: 3, seed: 1}
        doc_to_text: q
        doc_to_choice: opts
        doc_to_target: gold
        metrc_list: [{metric: accuracy}]
    """)
    with pytest.raises(UsageError, match=r"task typo_key: unknown key 'metrc_list'; did you mean metric_list\?"):
        tasks_named(["typo_key"], task_folder)
    write(task_folder, "typo.yaml", """
        task: typo_dataset
        include: _mc_template.yaml
        dataset: {generator: !function rows.make, size: 3, seeed: 1}
    """)
    with pytest.raises(UsageError, match=r"dataset: unknown key 'seeed'; did you mean seed\?"):
        tasks_named(["typo_dataset"], task_folder)
    write(task_folder, "typo.yaml", "group: typo_group\ntask: [templated]\naggregate_metrics: []\n")
    expected = r"group typo_group: unknown key 'aggregate_metrics'; did you mean aggregate_metric_list\?"
    with pytest.raises(UsageError, match=expected):
        task_index(registries(), [str(task_folder)]).group_spec("typo_group")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("gld", r"'gld' is not a column of the rows; did you mean gold\? \(columns: q, opts, gold, n\)"),
        ("opt", r"'opt' is not a column of the rows; did you mean opts\?"),
        ("questoin", r"'questoin' is not a column of the rows \(columns: q, opts, gold, n\)"),  # one word
    ],
)
def test_misspelt_column_names_fail(task_folder, value, message):
    write(task_folder, "typo.yaml", f"""
        task: typo_column
        include: _mc_template.yaml
        dataset: {{generator: !function rows.make, size: 3, seed: 1}}
        doc_to_text: {value}
        doc_to_choice: opts
        doc_to_target: gold
    """)
    with pytest.raises(UsageError, match="task typo_column: doc_to_text " + message):
        tasks_named(["typo_column"], task_folder)


def test_literal_text_and_templates_still_render(task_folder):
    write(task_folder, "literal.yaml", """
        task: literal_text
        include: _mc_template.yaml
        dataset: {generator: !function rows.make, size: 3, seed: 1}
        doc_to_text: Which letter is the middle one?
        doc_to_context: "{{ 'Letters' }}"
        doc_to_choice: opts
        doc_to_target: gold
    """)
    item = tasks_named(["literal_text"], task_folder)["literal_text"].items[0]
    assert item.input.startswith("Which letter is the middle one?\nA) x") and item.context == "Letters"


def documented_yaml_blocks() -> list[str]:
    """The ```yaml blocks of the tasks page (docs/tasks.md), in order."""
    text = (Path(__file__).resolve().parents[2] / "docs" / "tasks.md").read_text(encoding="utf-8")
    return re.findall(r"```yaml\n(.*?)```", text, flags=re.DOTALL)


def test_the_documented_task_example_loads_and_renders_like_the_shipped_task(tmp_path, monkeypatch):
    data = Path(__file__).resolve().parents[3] / "shared" / "data"
    monkeypatch.setenv("MADEVAL_DATA_DIR", os.environ.get("MADEVAL_DATA_DIR") or str(data))
    example = next(block for block in documented_yaml_blocks() if block.startswith("task:"))
    folder = tmp_path / "doc"
    folder.mkdir()
    (folder / "example.yaml").write_text(example.replace("task: musr_murder_mysteries", "task: doc_example", 1))
    documented = tasks_named(["doc_example"], folder)["doc_example"]
    shipped = load_tasks(RunSettings(tasks=["musr_murder_mysteries"]), registries())["musr_murder_mysteries"]
    assert len(documented.items) == 250
    first = documented.items[0]
    prompt = documented.prompt(first)
    assert prompt.context == first.doc["narrative"] and "\nA) " in prompt.input
    assert documented.instruction == shipped.instruction
    # the same items, prompts and targets as the shipped task (only the default ids differ by name)
    assert [(i.input, i.context, i.target, i.choices) for i in documented.items] == [
        (i.input, i.context, i.target, i.choices) for i in shipped.items
    ]
    reply = documented.reference_reply(first)
    assert documented.score(documented.extract(reply, first), first) == {"accuracy": 1.0}


def test_the_documented_group_example_parses(tmp_path):
    example = next(block for block in documented_yaml_blocks() if block.startswith("group:"))
    (tmp_path / "group.yaml").write_text(example.replace("group: bbh", "group: doc_group", 1))
    index = task_index(registries(), [str(tmp_path)])
    assert index.group_spec("doc_group").tasks == index.group_spec("bbh").tasks
    assert index.group_spec("doc_group").aggregate_metric_list == index.group_spec("bbh").aggregate_metric_list


def test_groups_and_tags_expand(task_folder):
    index = task_index(registries(), [str(task_folder)])
    assert index.expand("my_group") == ["templated", "from_mirror"]
    assert index.expand("mine") == ["templated"]
    assert index.expand("generated") == ["arith_mc", "arith_yesno"]


def test_include_path_overrides_a_builtin_task(tmp_path):
    folder = tmp_path / "override"
    folder.mkdir()
    (folder / "arith_mc.yaml").write_text((registries().task_sources[0][1] / "generated" / "arith_mc.yaml").read_text()
                                          .replace("size: 1000", "size: 12"))
    (folder / "arith.py").write_text((registries().task_sources[0][1] / "generated" / "arith.py").read_text())
    assert len(tasks_named(["arith_mc"], folder)["arith_mc"].items) == 12


def test_include_cycle_is_reported(tmp_path):
    write(tmp_path, "a.yaml", "task: a\ninclude: b.yaml\n")
    write(tmp_path, "b.yaml", "include: a.yaml\n")
    with pytest.raises(UsageError, match="include cycle"):
        task_index(registries(), [str(tmp_path)])


def test_generated_tasks_are_deterministic_and_correct(generated_tasks):
    items = generated_tasks["arith_mc"].items
    assert len(items) == 1000 and len({i.input for i in items}) == 1000
    for item in items[:200]:
        expression = item.doc["question"].removeprefix("What is ").removesuffix("?")
        assert item.choices[ord(item.target) - ord("A")] == str(eval(expression))  # noqa: S307 - our own numbers
    yes_no = generated_tasks["arith_yesno"].items
    assert sum(i.target == "yes" for i in yes_no) == len(yes_no) // 2
    for item in yes_no[:200]:
        left, right = item.doc["question"].removeprefix("Is ").removesuffix("?").split(" greater than ")
        assert (eval(left) > int(right)) == (item.target == "yes")  # noqa: S307


def test_generated_rows_are_made_once_per_process_and_handed_out_as_copies(generated_tasks):
    """The generator's rows are kept per (size, seed): a second load gets equal rows, not the first
    load's objects, so a change to one load's rows is not in the next."""
    generator = generated_tasks["arith_mc"].spec["dataset"]["generator"].resolve()
    first = generator(size=50, seed=3)
    first[0]["choices"][0] = "changed"
    first[1]["question"] = "changed"
    again = generator(size=50, seed=3)
    assert again[0]["choices"][0] != "changed" and again[1]["question"] != "changed"
    assert [row["id"] for row in again] == [f"arith-mc-{i:05d}" for i in range(50)]
    assert generator(size=50, seed=4) != again  # another seed, other rows
    yes_no = generated_tasks["arith_yesno"].spec["dataset"]["generator"].resolve()
    rows = yes_no(size=10, seed=3)
    rows[0]["answer"] = "changed"
    assert yes_no(size=10, seed=3)[0]["answer"] is True


def test_a_task_file_changed_between_two_loads_in_one_process_is_read_afresh(task_folder):
    """Parsed task files are kept per process by their bytes: an edit that keeps the file's size and
    lands within the file system's timestamp tick is still seen, and what a caller changes in one
    load's spec is not in the next."""
    first = tasks_named(["templated"], task_folder)["templated"]
    first.spec["dataset"]["size"] = 99  # a caller's change to its own copy
    unchanged = tasks_named(["templated"], task_folder)["templated"]
    assert unchanged.spec["dataset"]["size"] == 5 and len(unchanged.items) == 5
    assert unchanged.instruction == "Pick one."
    template = task_folder / "_mc_template.yaml"
    template.write_text(template.read_text().replace("Pick one.", "Pick two."))  # same size, same tick
    (task_folder / "templated.yaml").write_text((task_folder / "templated.yaml").read_text().replace("size: 5",
                                                                                                     "size: 7"))
    again = tasks_named(["templated"], task_folder)["templated"]
    assert len(again.items) == 7 and again.instruction == "Pick two."
    assert again.spec["dataset"]["size"] == 7
