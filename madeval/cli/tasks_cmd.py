"""``madeval tasks``: list the known tasks, groups and tags, or validate them."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..datasources import mirror_row_count
from ..errors import MadevalError
from ..taskfiles import read_yaml


def _row_count(spec: dict) -> int | None:
    """Rows of a generated task, of its local mirror (after ``filter``), else the declared size."""
    dataset = spec.get("dataset") or {}
    if "generator" in dataset:
        return int(dataset.get("size", 100))
    counted = mirror_row_count(dataset)
    if counted is not None:
        return counted
    declared = (spec.get("metadata") or {}).get("rows")
    return int(declared) if declared is not None else None


@click.command()
@click.option("--include-path", multiple=True, help="Extra folder of task YAML files (repeatable).")
@click.option("--validate", is_flag=True, help="Load every task, render a prompt and check its targets.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def tasks(include_path: tuple[str, ...], validate: bool, as_json: bool) -> None:
    """List tasks with their answer type and row count (when known)."""
    from ..plugins import components
    from ..run import task_index
    from ..task import task_loader

    built = components()
    index = task_index(built, list(include_path))
    rows = []
    for name, path in sorted(index.tasks.items()):
        spec = read_yaml(path)
        row = {"name": name, "kind": "task", "answer_type": spec.get("answer_type", "text"),
               "rows": _row_count(spec), "path": str(Path(path))}
        if validate:
            row["status"] = _validate(task_loader(index, built.extractors, built.metrics), name)
        rows.append(row)
    for name in sorted(index.groups):
        rows.append({"name": name, "kind": "group", "tasks": index.expand(name)})
    for name in sorted(index.tags):
        rows.append({"name": name, "kind": "tag", "tasks": index.expand(name)})
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    for row in rows:
        if row["kind"] == "task":
            size = row["rows"] if row["rows"] is not None else "?"
            status = f"  {row['status']}" if validate else ""
            click.echo(f"{row['name']:<36} {row['answer_type']:<7} {size:>7}{status}")
        else:
            click.echo(f"{row['name']:<36} {row['kind']:<7} {', '.join(row['tasks'])}")
    if validate and any(r.get("status", "ok") != "ok" for r in rows):
        raise SystemExit(1)


def _validate(load, name: str) -> str:
    """"ok", or what is wrong with the task.

    Loads every item, renders the first item's prompt, and checks that a reply stating the gold
    answer is extracted and scored as correct by the first metric.
    """
    try:
        task = load(name)
        items = task.items
        if not items:
            return "no items"
        first = items[0]
        task.prompt(first)
        reply = task.reference_reply(first)
        scores = task.score(task.extract(reply, first), first)
        if not scores or next(iter(scores.values())) <= 0:
            return "the gold answer does not score"
    except MadevalError as error:
        return f"error: {error}"
    return "ok"
