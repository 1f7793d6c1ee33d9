"""``madeval plugins``: the components every loaded plugin adds, as a table (``--json`` for machines,
``madeval plugins NAME`` for one component in full)."""

from __future__ import annotations

import json
from typing import Any

import click

from madeval.errors import UsageError

HEADER = ("kind", "name", "package", "what it does", "options")
#: Kinds whose options a run sets with ``--KIND-args`` (see madeval.settings.config.DebateConfig).
SET_BY_ARGS = ("persona", "responder", "paradigm", "decider")


@click.command()
@click.argument("name", required=False)
@click.option("--json", "as_json", is_flag=True,
              help="Print JSON: every plugin (name, package, version, description, status, hooks, components), "
                   "or with NAME the component's details.")
def plugins(name: str | None, as_json: bool) -> None:
    """List the components of every loaded plugin: kind, name, package, what it does and its options
    (type = default). With NAME, one component in full. Tasks are listed by 'madeval tasks'."""
    from madeval.core.plugins import component_info, failed, plugin_info

    if name is None and as_json:
        click.echo(json.dumps(plugin_info(), indent=2))
        return
    components = component_info()
    if name is not None:
        matching = [c for c in components if name in (c["name"], *c["aliases"])]
        if not matching:
            import difflib

            close = difflib.get_close_matches(name, [c["name"] for c in components], n=3, cutoff=0.5)
            hint = f"; did you mean {', '.join(close)}?" if close else "; 'madeval plugins' lists them"
            raise UsageError(f"no component named '{name}'{hint}")
        click.echo(json.dumps(matching, indent=2) if as_json else "\n\n".join(detail(c) for c in matching))
        return
    click.echo(table(components))
    for broken in failed:
        click.echo(f"\nplugin {broken['name']} ({broken['package']}) failed to load: {broken['error']}")


def options_text(component: dict[str, Any]) -> str:
    """A component's options on one line: ``name: type = default`` separated by ``; ``."""
    return "; ".join(f"{o['name']}{': ' + o['type'] if o['type'] else ''} = {o['default']}"
                     for o in component["options"]) or "–"


def table(components: list[dict[str, Any]]) -> str:
    """One line per component, in aligned columns (the options last, unaligned)."""
    rows = [HEADER] + [(c["kind"], c["name"], c["package"], _clip(c["summary"], 72), options_text(c))
                       for c in components]
    widths = [max(len(row[i]) for row in rows) for i in range(len(HEADER) - 1)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)) + "  " + row[-1] for row in rows]
    lines.insert(1, "  ".join("-" * width for width in widths) + "  " + "-" * len(HEADER[-1]))
    shown = "\n".join(line.rstrip() for line in lines)
    return shown + "\n\nmadeval plugins NAME shows one in full; --json for machines."


def detail(component: dict[str, Any]) -> str:
    """One component in full: where it comes from, its whole description and every option."""
    aliases = f" (also: {', '.join(component['aliases'])})" if component["aliases"] else ""
    lines = [f"{component['kind']} {component['name']}{aliases}",
             f"plugin {component['plugin']}, package {component['package']}", "", component["description"], ""]
    if component["options"]:
        kind = component["kind"]
        how = f" (set with --{kind}-args key=value,...; {kind}_args: in a config file)" if kind in SET_BY_ARGS else ""
        lines.append(f"Options{how}:")
        lines += [f"  {o['name']}: {o['type'] or 'any'} = {o['default']}" for o in component["options"]]
    else:
        lines.append("No options.")
    return "\n".join(lines)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
