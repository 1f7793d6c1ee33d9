"""Presets: named bundles of configuration options (``--preset NAME``).

A preset fills in the options a user did not give; anything given explicitly wins. Plugins add
presets with the ``register_presets`` hook; the built-in ones are the single-model baselines. A
preset is a dict of configuration keys (:class:`madeval.settings.config.DebateConfig`), so besides the
components it may list extra ``metrics`` its runs always score (Free-MAD's presets add
``token_cost``). A preset that takes options (``--preset-args key=value,...``) gets them as keyword
arguments and may record what it derived from them in the ``preset_args`` it returns (as
``self_consistency_matched`` records the matched sample count).
"""

from __future__ import annotations

from inspect import signature
from typing import Any

from madeval.core.options import component_options
from madeval.core.plugins import registries
from madeval.errors import UsageError


def apply_preset(options: dict[str, Any]) -> dict[str, Any]:
    """``options`` with the named preset's values under them (the options themselves win)."""
    name = options.get("preset")
    if not name:
        if options.get("preset_args"):
            raise UsageError("preset_args without a preset")
        return options
    values = preset_values(str(name), options.get("preset_args"))
    merged = {**values, **options, "preset": registries().presets.resolve(str(name)).name}
    if "preset_args" in values:  # what the preset derived from its options is kept in the configuration
        merged["preset_args"] = values["preset_args"]
    return merged


def preset_values(name: str, args: Any = None) -> dict[str, Any]:
    """The options preset ``name`` sets, given its options ``args`` (a mapping or ``key=value,...``)."""
    entry = registries().presets.resolve(name)
    try:
        given = component_options(args)
    except ValueError as error:
        raise UsageError(f"preset_args {error}") from None
    if not given:
        return entry.factory()
    parameters = signature(entry.factory).parameters
    unknown = sorted(set(given) - set(parameters))
    if unknown and not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        raise UsageError(f"preset {entry.name} does not take the options {', '.join(unknown)}")
    return entry.factory(**given)
