"""Resuming into a run folder: whether the run stored there is the run being started, and, when it
is not, what differs.

A folder's ``run.json`` holds the run's description and its fingerprint
(:meth:`madeval.run.plan.Plan.fingerprint`). The fingerprint covers the *models the run resolved*
(:func:`served_models`: each agent's and judge's model with what its endpoint's ``/models`` says
of it), not the ``--model`` as given: a run without ``--model`` that used the endpoint's only
model and the same run with ``--model`` naming that model are one run, while the same command
against a server that now serves another model under the same URL is another one.

Folders written before the models were recorded (no ``models`` in ``run.json``) still resume:
their fingerprint is the one computed from the model as it was given then
(:func:`matches_older_folder`), and their ``default_model`` must be the model resolved now.

A resume may change the settings that change no result; ``run.json`` lists each process that ran
into the folder in its ``sessions`` (:mod:`madeval.records.run_file`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from madeval.core.options import shown
from madeval.debate.session import ModelRef
from madeval.llm.model_identity import bounded_identity, served_identity
from madeval.settings.config import NOT_RESULT_KEYS, RunSettings, without_later_defaults

#: How a differing run setting is named in a refusal.
SETTING_NAMES = {"base_url": "URL", "endpoints": "endpoint URLs"}


def served_models(refs: list[ModelRef], entries: dict[str, dict[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """For ``run.json`` and the fingerprint: each model the run uses (``refs``, the agents' and
    judges'), with what its endpoint's ``/models`` entry says identifies it (``entries``: endpoint
    -> model id -> entry, as :attr:`madeval.llm.client.LLMClient.model_entries`; the fields are
    :func:`madeval.llm.model_identity.served_identity`'s, bounded as the response cache's keys hold
    them: :func:`madeval.llm.model_identity.bounded_identity`), sorted."""
    models = []
    for ref in dict.fromkeys(refs):
        identity = bounded_identity(served_identity(entries.get(ref.endpoint, {}).get(ref.model))) or {}
        facts = {key: value for key, value in identity.items() if value is not None}
        models.append({**facts, "endpoint": ref.endpoint, "model": ref.model})  # ours, whatever it sends
    return sorted(models, key=lambda m: (m["endpoint"], m["model"]))


def matches_older_folder(stored: dict[str, Any], plan: Any, default_model: str) -> bool:
    """Whether ``stored`` (a ``run.json`` written before models were recorded) is the run of
    ``plan``: its fingerprint is the plan's with the ``--model`` given then, and the model it
    resolved (``default_model``) is the one resolved now."""
    if "models" in stored or not isinstance(stored.get("settings"), dict):
        return False
    if stored.get("default_model") and default_model and stored["default_model"] != default_model:
        return False
    given = stored["settings"].get("model")
    then = dataclasses.replace(plan, settings=dataclasses.replace(plan.settings, model=given))
    return then.fingerprint() == stored.get("fingerprint")


def different_run(folder: Path, stored: dict[str, Any], description: dict[str, Any]) -> str:
    """The one-line refusal to resume ``folder``: what differs between the stored run and the
    one described (``description``, as :class:`madeval.records.folder.RecordSink` gets it), each with
    the value there and the value now."""
    settings = _setting_differences(stored, description)
    differences = _model_difference(stored, description) + settings
    differences += _plan_differences(stored, description, tasks_named=any(d.startswith("tasks ") for d in settings))
    what = "; ".join(differences[:4]) or "other configurations, tasks, items or seed"
    return f"{folder} holds a different run ({what}); choose another --output-path"


def _model_difference(stored: dict[str, Any], description: dict[str, Any]) -> list[str]:
    now = description.get("models") or []
    if "models" in stored:
        then = stored["models"] if isinstance(stored["models"], list) else []
        if then == now:
            return []
        return [f"model {_models(then, now)} there, {_models(now, then)} now"]
    before, after = stored.get("default_model"), description.get("default_model")
    if before and after and before != after:
        return [f"model {shown(before)} there, {shown(after)} now"]
    return []


def _models(models: list[Any], others: list[Any]) -> str:
    """``'alpha'``, ``'alpha' (root '/m/a')``, several joined by commas: each model with the facts
    that differ from those of the same model (endpoint and name) in ``others``."""
    counterparts = {(entry.get("endpoint"), entry.get("model")): entry for entry in others if isinstance(entry, dict)}
    shown_models = []
    for entry in models[:3]:
        if not isinstance(entry, dict):
            shown_models.append(shown(entry))
            continue
        other = counterparts.get((entry.get("endpoint"), entry.get("model")))
        named = sorted(key for key in entry if key not in ("endpoint", "model")
                       and other is not None and other.get(key) != entry[key])
        facts = ", ".join([f"{key} {shown(entry[key])}" for key in named[:3]] + ["..."] * (len(named) > 3))
        shown_models.append(shown(entry.get("model")) + (f" ({facts})" if facts else ""))
    return ", ".join(shown_models) + (", ..." if len(models) > 3 else "") if shown_models else "none"


def _setting_differences(stored: dict[str, Any], description: dict[str, Any]) -> list[str]:
    if not (isinstance(stored.get("settings"), dict) and isinstance(description.get("settings"), dict)):
        return []
    then, now = (_result_settings(part["settings"]) for part in (stored, description))
    differences = []
    for key in sorted(set(then) | set(now)):
        if key != "model" and then.get(key) != now.get(key):
            name = SETTING_NAMES.get(key, key)
            differences.append(f"{name} {shown(then.get(key))} there, {shown(now.get(key))} now")
    return differences


def _result_settings(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings that can change results, as the fingerprint sees them."""
    kept = without_later_defaults(settings, RunSettings)
    return {key: value for key, value in kept.items() if key not in NOT_RESULT_KEYS}


def _plan_differences(stored: dict[str, Any], description: dict[str, Any], tasks_named: bool) -> list[str]:
    """Configurations, tasks (unless a differing setting named them already) and chosen items."""
    differences = []
    then_configs, now_configs = (_keys(part.get("configurations")) for part in (stored, description))
    if then_configs != now_configs:
        differences.append("configurations")
    then_tasks, now_tasks = (part.get("tasks") if isinstance(part.get("tasks"), dict) else {}
                             for part in (stored, description))
    if set(then_tasks) != set(now_tasks):
        if not tasks_named:
            differences.append(f"tasks {shown(sorted(then_tasks))} there, {shown(sorted(now_tasks))} now")
    elif any(_items(then_tasks[name]) != _items(now_tasks[name]) for name in now_tasks):
        differences.append("items")
    return differences


def _keys(mapping: Any) -> set[str]:
    return set(mapping) if isinstance(mapping, dict) else set()


def _items(task: Any) -> Any:
    return task.get("items") if isinstance(task, dict) else None
