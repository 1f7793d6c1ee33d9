"""`make demo`'s sweep (examples/demo.yaml) parses and plans two configurations on the same items."""

from __future__ import annotations

from pathlib import Path

from madeval.core.plugins import registries
from madeval.debate.session import ModelRef
from madeval.run.plan import build_plan
from madeval.settings.config import build_settings, read_config_file

DEMO = Path(__file__).resolve().parents[2] / "examples" / "demo.yaml"


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


def test_the_demo_debates_over_more_than_one_turn():
    settings = build_settings(read_config_file(DEMO))
    debate = settings.configurations[1]
    assert debate.max_turns > 1  # a debate that can change its mind, not one round


def make_dry_run(target: str) -> list[str]:
    """The commands `make TARGET` would run on a fresh clone (a venv that does not exist yet)."""
    import subprocess

    root = DEMO.parent.parent
    done = subprocess.run(["make", "-n", target, "VENV=/nonexistent/venv"], cwd=root, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_make_demo_installs_only_what_the_demo_needs_and_shows_the_build():
    commands = make_dry_run("demo")
    installs = [c for c in commands if "pip install" in c and "--upgrade pip" not in c]
    assert len(installs) == 1
    install = installs[0]
    assert "-e '.[embedded]'" in install and "--quiet" not in install and "--verbose" in install
    for heavy in ("metrics", "fleet", "wandb", "lmeval", "plugins/madeval-lmeval", "torch"):
        assert heavy not in install, heavy
    (run,) = [c for c in commands if "madeval --config examples/demo.yaml" in c]
    assert run.split()[-1] == "--view"  # the debate viewer, written before the board that links it
    said = " ".join(commands)
    assert "The board as a page (it links the debates): madeval-out/demo/leaderboard.html" in said


def test_make_test_installs_the_rest_and_the_quick_start_is_two_commands():
    installs = " ".join(c for c in make_dry_run("test") if "pip install" in c)
    for extra in ("metrics", "fleet", "wandb", "plugins/madeval-lmeval", ".[embedded]"):
        assert extra in installs, extra
    root = DEMO.parent.parent
    readme = (root / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("```", 2)[1]
    assert quick.strip().splitlines() == ["make demo", "make test"]
    assert (root / ".ci" / "run").read_text().rstrip().splitlines()[-1] == "make test"
