"""The lm-eval internals madeval_lmeval.lmeval_api relies on: this fails loudly when lm-eval
changes them (then adapt lmeval_api.py and its pinned range, nothing else)."""

from __future__ import annotations

import importlib.metadata

from packaging.specifiers import SpecifierSet

from madeval_lmeval import lmeval_api


def test_lmeval_installed_version_is_in_the_supported_range():
    assert importlib.metadata.version("lm-eval") in SpecifierSet(lmeval_api.SUPPORTED)


def test_lmeval_private_names_and_signatures_are_as_assumed():
    from lm_eval.api.filter import FilterEnsemble
    from lm_eval.api.instance import Instance
    from lm_eval.api.task import ConfigurableTask
    from lm_eval.tasks import TaskManager
    from lm_eval.tasks._factory import TaskFactory
    from lm_eval.tasks._index import Entry, Kind

    assert lmeval_api.signature_of(TaskFactory.build) == ["self", "entry", "overrides", "registry"]
    assert {"name", "kind", "yaml_path", "cfg", "tags"} <= set(Entry.__dataclass_fields__)
    assert {k.name for k in Kind} >= {"TASK", "PY_TASK", "GROUP", "TAG"}
    assert {"custom_dataset", "filter_list", "output_type"} <= set(ConfigurableTask.__init__.__code__.co_varnames
                                                                   + tuple(_task_config_fields()))
    assert lmeval_api.signature_of(FilterEnsemble.apply) == ["self", "instances"]
    assert {"resps", "filtered_resps", "metadata"} <= set(Instance.__dataclass_fields__)
    assert lmeval_api.signature_of(ConfigurableTask.fewshot_context)[:3] == ["self", "doc", "num_fewshot"]
    assert "task_index" in dir(TaskManager) and "all_tasks" in dir(TaskManager)


def _task_config_fields():
    from lm_eval.config.task import TaskConfig

    return TaskConfig.__dataclass_fields__


def test_lmeval_built_task_keeps_its_filters_and_reads_the_custom_dataset(lm_tasks):
    task = lm_tasks("lm_eval:gsm8k")
    assert [f.name for f in lmeval_api.filter_ensembles(task.lm_task)] == ["strict-match", "flexible-extract"]
    assert len(task.lm_task.eval_docs) == 1319  # the mirror's rows, not the hub's
