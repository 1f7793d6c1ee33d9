"""What a run on the embedded model says before it starts: the settings it took to fit the model
because none were given (issue 31, item 5)."""

from __future__ import annotations

from madeval.run.engine import fitted_text
from madeval.settings.config import build_settings


def test_the_settings_taken_for_the_embedded_model_are_said_with_how_to_choose_others():
    settings = build_settings({"tasks": "mmlu_pro", "decider": "unanimity", "limit": 3})
    assert fitted_text(settings.fitted) == (
        "the embedded model (smollm2-135m-instruct, on this CPU) runs with max_tokens 128, structured answers, "
        "max_turns 3, the settings that fit it, as none were given (to choose: --max-tokens N, "
        "--no-structured-answers, --max-turns N)")
    given = build_settings({"tasks": "mmlu_pro", "max_tokens": 512, "max_turns": 2})
    assert fitted_text(given.fitted) == (
        "the embedded model (smollm2-135m-instruct, on this CPU) runs with structured answers, the settings "
        "that fit it, as none were given (to choose: --no-structured-answers)")
