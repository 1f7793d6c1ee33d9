"""`make demo`'s sweep (examples/demo.yaml) parses and plans two configurations on the same items."""

from __future__ import annotations

from pathlib import Path

from madeval.config import build_settings, read_config_file
from madeval.llm.session import ModelRef
from madeval.plan import build_plan
from madeval.plugins import registries

DEMO = Path(__file__).resolve().parent.parent / "examples" / "demo.yaml"


def test_the_demo_plans_a_single_agent_and_a_debate_with_structured_answers(generated_tasks):
    settings = build_settings(read_config_file(DEMO))
    single, debate = settings.configurations
    assert (single.label(), single.agents, single.responder) == ("single agent", 1, "cot")
    assert (debate.label(), debate.agents, debate.paradigm) == ("three-agent debate", 3, "memory")
    assert single.structured_answers and debate.structured_answers
    plan = build_plan(settings, {"arith_mc": generated_tasks["arith_mc"]}, registries(),
                      default_model=ModelRef("smollm2-135m-instruct", "embedded"), endpoints={"embedded"})
    assert len(plan.configs) == 2
    units = list(plan.units())
    items = {config: sorted(u.item for u in units if u.config == config) for config in plan.configs}
    first, second = items.values()
    assert first == second and len(first) == settings.limit == 5  # paired: the same items
