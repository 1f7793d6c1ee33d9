"""The hook examples of docs/plugins.md (with the ``Dictator`` decider of docs/components.md) are one
working plugin: every hook registers, and a debate runs with the documented persona, responder,
paradigm and decider, giving what each example says it does."""

from __future__ import annotations

import types
from pathlib import Path

from markdown_it import MarkdownIt

import madeval
from madeval.testing import debate, registered

DOCS = Path(__file__).resolve().parents[2] / "docs"
#: Examples shown on the page but run elsewhere: the package of examples/madeval-lastword (its own
#: test), the decider's register call repeated from docs/components.md, the importer
#: (tests/importers/test_import_plugin.py).
ELSEWHERE = ("class LastWord", 'register("dictator"', "OneLine", "def test_")


def python_blocks(page: str) -> list[str]:
    tokens = MarkdownIt().parse((DOCS / page).read_text(encoding="utf-8"))
    return [t.content for t in tokens if t.type == "fence" and t.info.strip() == "python"]


def documented_plugin(folder: Path) -> types.ModuleType:
    """A plugin module made of the documented hook examples, as a plugin author would write them."""
    module = types.ModuleType("documented_plugin")
    namespace = module.__dict__
    namespace.update({name: getattr(madeval, name) for name in madeval.__all__ if name != "__version__"})
    namespace.update(Path=Path, __file__=str(folder / "plugin.py"))
    (folder / "tasks").mkdir()
    exec(next(b for b in python_blocks("components.md") if "class Dictator" in b), namespace)
    for block in python_blocks("plugins.md"):
        if "@hookimpl" in block and not any(mark in block for mark in ELSEWHERE):
            exec(block, namespace)
    return module


def test_the_documented_hooks_make_one_working_plugin(tmp_path):
    plugin = documented_plugin(tmp_path)
    hooks = {name for name in vars(plugin) if name.startswith("register_") or name == "simulator_reply"}
    assert hooks == {f"register_{kind}" for kind in ("personas", "responders", "paradigms", "deciders", "tasks",
                                                       "task_providers", "metrics", "extractors", "presets")} | {
        "simulator_reply"}
    with registered(plugin):
        built = madeval.registries()
        assert built.deciders.resolve("boss").name == "dictator"
        assert built.presets.resolve("my_debate").factory()["decider"] == "ranked_voting"
        assert built.extractors.create("last_word")("the answer is C") == "C"
        metric, item = built.metrics.create("exact_case"), madeval.Item("1", "x", "B")
        assert (metric.score("B", item), metric.score("b", item), metric.score(None, item)) == (1, 0, 0)
        assert any(str(path) == str(tmp_path / "tasks") for _, path in built.task_sources)
        replies = {(1, 0): "Final Solution: B", (1, 1): "Final Solution: A", (1, 2): "Final Solution: A"}
        transcript, llm = debate(replies, persona="pirate", responder="terse", paradigm="round_robin_reversed",
                                 decider="dictator")
    # the last agent speaks first; agent 0 ("agent 1" of the Dictator's docstring) decides after turn 1
    assert [m.agent for m in transcript.messages] == [2, 1, 0]
    assert (transcript.decision.answer, transcript.decision.turn) == ("Final Solution: B", 1)
    assert transcript.agents[0].persona.name == "Pirate 1"
    assert llm.requests[0][3][-1]["content"].endswith("Answer in one line, ending 'Final Solution: X'.")
