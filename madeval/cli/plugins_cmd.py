"""``madeval plugins``: what is loaded, as JSON."""

from __future__ import annotations

import json

import click


@click.command()
def plugins() -> None:
    """Print the loaded plugins (name, package, version, description, hooks, components) as JSON."""
    from ..plugins import plugin_info

    click.echo(json.dumps(plugin_info(), indent=2))
