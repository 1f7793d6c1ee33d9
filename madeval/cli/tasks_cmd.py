"""``madeval tasks``: list the known tasks, groups and tags, or validate them."""

from __future__ import annotations

import json
from pathlib import Path

import click

from madeval.errors import MadevalError
from madeval.task.files import describe_error, read_yaml
from madeval.task.sources import DataPlace, DataUnavailable, data_place, mirror_row_count

#: Items ``--validate`` checks in every task: the first, the last and three evenly between.
VALIDATE_ITEMS = 5


def _row_count(spec: dict) -> int | None:
    """Rows of a generated task, of its local mirror (after ``filter``), else the declared size."""
    dataset = spec.get("dataset") or {}
    if not isinstance(dataset, dict):
        return None
    if "generator" in dataset:
        return int(dataset.get("size", 100))
    counted = mirror_row_count(dataset)
    if counted is not None:
        return counted
    declared = (spec.get("metadata") or {}).get("rows")
    return int(declared) if declared is not None else None


def _data_place(spec: dict) -> DataPlace:
    """Where a task's rows come from here (:func:`madeval.task.sources.data_place`); ``?`` for a task
    file that declares its dataset elsewhere (an ``include``)."""
    dataset = spec.get("dataset")
    return data_place(dataset) if isinstance(dataset, dict) else DataPlace("?")


@click.command()
@click.option("--include-path", multiple=True, help="Extra folder of task YAML files (repeatable).")
@click.option("--validate", is_flag=True,
              help="Load every task and check that a gold answer scores right and a wrong one wrong.")
@click.option("--strict", is_flag=True, help="With --validate: a task without data fails instead of being skipped.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
@click.option("--source", default=None, metavar="PREFIX",
              help="List the names a task provider plugin offers as PREFIX:NAME (e.g. lm_eval).")
def tasks(include_path: tuple[str, ...], validate: bool, strict: bool, as_json: bool, source: str | None) -> None:
    """List tasks with their answer type, row count (when known) and where their data comes from here.

    The data column says generated, mirror (a local copy under MADEVAL_DATA_DIR), hub, or missing: a
    task whose data cannot be loaded here (a gated dataset without a token, no local mirror and the
    hub unreachable) is listed as missing, and why is said under the table.

    With --validate, every task is loaded and checked (exit status 1 if one fails). A task whose
    data is not available (no hub, no mirror) is reported as skipped and does not fail unless
    --strict is given.
    """
    from madeval.core.plugins import registries
    from madeval.task.definition import task_loader
    from madeval.task.files import task_index

    built = registries()
    if source is not None:
        _list_provided(built, source, as_json, include_path)
        return
    index = task_index(built, list(include_path))
    load = task_loader(index, built.extractors, built.metrics)
    rows = []
    for name, path in sorted(index.tasks.items()):
        spec = read_yaml(path)
        place = _data_place(spec)
        row = {"name": name, "kind": "task", "answer_type": spec.get("answer_type", "text"),
               "rows": _row_count(spec), "data": place.where, "path": str(Path(path))}
        if not place.available:
            row["data_missing"] = place.hint
        if validate:
            row["status"] = validate_task(load, name)
        rows.append(row)
    missing = {row["name"] for row in rows if "data_missing" in row}
    for name in sorted(index.groups):
        if validate:
            status = _validate_group(index, name)
            members = index.expand(name) if status == "ok" else []
            rows.append({"name": name, "kind": "group", "tasks": members, "status": status})
        else:
            rows.append({"name": name, "kind": "group", "tasks": index.expand(name)})
    for name in sorted(index.tags):
        rows.append({"name": name, "kind": "tag", "tasks": index.expand(name)})
    for row in rows:
        if row["kind"] != "task" and (lacking := [task for task in row["tasks"] if task in missing]):
            row["data_missing"] = lacking
    if as_json:
        click.echo(json.dumps(rows, indent=2))
    else:
        _print_table(rows)
    if validate and any(_fails(row.get("status", "ok"), strict) for row in rows):
        raise SystemExit(1)


def _print_table(rows: list[dict]) -> None:
    """The listing as text: a task's name, answer type, rows and data; a group's or tag's tasks; then
    why each task marked missing cannot be loaded here."""
    for row in rows:
        status = f"  {row['status']}" if "status" in row else ""
        if row["kind"] == "task":
            size = row["rows"] if row["rows"] is not None else "?"
            click.echo(f"{row['name']:<36} {row['answer_type']:<7} {size:>7}  {row['data']:<10}{status}".rstrip())
        else:
            lacking = f"  (no data here: {', '.join(row['data_missing'])})" if row.get("data_missing") else ""
            click.echo(f"{row['name']:<36} {row['kind']:<7} {', '.join(row['tasks'])}{lacking}{status}")
    missing = [row for row in rows if row["kind"] == "task" and "data_missing" in row]
    if missing:
        click.echo(f"\nmissing: {len(missing)} task{'s' if len(missing) != 1 else ''} cannot be loaded here:")
        for row in missing:
            click.echo(f"  {row['name']}: {row['data_missing']}")


def _list_provided(built, prefix: str, as_json: bool, include_path: tuple[str, ...]) -> None:
    """Every name the task provider ``prefix`` offers (with ``--include-path``), as ``prefix:NAME``."""
    from madeval.task.files import task_provider

    names = [f"{prefix}:{name}" for name in task_provider(built.task_providers, prefix, include_path).names()]
    click.echo(json.dumps(names, indent=2) if as_json else "\n".join(names))


def _fails(status: str, strict: bool) -> bool:
    if status == "ok":
        return False
    return strict or not status.startswith("skipped")


def _spread(count: int, wanted: int = VALIDATE_ITEMS) -> list[int]:
    """Up to ``wanted`` indices from 0 to ``count - 1``: the first, the last and evenly between."""
    if count <= wanted:
        return list(range(count))
    return sorted({round(i * (count - 1) / (wanted - 1)) for i in range(wanted)})


def validate_task(load, name: str) -> str:
    """``"ok"``, ``"skipped (no data: ...)"``, or what is wrong with the task.

    Loads every item, and on :data:`VALIDATE_ITEMS` items spread over the task renders the prompt
    and checks that a reply stating the gold answer scores as correct (first metric at least
    0.999) and a reply stating a wrong one scores lower (0 for 0/1 metrics). Whatever a task's
    own code (``!function``) raises is reported as this task's error, and the listing goes on.
    """
    stage = "loading the task"
    try:
        task = load(name)
        items = task.items
        if not items:
            return "error: no items"
        for index in _spread(len(items)):
            item = items[index]
            stage = f"item {item.id} (#{index}): rendering the prompt"
            task.prompt(item)
            stage = f"item {item.id} (#{index}): scoring the gold answer"
            gold = _primary(task.score(task.extract(task.reference_reply(item), item), item))
            if gold is None or gold < 0.999:
                return f"error: item {item.id} (#{index}): the gold answer scores {gold}"
            stage = f"item {item.id} (#{index}): scoring a wrong answer"
            wrong = _primary(task.score(task.extract(task.wrong_reply(item), item), item))
            if wrong is None or wrong >= gold:
                return f"error: item {item.id} (#{index}): a wrong answer scores {wrong}"
    except DataUnavailable as error:
        return f"skipped (no data: {error.hint}, or make the Hugging Face hub reachable)"
    except MadevalError as error:
        return f"error: {error}"
    except (Exception, SystemExit) as error:  # a task's code is the task author's: report it, check the next task
        return f"error: {stage} raised {describe_error(error)}"
    return "ok"


def _primary(scores: dict[str, float]) -> float | None:
    """The first score a task reports, or ``None`` when it reports none."""
    return next(iter(scores.values()), None)


def _validate_group(index, name: str) -> str:
    """``"ok"`` or what is wrong with the group file (unknown keys, unknown members)."""
    try:
        spec = index.group_spec(name)
        for member in spec.tasks:
            index.expand(member)
    except MadevalError as error:
        return f"error: {error}"
    return "ok"
