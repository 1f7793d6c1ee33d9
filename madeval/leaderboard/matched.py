"""A finished run's mean calls per item for one configuration: the budget the
``self_consistency_matched`` preset matches (:mod:`madeval.builtins.baselines`)."""

from __future__ import annotations

from ..errors import UsageError
from .data import load_run
from .table import per_item, resolve_reference


def matched_calls(folder: str, match: str, task: str | None = None) -> tuple[str, str, float]:
    """The mean calls per item of configuration ``match`` (label or id) in the finished run in
    ``folder``, over the items of ``task`` (default: every task's items, pooled); returns the
    configuration's id, its label and the mean (each item's calls averaged over its repeats)."""
    data = load_run(folder, transcripts=False)
    config = resolve_reference(data, match)
    records = [r for r in data.records if r["unit"]["config"] == config and task in (None, r["unit"]["task"])]
    if not records:
        raise UsageError(f"the run in {folder} has no records of '{match}'" + (f" on {task}" if task else ""))
    return config, data.configurations[config]["label"], per_item(records, lambda r: r["calls"])
