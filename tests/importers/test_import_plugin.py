"""A third-party format through ``register_importers``: the example of docs/plugins.md, as a plugin."""

from __future__ import annotations

import types

from madeval import (
    Agent,
    Decision,
    FileReport,
    ImportedDebate,
    ImportedFile,
    Importer,
    Message,
    Persona,
    Transcript,
    hookimpl,
)
from madeval.core.plugins import plugin_info, registries
from madeval.importers.writer import import_files
from madeval.records.folder import read_records
from madeval.settings.config import RunSettings
from madeval.task.definition import load_tasks
from madeval.testing import registered


class OneLine(Importer):
    """Files of 'item_id<TAB>answer' lines: one agent, one message per item."""

    def read(self, path, task, label):
        items = {item.id: item for item in task.items}
        report = FileReport()

        def debates():
            for line in path.read_text().splitlines():
                item_id, _, answer = line.partition("\t")
                item = items.get(item_id)
                if item is None:
                    report.unmatched += 1
                    continue
                message = Message(0, 1, 0, 0, "draft", answer, answer, task.extract(answer, item), None, backs=0)
                yield ImportedDebate(item, Transcript(
                    agents=[Agent(0, Persona("one-line"), "?", "one-line")], messages=[message],
                    decision=Decision(answer, True, 1, "one_line", "imported"), turns_used=1))

        options = {"name": label or path.stem, "agents": 1, "max_turns": 1, "decider": "one_line"}
        return ImportedFile(label or path.stem, options, {"format": "one-line", "file": path.name},
                            debates(), report)


@hookimpl
def register_importers(register):
    register("one-line", OneLine)


def test_a_plugin_format_imports_like_the_built_in_ones(tmp_path):
    plugin = types.ModuleType("one_line_plugin")
    plugin.register_importers = register_importers
    with registered(plugin):
        importer = registries().importers.create("one-line")
        listed = next(p for p in plugin_info() if p["name"] == "one_line_plugin")
        assert listed["components"] == {"importers": ["one-line"]}
        task = load_tasks(RunSettings(tasks=["mmlu_pro"]), registries())["mmlu_pro"]
        path = tmp_path / "answers.tsv"
        path.write_text("70\tFINAL SOLUTION: I\n71\tFINAL SOLUTION: A\nnope\tB\n")
        outcome = import_files(importer, [path], task, tmp_path / "out")
    assert outcome.added == 2 and outcome.files[0].notes[0].startswith("answers.tsv: 1 record matches no item")
    scores = [(r["unit"]["item"], r["metrics"]["accuracy"]) for r in read_records(tmp_path / "out")]
    assert scores == [("70", 1.0), ("71", 0.0)]  # gold: 70 is I, 71 is F
