"""Presets: named bundles of configuration options (``--preset NAME``).

A preset fills in the options a user did not give; anything given explicitly wins. Plugins add
presets with the ``register_presets`` hook; the built-in ones are the single-model baselines. A
preset is a dict of configuration keys (:class:`madeval.config.DebateConfig`), so besides the
components it may list extra ``metrics`` its runs always score (Free-MAD's presets add
``token_cost``).
"""

from __future__ import annotations

from typing import Any

from .plugins import registries


def apply_preset(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with the named preset's values under them (the options themselves win)."""
    name = options.get("preset")
    if not name:
        return options
    entry = registries().presets.resolve(str(name))
    return {**entry.factory(), **options, "preset": entry.name}
