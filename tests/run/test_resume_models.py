"""A run folder holds the models its run resolved (issue 25, item 1): a resume against another
model behind the same URL is refused naming both, the model given explicitly is the same run, and
a refusal names what differs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from helpers import run_quietly, settings_for
from madeval.errors import UsageError
from madeval.records.folder import read_records
from madeval.simulator import simulate

FIXTURES = Path(__file__).parent / "fixtures"


def serving(generated_tasks, name: str, port: int = 0):
    """The simulator listing only ``name`` on /models (vLLM's --served-model-name)."""
    return simulate(tasks=generated_tasks.values(), accuracy=0.6, served=[name], port=port)


def test_resume_refuses_another_model_behind_the_same_url(generated_tasks, tmp_path):
    with serving(generated_tasks, "alpha") as sim:
        port = sim.server.port
        settings = settings_for(sim.base_url, tmp_path, limit=4, cache="off")
        first, _ = run_quietly(settings)
    folder = first.folder
    assert json.loads((folder / "run.json").read_text())["default_model"] == "alpha"
    records = folder / "records.jsonl"
    lines = records.read_text().splitlines(keepends=True)
    records.write_text("".join(lines[:2]))  # interrupted after two of the four units
    with serving(generated_tasks, "beta", port=port) as sim:
        assert sim.base_url == settings.base_url  # the same URL, another model behind it
        with pytest.raises(UsageError) as refused:
            run_quietly(settings_for(sim.base_url, tmp_path, limit=4, cache="off"))
        assert "model 'alpha' there, 'beta' now" in str(refused.value)
        assert len(list(read_records(folder))) == 2  # nothing of beta's was added
        # every unit done: the folder is still alpha's, not a board for beta
        records.write_text("".join(lines))
        with pytest.raises(UsageError, match="model 'alpha' there, 'beta' now"):
            run_quietly(settings_for(sim.base_url, tmp_path, limit=4, cache="off"))
    (model,) = json.loads((folder / "run.json").read_text())["models"]  # with what /models says of alpha
    assert model == {"endpoint": "default", "model": "alpha", "fingerprint": model["fingerprint"]}
    assert model["fingerprint"].startswith("fp_sim_")


def test_resume_accepts_the_picked_model_given_explicitly(generated_tasks, tmp_path):
    with serving(generated_tasks, "alpha") as sim:
        run_quietly(settings_for(sim.base_url, tmp_path, limit=2, cache="off"))
        again, _ = run_quietly(settings_for(sim.base_url, tmp_path, limit=2, cache="off", model="alpha"))
        assert (again.outcome.finished, again.outcome.skipped) == (0, 2)
        # and the other way round: a folder begun with --model resumes without it
        run_quietly(settings_for(sim.base_url, tmp_path / "b", limit=2, cache="off", model="alpha"))
        again, _ = run_quietly(settings_for(sim.base_url, tmp_path / "b", limit=2, cache="off"))
        assert (again.outcome.finished, again.outcome.skipped) == (0, 2)


@pytest.mark.parametrize(("change", "expected"), [
    ({"temperature": 0.5}, "(temperature 1.0 there, 0.5 now)"),
    ({"seed": 7}, "seed 1234 there, 7 now"),
    ({"limit": 3}, "limit 2 there, 3 now; items"),
    ({"decider": "unanimity"}, "(configurations)"),
    ({"tasks": ["arith_yesno"]}, "tasks ['arith_mc'] there, ['arith_yesno'] now"),
])
def test_resume_refusal_names_what_differs(sim, tmp_path, change, expected):
    run_quietly(settings_for(sim.base_url, tmp_path, limit=2, cache="off"))
    with pytest.raises(UsageError) as refused:
        run_quietly(settings_for(sim.base_url, tmp_path, cache="off", **{"limit": 2, **change}))
    message = str(refused.value).replace('"', "'")
    assert expected in message and "choose another --output-path" in message


def test_resume_refusal_names_another_url(generated_tasks, sim, tmp_path):
    run_quietly(settings_for(sim.base_url, tmp_path, limit=2, cache="off"))
    with simulate(tasks=generated_tasks.values(), accuracy=0.6) as other:
        with pytest.raises(UsageError) as refused:
            run_quietly(settings_for(other.base_url, tmp_path, limit=2, cache="off"))
    assert f"URL '{sim.base_url}' there, '{other.base_url}' now" in str(refused.value)


def test_resume_refuses_other_weights_under_the_same_name(tmp_path):
    """What /models says of a model (vLLM's root) is part of the run: the same name over other
    weights is another run."""
    from madeval.debate.session import ModelRef
    from madeval.records.folder import RecordSink
    from madeval.run.resume import different_run, served_models

    ref = ModelRef("served", "default")
    then = served_models([ref], {"default": {"served": {"id": "served", "root": "/models/a", "created": 1}}})
    now = served_models([ref], {"default": {"served": {"id": "served", "root": "/models/b", "created": 2}}})
    assert then == [{"endpoint": "default", "model": "served", "root": "/models/a"}]  # not the request time
    RecordSink(tmp_path / "run", {"models": then}, "f1").close()
    with pytest.raises(UsageError,
                       match=r"model 'served' \(root '/models/a'\) there, 'served' \(root '/models/b'\) now"):
        RecordSink(tmp_path / "run", {"models": now}, "f2", refusal=different_run)


def test_resume_a_folder_written_before_models_were_recorded(generated_tasks, tmp_path):
    """``tests/run/fixtures/run-ce2f287`` was written by madeval at ce2f287 (``--tasks arith_mc --limit 2
    --base-url http://127.0.0.1:18765/v1``, no --model, the simulator's only model ``simulator``):
    it resumes, without and with ``--model simulator``, and not with another model."""
    from madeval.core.plugins import registries
    from madeval.debate.session import ModelRef
    from madeval.records.folder import RecordSink
    from madeval.run.plan import build_plan
    from madeval.run.resume import different_run, matches_older_folder, served_models
    from madeval.settings.config import DebateConfig, RunSettings

    folder = shutil.copytree(FIXTURES / "run-ce2f287", tmp_path / "old")
    stored = json.loads((folder / "run.json").read_text())
    assert "models" not in stored
    for given in (None, "simulator"):
        settings = RunSettings(tasks=["arith_mc"], limit=2, base_url=stored["settings"]["base_url"], model=given,
                               configurations=[DebateConfig()])
        plan = build_plan(settings, {"arith_mc": generated_tasks["arith_mc"]}, registries(),
                          default_model=ModelRef("simulator", "default"), endpoints={"default"})
        models = served_models([ModelRef("simulator", "default")], {})
        assert plan.fingerprint(models) != stored["fingerprint"]  # the new hash: only the older check accepts it
        sink = RecordSink(folder, {"default_model": "simulator", "models": models}, plan.fingerprint(models),
                          older=lambda run, plan=plan: matches_older_folder(run, plan, "simulator"))
        assert len(sink.finished) == 2
        sink.close()
        with pytest.raises(UsageError, match="model 'simulator' there, 'beta' now"):
            RecordSink(folder, {"default_model": "beta", "models": []}, "other",
                       older=lambda run, plan=plan: matches_older_folder(run, plan, "beta"), refusal=different_run)
