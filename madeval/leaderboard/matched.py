"""A finished run's budget per item for one configuration: what the ``self_consistency_matched``
preset matches (:mod:`madeval.builtins.baselines`), in calls or in money."""

from __future__ import annotations

from dataclasses import dataclass

from madeval.analysis.run_data import RunData, load_run
from madeval.errors import UsageError
from madeval.leaderboard.money import load_prices, row_money
from madeval.leaderboard.table import per_item, resolve_reference

#: Presets whose every call is one Chain-of-Thought sample: the price of a sample, read from a run.
SAMPLE_PRESETS = ("baseline_cot", "self_consistency", "self_consistency_matched")


def matched_calls(folder: str, match: str, task: str | None = None) -> tuple[str, str, float]:
    """The mean calls per item of configuration ``match`` (label or id) in the finished run in
    ``folder``, over the items of ``task`` (default: every task's items, pooled); returns the
    configuration's id, its label and the mean (each item's calls averaged over its repeats)."""
    data = load_run(folder, transcripts=False)
    config = resolve_reference(data, match)
    return config, data.configurations[config]["label"], per_item(_records(data, config, match, task, folder),
                                                                    lambda r: r["calls"])


@dataclass(frozen=True)
class MoneyMatch:
    """What matching a configuration's dollars per item takes: its cost, a sample's, and the samples."""

    config: str
    label: str
    cost_per_item: float
    sample_label: str
    cost_per_sample: float

    @property
    def samples(self) -> int:
        """Samples per item that spend the matched cost (the nearest whole number, at least 1)."""
        return max(1, round(self.cost_per_item / self.cost_per_sample))


def matched_cost(folder: str, match: str, prices: str, sample: str | None = None,
                 task: str | None = None) -> MoneyMatch:
    """The dollars per item of configuration ``match`` in the run in ``folder`` at the prices of the
    file ``prices`` (batch prices for the calls that went through the batch transport), and the dollars of one
    Chain-of-Thought sample: the cost per call of configuration ``sample`` of the same run (default:
    its configuration of a sampling preset, :data:`SAMPLE_PRESETS`), on the same items of ``task``."""
    data = load_run(folder, transcripts=False, priced=True)
    table = load_prices(prices)
    config = resolve_reference(data, match)
    target = _dollars(data, config, match, task, folder, table)
    if sample is None:
        found = [cid for cid, c in data.configurations.items() if c.get("preset") in SAMPLE_PRESETS and cid != config]
        if not found:
            raise UsageError(f"the run in {folder} has no configuration of single samples "
                             f"({', '.join(SAMPLE_PRESETS)}) "
                             "to price a sample by: add one to it, or name one with sample=CONFIG")
        sampler = found[0]
    else:
        sampler = resolve_reference(data, sample)
    records = _records(data, sampler, sample or sampler, task, folder)
    per_call = _dollars(data, sampler, sample or sampler, task, folder, table) / per_item(records, lambda r: r["calls"])
    if per_call <= 0:
        raise UsageError(f"a sample of '{data.configurations[sampler]['label']}' cost nothing at these prices: "
                         "nothing to match money with")
    return MoneyMatch(config, data.configurations[config]["label"], target, data.configurations[sampler]["label"],
                      per_call)


def _records(data: RunData, config: str, name: str, task: str | None, folder: str) -> list[dict]:
    records = [r for r in data.records if r["unit"]["config"] == config and task in (None, r["unit"]["task"])]
    if not records:
        raise UsageError(f"the run in {folder} has no records of '{name}'" + (f" on {task}" if task else ""))
    return records


def _dollars(data: RunData, config: str, name: str, task: str | None, folder: str, table) -> float:
    """A configuration's dollars per item; a model without a price is a one-line UsageError."""
    money = row_money(_records(data, config, name, task, folder), table,
                      not data.configurations[config].get("imported"))
    if money["cost_per_item"] is None:
        raise UsageError(f"'{data.configurations[config]['label']}' in {folder} has no cost at these prices "
                         f"({money['cost_status']})")
    return money["cost_per_item"]
