"""One leaderboard from several finished runs: their configurations side by side, paired on the
(task, item, repeat) units they share.

Runs are read with :func:`madeval.analysis.run_data.load_run` and merged into one
:class:`~madeval.analysis.run_data.RunData`: configurations, records, tasks, groups and task sizes.

A configuration id found in two runs:

* whose settings that change a debate differ (:data:`DEBATE_SETTINGS` and the models, e.g. two
  seeds of one configuration) is kept apart: one row per run, its id and label naming what differs
  (``majority_consensus seed=99``), paired with the other on the units both hold;
* otherwise it is a one-line UsageError unless the merge is asked for (``merge_same``); its records
  are then pooled, and a unit recorded in both runs must carry the same prediction and scores.

Labels name configurations on the board, so no two rows of a merged board share one: configurations
of different runs that share a label (a sweep names a grid point only by its grid values, so a
3-agent and a 5-agent run of one grid both hold ``majority_consensus``) are renamed by the options
that tell them apart (``majority_consensus agents=5``), else by their run folder, and a note says so.
Comparisons of a merged board pair each two configurations on the units both recorded
(:func:`madeval.analysis.compare.compare_family` with ``units``), and say how many items and units
they shared.

Item ids: tasks named by content (``doc_to_id: !content``) pair across re-ordered or re-mirrored
datasets. Runs written before content ids name those tasks' items ``<task>-<row position>``:
such runs pair with each other as before; with a run that names items by content they share no
item, and the merged board says so (:func:`pairing_notes`) instead of pairing nothing silently.
"""

from __future__ import annotations

import glob
import json
import re
from pathlib import Path
from typing import Any

from madeval.analysis.run_data import RunData, load_run
from madeval.errors import UsageError
from madeval.records.folder import ReadReport
from madeval.records.unit import Unit
from madeval.settings.sweep import grid_name


def run_folders(patterns: list[str]) -> list[Path]:
    """The run folders ``patterns`` name (folders or globs), each once, in the order given."""
    folders: dict[Path, Path] = {}  # resolved -> as given: ``a`` and ``./a`` are one run
    for pattern in patterns:
        found = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        if not found:
            raise UsageError(f"no run folder matches {pattern}")
        for folder in found:
            folders.setdefault(Path(folder).resolve(), Path(folder))
    return list(folders.values())


#: Run settings that change what a unit's debate says, beside the models (not which items a run
#: holds, nor how it was run): runs of one configuration that differ in one are kept apart.
DEBATE_SETTINGS = ("seed", "temperature", "top_p", "max_tokens", "gen_kwargs", "num_fewshot")
#: Configuration fields that are not options: never what tells two configurations apart.
NOT_OPTIONS = {"label", "name", "source", "label_in_run", "id_in_run", "run_settings"}


def merge_runs(folders: list[Path], merge_same: bool = False, priced: bool = False) -> RunData:
    """The runs in ``folders`` as one RunData (``runs`` lists them; ``notes`` says what did not pair,
    which configurations were kept apart and which were renamed); ``priced``: each record keeps what
    pricing needs (see :func:`madeval.analysis.run_data.load_run`)."""
    runs = [load_run(folder, transcripts=False, priced=priced) for folder in folders]
    if len(runs) == 1:
        return runs[0]
    apart, notes = kept_apart(runs)
    merged = RunData(runs[0].folder, _merged_run(runs), {}, [], {}, {}, ReadReport())
    owner: dict[str, Path] = {}
    by_key: dict[str, dict[str, Any]] = {}
    for index, data in enumerate(runs):
        renamed = apart.get(index, {})
        for cid, config in data.configurations.items():
            target, gained = renamed.get(cid, (cid, {}))
            if target in owner and not merge_same:
                raise UsageError(
                    f"configuration {config['label']} ({cid}) is in both {owner[target]} and {data.folder} with the "
                    "same settings; pass --merge-same to pool its records")
            owner.setdefault(target, data.folder)
            merged.configurations.setdefault(target, {**config, **gained})
        for record in data.records:
            record = _renamed_record(record, renamed)
            key = record["unit"]["key"]
            if key in by_key:
                _same_unit(by_key[key], record, data.folder)
                continue
            by_key[key] = record
            merged.records.append(record)
        _take_groups(merged, data)
    notes += distinct_labels(merged.configurations, _homes(runs, apart))
    merged.runs = {str(data.folder): _labels_of(merged, index, data, apart) for index, data in enumerate(runs)}
    merged.notes = pairing_notes(runs) + notes
    return merged


def _take_groups(merged: RunData, data: RunData) -> None:
    """Add ``data``'s groups, declared aggregations and reading counts to ``merged``."""
    for name, members in data.groups.items():
        merged.groups.setdefault(name, members)
    for name, declared in data.aggregations.items():
        merged.aggregations.setdefault(name, declared)
    merged.reading.broken += data.reading.broken
    merged.reading.duplicates += data.reading.duplicates


def debate_settings(run: dict[str, Any]) -> dict[str, Any]:
    """The settings of a ``run.json`` that change what its debates say: :data:`DEBATE_SETTINGS`, and
    the models it used (by name) as ``models``."""
    settings = run.get("settings") if isinstance(run.get("settings"), dict) else {}
    found = {key: settings[key] for key in DEBATE_SETTINGS if key in settings}
    models = run.get("models")
    if isinstance(models, list):
        found["models"] = ",".join(sorted({str(m.get("model")) for m in models if isinstance(m, dict)}))
    elif settings.get("model") or run.get("default_model"):
        found["models"] = str(settings.get("model") or run.get("default_model"))
    return found


def kept_apart(runs: list[RunData]) -> tuple[dict[int, dict[str, tuple[str, dict[str, Any]]]], list[str]]:
    """Configurations held by several runs whose :func:`debate_settings` differ: per run index,
    configuration id -> (its id on the merged board, the fields its configuration gains), and one
    note per configuration kept apart. Runs of the same settings share one id (pooled or refused
    as before)."""
    settings = [debate_settings(data.run) for data in runs]
    holders: dict[str, list[int]] = {}
    for index, data in enumerate(runs):
        for cid in data.configurations:
            holders.setdefault(cid, []).append(index)
    apart: dict[int, dict[str, tuple[str, dict[str, Any]]]] = {}
    notes = []
    for cid, indexes in holders.items():
        differing = _differing([settings[i] for i in indexes])
        if not differing:
            continue
        label = runs[indexes[0]].configurations[cid]["label"]
        shown = []
        for index in indexes:
            differs = {key: settings[index].get(key) for key in differing}
            suffix = _named(differs)
            apart.setdefault(index, {})[cid] = (f"{cid}/{suffix.replace(' ', ',')}", {
                "label": f"{label} {suffix}", "label_in_run": label, "id_in_run": cid, "run_settings": differs})
            shown.append(f"{label} {suffix} ({runs[index].folder})")
        notes.append(f"configuration {label} ({cid}) ran with different {', '.join(differing)} in "
                     f"{len(indexes)} runs: kept apart as " + ", ".join(dict.fromkeys(shown))
                     + ", paired on the units both hold")
    return apart, notes


def _differing(entries: list[dict[str, Any]]) -> list[str]:
    """The keys whose values are not the same in every entry (a missing key is a value), in order."""
    keys = list(dict.fromkeys(key for entry in entries for key in entry))
    return [key for key in keys if len({_text(entry.get(key)) for entry in entries}) > 1]


def _text(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _named(values: dict[str, Any]) -> str:
    """``key=value`` words naming what differs (component names as they are, as a sweep names its grid)."""
    shown = {key: ",".join(map(str, value)) if isinstance(value, list) else value for key, value in values.items()}
    return grid_name({key: "none" if value in (None, "") else value for key, value in shown.items()})


def _renamed_record(record: dict[str, Any], renamed: dict[str, tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """``record`` under its configuration's id on the merged board (a copy when that id is another)."""
    unit = record["unit"]
    new = renamed.get(unit["config"])
    if new is None:
        return record
    moved = Unit(new[0], unit["task"], unit["item"], unit["repeat"])
    return {**record, "unit": moved.to_dict(), "config_label": new[1]["label"]}


def _homes(runs: list[RunData], apart: dict[int, dict[str, tuple[str, dict[str, Any]]]]) -> dict[str, Path]:
    """Configuration id on the merged board -> the first run folder holding it."""
    homes: dict[str, Path] = {}
    for index, data in enumerate(runs):
        renamed = apart.get(index, {})
        for cid in data.configurations:
            homes.setdefault(renamed[cid][0] if cid in renamed else cid, data.folder)
    return homes


def _labels_of(merged: RunData, index: int, data: RunData,
               apart: dict[int, dict[str, tuple[str, dict[str, Any]]]]) -> list[str]:
    """The labels (as the merged board shows them) of one run's configurations."""
    renamed = apart.get(index, {})
    return [merged.configurations[renamed[cid][0] if cid in renamed else cid]["label"] for cid in data.configurations]


def distinct_labels(configurations: dict[str, dict[str, Any]], homes: dict[str, Path]) -> list[str]:
    """Rename configurations that share a label (in place) by the options that tell them apart, else
    by their run folder; one note per label renamed. A single run never holds two (it refuses them)."""
    notes = []
    by_label: dict[str, list[str]] = {}
    for cid, config in configurations.items():
        by_label.setdefault(config["label"], []).append(cid)
    for label, ids in by_label.items():
        if len(ids) < 2:
            continue
        options = [{k: v for k, v in configurations[cid].items() if k not in NOT_OPTIONS} for cid in ids]
        differing = _differing(options)
        for cid, own in zip(ids, options):
            suffix = _named({key: own.get(key) for key in differing}) if differing else f"({homes[cid].name})"
            configurations[cid] = {**configurations[cid], "label": f"{label} {suffix}",
                                   "label_in_run": configurations[cid].get("label_in_run", label)}
        shown = ", ".join(f"{configurations[cid]['label']} ({homes[cid]})" for cid in ids)
        notes.append(f"{len(ids)} configurations are labelled {label}: shown as {shown}")
    labels = [config["label"] for config in configurations.values()]
    for number, cid in enumerate(configurations, start=1):  # renamed into another's label: numbered
        if labels.count(configurations[cid]["label"]) > 1:
            configurations[cid] = {**configurations[cid], "label": f"{configurations[cid]['label']} #{number}",
                                   "label_in_run": configurations[cid].get("label_in_run", labels[number - 1])}
    return notes


def _merged_run(runs: list[RunData]) -> dict[str, Any]:
    """A ``run.json`` for the merged runs: every task (first run first) and the task sizes."""
    tasks: dict[str, Any] = {}
    sizes: dict[str, Any] = {}
    for data in runs:
        for task in data.tasks:
            tasks.setdefault(task, data.run["tasks"][task])
        for task, size in (data.run.get("task_sizes") or {}).items():
            if sizes.setdefault(task, size) != size:
                raise UsageError(f"task {task} has {sizes[task]} items in {runs[0].folder} but {size} in {data.folder}")
    return {"tasks": tasks, "task_sizes": sizes, "order": {"tasks": list(tasks)}, "fingerprint": None}


def _same_unit(kept: dict[str, Any], record: dict[str, Any], folder: Path) -> None:
    """A unit recorded by two runs (``merge_same``) must have the same prediction and scores."""
    if (kept["prediction"], kept["metrics"]) != (record["prediction"], record["metrics"]):
        unit = record["unit"]
        raise UsageError(
            f"configuration {record.get('config_label') or unit['config']}: task {unit['task']} item {unit['item']} "
            f"repeat {unit['repeat']} has different records in {folder} and an earlier run; they cannot be merged")


def positional(task: str, item: str) -> bool:
    """True for an item id made from the row position (``<task>-<row>``), as runs before content ids have."""
    return re.fullmatch(re.escape(task) + r"-\d+", item) is not None


def pairing_notes(runs: list[RunData]) -> list[str]:
    """One line per task two runs both hold but share no item of, saying why when ids differ in kind."""
    items: list[dict[str, set[str]]] = []
    for data in runs:
        found: dict[str, set[str]] = {}
        for record in data.records:
            found.setdefault(record["unit"]["task"], set()).add(record["unit"]["item"])
        items.append(found)
    notes = []
    for i, (first, mine) in enumerate(zip(runs, items)):
        for second, theirs in zip(runs[i + 1:], items[i + 1:]):
            for task in sorted(set(mine) & set(theirs)):
                if mine[task] & theirs[task]:
                    continue
                kinds = [all(positional(task, item) for item in found[task]) for found in (mine, theirs)]
                why = ""
                if kinds[0] != kinds[1]:
                    old = first.folder if kinds[0] else second.folder
                    why = (f": {old} names items by row position (written before content ids), the other by "
                           "content, so the ids differ; re-run it to pair them")
                notes.append(f"task {task}: {first.folder} and {second.folder} share no item{why}")
    return notes
