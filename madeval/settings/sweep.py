"""Sweep files: several configurations in one ``--config`` file, run on the same items.

A sweep file is a config file (run settings such as ``tasks``, ``repeats``, ``limit``, ``seed`` at the
top level) with any of:

* ``common``: component options shared by every configuration (top-level component options count
  as common too);
* ``grid``: options mapped to lists of values; every combination is one configuration, named by
  its values (``grid: {decider: [majority_consensus, simple_voting]}`` gives two);
* ``runs``: a list of extra configurations, each a mapping of options on top of ``common``
  (baselines, one-off variants; the MALLM paper's batch file, Appendix H). A run with a
  ``preset`` (``baseline_cot``, ``self_consistency``) keeps the preset's own options over ``common``.

The configurations are the grid's combinations followed by the runs. At the top level of a sweep,
``name`` is the sweep's name (the leaderboard title), not a configuration's.
"""

from __future__ import annotations

import difflib
from itertools import product
from typing import Any

from madeval.core.options import snake_keys
from madeval.errors import UsageError
from madeval.settings.presets import preset_values

SWEEP_KEYS = ("common", "grid", "runs")
COMPONENT_KEYS = ("persona", "responder", "paradigm", "decider", "preset")


def is_sweep(options: dict[str, Any]) -> bool:
    """True when the options declare several configurations (``common``, ``grid`` or ``runs``)."""
    return any(key in options for key in SWEEP_KEYS)


def expand(options: dict[str, Any], debate_keys: set[str],
           run_keys: set[str] = frozenset()) -> tuple[list[dict[str, Any]], str | None]:
    """The component options of every configuration of a sweep, and the sweep's name.

    ``run_keys`` (options that hold for the whole run) are named as such when found in a part;
    another unknown key gets the closest option name."""
    top = {k: v for k, v in options.items() if k in debate_keys and k != "name"}
    common = _mapping(options.get("common"), "common", debate_keys, run_keys)
    base = {**top, **common}
    grid = _mapping(options.get("grid"), "grid", debate_keys, run_keys)
    runs = options.get("runs") or []
    if not isinstance(runs, list):
        raise UsageError("runs must be a list of option mappings")
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise UsageError(f"grid option {key} must be a non-empty list of values")
        if key in base:
            raise UsageError(f"{key} is both set for every configuration and varied by the grid")
    if grid and "name" in base:
        raise UsageError("a name in common would give every grid configuration the same name")
    configurations = []
    for values in product(*grid.values()) if grid else ():
        point = dict(zip(grid, values))
        configurations.append({**base, **point, "name": grid_name(point)})
    for index, run in enumerate(runs):
        own = _mapping(run, f"runs[{index}]", debate_keys, run_keys)
        configurations.append({**_without_preset_keys(base, own.get("preset"), own.get("preset_args")), **own})
    return configurations or [base], options.get("name")


def _without_preset_keys(base: dict[str, Any], preset: str | None, args: Any = None) -> dict[str, Any]:
    """``base`` less the options a preset sets: a baseline run keeps its own agents and turns."""
    if not preset:
        return base
    fixed = preset_values(str(preset), args)
    return {k: v for k, v in base.items() if k not in fixed}


def grid_name(point: dict[str, Any]) -> str:
    """A grid configuration's name: component names as they are, other options as key=value."""
    parts = []
    for key, value in point.items():
        if key in COMPONENT_KEYS:
            parts.append(str(value))
        elif isinstance(value, dict):
            parts.append(f"{key}=" + ",".join(f"{k}:{v}" for k, v in value.items()))
        else:
            parts.append(f"{key}={value}")
    return " ".join(parts)


def _mapping(value: Any, where: str, debate_keys: set[str], run_keys: set[str] = frozenset()) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise UsageError(f"{where} must be a mapping of options")
    data = snake_keys(value)
    unknown = sorted(set(data) - debate_keys)
    misspelt = [key for key in unknown if key not in run_keys]
    if misspelt:  # not a run setting either: most likely a misspelt component option
        close = difflib.get_close_matches(misspelt[0], sorted(debate_keys), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else " (see 'madeval run --help' for the options)"
        raise UsageError(f"{where}: unknown option {misspelt[0]}{hint}")
    if unknown:
        raise UsageError(
            f"{where}: {', '.join(unknown)} cannot vary per configuration (component options only; "
            "run settings such as tasks or repeats go at the top level)"
        )
    return data
