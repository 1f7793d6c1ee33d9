"""A first run on the embedded model takes the settings that fit it where none were given (issue 31,
item 5): examples/demo.yaml's short replies, structured answers and few turns. Before, ``madeval
--tasks mmlu_pro --limit 3`` ran ten turns of replies of 1,024 tokens and had not finished one debate
after 15 minutes."""

from __future__ import annotations

from pathlib import Path

import yaml

from madeval.llm.embedded import FITTING_SETTINGS
from madeval.settings.config import build_settings, read_config_file

ROOT = Path(__file__).resolve().parents[2]


def test_the_fitting_settings_are_the_demos():
    demo = yaml.safe_load((ROOT / "examples" / "demo.yaml").read_text())
    debate = next(run for run in demo["runs"] if run.get("agents", 1) > 1)
    assert FITTING_SETTINGS == {"max_tokens": demo["max_tokens"], "structured_answers": demo["structured_answers"],
                                "max_turns": debate["max_turns"]}


def test_a_run_without_an_endpoint_takes_them():
    settings = build_settings({"tasks": "mmlu_pro", "decider": "unanimity", "limit": 3})
    (config,) = settings.configurations
    assert (settings.max_tokens, config.max_turns, config.structured_answers) == (128, 3, True)
    assert settings.generation()["max_tokens"] == 128
    assert settings.fitted == {"max_tokens": 128, "structured_answers": True, "max_turns": 3}


def test_what_is_given_keeps_its_value():
    settings = build_settings({"tasks": "arith_mc", "max_turns": 10, "structured_answers": False,
                               "gen_kwargs": "max_gen_toks=64"})
    (config,) = settings.configurations
    # --gen-kwargs' max_tokens (lm-eval's max_gen_toks) is a max_tokens given: the one sent
    assert settings.generation()["max_tokens"] == 64 and (config.max_turns, config.structured_answers) == (10, False)
    assert settings.fitted == {}
    assert build_settings({"tasks": "arith_mc", "max_tokens": 1024}).fitted == {"structured_answers": True,
                                                                                "max_turns": 3}


def test_a_preset_and_each_configuration_of_a_sweep_keep_their_own(tmp_path):
    path = tmp_path / "sweep.yaml"
    path.write_text("tasks: [arith_mc]\ncommon: {agents: 3}\nruns:\n  - {preset: baseline_direct}\n"
                    "  - {decider: unanimity_consensus, max_turns: 5}\n  - {decider: simple_voting}\n")
    settings = build_settings(read_config_file(path))
    assert [c.max_turns for c in settings.configurations] == [1, 5, 3]  # the preset's one turn; given; fitted
    assert all(c.structured_answers for c in settings.configurations) and settings.max_tokens == 128


def test_a_run_with_an_endpoint_takes_the_declared_defaults():
    for endpoint in ({"base_url": "http://127.0.0.1:9/v1"}, {"endpoints": ["vllm=http://127.0.0.1:9/v1"]}):
        settings = build_settings({"tasks": "arith_mc", **endpoint})
        (config,) = settings.configurations
        assert (settings.max_tokens, config.max_turns, config.structured_answers, settings.fitted) == (
            1024, 10, False, {})


def test_the_command_line_turns_structured_answers_off_for_the_embedded_model():
    """The line said before the run names --no-structured-answers; the command line takes it."""
    from madeval.cli.run_cmd import run

    given = run.make_context("run", ["--tasks", "arith_mc", "--no-structured-answers"]).params
    given = {key: value for key, value in given.items() if value is not None and key != "no_progress"}
    settings = build_settings(given)
    assert settings.configurations[0].structured_answers is False
    assert "structured_answers" not in settings.fitted and settings.fitted["max_tokens"] == 128
    unsaid = run.make_context("run", ["--tasks", "arith_mc"]).params
    unsaid = {key: value for key, value in unsaid.items() if value is not None and key != "no_progress"}
    assert build_settings(unsaid).configurations[0].structured_answers
