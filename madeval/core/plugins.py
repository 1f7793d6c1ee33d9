"""The plugin manager: built-in plugins, third-party plugins, and the component registries.

Built-in components are internal plugins (the modules in ``DEFAULT_PLUGINS``) registered through
the same manager as third-party packages, which are found through the ``madeval`` entry-point
group. ``MADEVAL_LOAD_PLUGINS`` is an allow-list of distribution or entry-point names separated by
commas; set it to the empty string to load no third-party plugins at all.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import os
import re
import sys
from dataclasses import dataclass
from typing import Any

import pluggy

from madeval._version import __version__
from madeval.core import hookspecs
from madeval.core.registry import Registry, first_paragraph
from madeval.errors import MadevalError

DEFAULT_PLUGINS = (
    "madeval.builtins.personas",
    "madeval.builtins.responders",
    "madeval.builtins.paradigms",
    "madeval.builtins.consensus",
    "madeval.builtins.counting",
    "madeval.builtins.voting",
    "madeval.builtins.judge",
    "madeval.builtins.tasks",
    "madeval.builtins.metrics",
    "madeval.builtins.extractors",
    "madeval.builtins.choices",
    "madeval.builtins.baselines",
    "madeval.importers.plugin",
)

ENTRY_POINT_GROUP = "madeval"


@dataclass(frozen=True)
class Kind:
    """One kind of component: the hook that registers it, its singular name (as in messages such
    as "unknown decider") and its plural (the :class:`Registries` attribute and the key under
    which ``madeval plugins`` lists a plugin's components of that kind)."""

    hook: str
    name: str
    plural: str


#: Task sources are paths (folders of task files), not named components: they have no registry.
TASK_SOURCES = Kind("register_tasks", "task source", "task_sources")
#: Every kind of component, in the order the hooks are called: the one list everything else here
#: is derived from.
KINDS = (
    Kind("register_personas", "persona", "personas"),
    Kind("register_responders", "responder", "responders"),
    Kind("register_paradigms", "paradigm", "paradigms"),
    Kind("register_deciders", "decider", "deciders"),
    TASK_SOURCES,
    Kind("register_metrics", "metric", "metrics"),
    Kind("register_task_providers", "task provider", "task_providers"),
    Kind("register_extractors", "extractor", "extractors"),
    Kind("register_presets", "preset", "presets"),
    Kind("register_importers", "importer", "importers"),
)
#: The kinds of named components, each with a :class:`Registry`.
REGISTRY_KINDS = tuple(kind for kind in KINDS if kind is not TASK_SOURCES)


pm = pluggy.PluginManager("madeval")
pm.add_hookspecs(hookspecs)
_loaded = False
#: The distribution of every third-party plugin loaded, by plugin (entry-point) name.
_distributions: dict[str, importlib.metadata.Distribution] = {}
#: Third-party plugins that could not be loaded: name, package, version and the error, one line.
failed: list[dict[str, str]] = []


def load_plugins() -> pluggy.PluginManager:
    """Register the built-in plugins and the allowed third-party ones (once per process).

    A third-party plugin that fails to load (an import error, invalid hooks) is skipped with a
    one-line warning on standard error, and so is a ``MADEVAL_LOAD_PLUGINS`` name that matches no
    installed plugin; ``madeval plugins`` lists the failed ones. One whose register hook raises is
    skipped the same way when :func:`registries` calls it.
    """
    global _loaded
    if _loaded:
        return pm
    _loaded = True
    allow = os.environ.get("MADEVAL_LOAD_PLUGINS")
    wanted = None if allow is None else {_normal(name) for name in allow.split(",") if name.strip()}
    if wanted != set():
        matched: set[str] = set()
        for dist in list(importlib.metadata.distributions()):
            ours = [ep for ep in dist.entry_points if ep.group == ENTRY_POINT_GROUP]
            if not ours:
                continue  # not a plugin: its METADATA is not parsed (40 ms for 150 packages)
            package = dist.metadata["name"] or "?"
            for ep in ours:
                if wanted is not None:
                    hits = wanted & {_normal(ep.name), _normal(package)}
                    if not hits:
                        continue
                    matched |= hits
                if not (pm.has_plugin(ep.name) or pm.is_blocked(ep.name)):
                    _load_entry_point(ep, dist, package)
        for name in sorted((wanted or set()) - matched):
            _warn(f"MADEVAL_LOAD_PLUGINS names '{name}', but no installed plugin has that name")
    for module_name in DEFAULT_PLUGINS:
        if pm.get_plugin(module_name) is None:
            pm.register(importlib.import_module(module_name), name=module_name)
    pm.check_pending()
    return pm


def _load_entry_point(ep: importlib.metadata.EntryPoint, dist: importlib.metadata.Distribution, package: str) -> None:
    """Import and register one third-party plugin; on any error, warn and go on without it."""
    try:
        plugin = ep.load()
        pm.register(plugin, name=ep.name)
        pm.check_pending()
    except Exception as error:  # a broken plugin must not break every command
        if pm.get_plugin(ep.name) is not None:
            pm.unregister(name=ep.name)
        reason = " ".join(f"{type(error).__name__}: {error}".split())
        failed.append({"name": ep.name, "package": package, "version": dist.version or "?",
                       "description": _summary(dist), "error": reason})
        _warn(f"plugin '{ep.name}' ({package}) failed to load and is skipped: {reason}")
        return
    _distributions[ep.name] = dist


def _summary(dist: importlib.metadata.Distribution | None) -> str:
    """The one-line description of a distribution (its ``Summary`` metadata), "" when it has none."""
    return (dist.metadata.get("Summary") if dist is not None else None) or ""


def _normal(name: str) -> str:
    """A distribution or entry-point name compared as pip does (case, ``-``, ``_`` and ``.``)."""
    return re.sub(r"[-_.]+", "-", name.strip()).lower()


def _warn(message: str) -> None:
    print(f"madeval: warning: {message}", file=sys.stderr)


class Registries:
    """Every registry, built by calling each plugin's register hooks once.

    Each kind's registry is the attribute named by its plural (``registries().deciders``) and
    :meth:`registry` finds it by the kind's name; ``task_sources`` lists ``(plugin, path)``.
    """

    def __init__(self) -> None:
        self._by_kind = {kind.name: Registry(kind.name) for kind in REGISTRY_KINDS}
        self.task_sources: list[tuple[str, Any]] = []
        for kind in REGISTRY_KINDS:
            setattr(self, kind.plural, self._by_kind[kind.name])

    def registry(self, kind: str) -> Registry:
        """The registry of ``kind`` ("persona", "responder", "paradigm", "decider", ...)."""
        return self._by_kind[kind]


_cache: tuple[tuple[int, ...], Registries] | None = None


def _registrar(registry: Registry, plugin: str):
    """The ``register`` callback a plugin's hook gets for one kind: adds to ``registry`` in ``plugin``'s name."""

    def register(name, factory, *, aliases=(), description=""):
        registry.add(name, factory, plugin=plugin, aliases=aliases, description=description)

    return register


def registries() -> Registries:
    """The component registries for the plugins registered right now (cached until they change)."""
    global _cache
    load_plugins()
    key = tuple(sorted(id(p) for p in pm.get_plugins()))
    if _cache is not None and _cache[0] == key:
        return _cache[1]
    built = Registries()
    for kind in KINDS:
        for impl in _impls_in_load_order(kind.hook):
            plugin_name = impl.plugin_name
            if kind is TASK_SOURCES:
                def register(path, _p=plugin_name):
                    built.task_sources.append((_p, path))
            else:
                register = _registrar(built.registry(kind.name), plugin_name)

            try:
                impl.function(register=register)
            except MadevalError:  # a name clash between plugins: one line, the user must choose
                raise
            except Exception as error:  # a third-party hook that fails must not break every command
                if plugin_name in DEFAULT_PLUGINS:
                    raise
                _skip_failed_hook(plugin_name, kind.hook, error)
                return registries()  # built again without it: none of its components half-registered
    _cache = (key, built)
    return built


def _skip_failed_hook(plugin_name: str, hook_name: str, error: Exception) -> None:
    """Unregister a plugin whose ``hook_name`` raised; warn once and list it as failed."""
    pm.unregister(name=plugin_name)
    dist = _distributions.pop(plugin_name, None)
    package = dist.metadata["name"] if dist is not None else plugin_name
    reason = " ".join(f"{type(error).__name__}: {error}".split())
    failed.append({"name": plugin_name, "package": package, "version": (dist.version if dist else None) or "?",
                   "description": _summary(dist), "error": f"{hook_name}: {reason}"})
    _warn(f"plugin '{plugin_name}' ({package}) failed in {hook_name} and is skipped: {reason}")


def _impls_in_load_order(hook_name: str):
    """Hook implementations with built-ins first, so built-in task sources are overridable."""
    impls = getattr(pm.hook, hook_name).get_hookimpls()
    builtin = [i for i in impls if i.plugin_name in DEFAULT_PLUGINS]
    builtin.sort(key=lambda i: DEFAULT_PLUGINS.index(i.plugin_name))
    return builtin + [i for i in impls if i.plugin_name not in DEFAULT_PLUGINS]


def plugin_info() -> list[dict[str, Any]]:
    """What ``madeval plugins`` prints: name, package, version, description, status, hooks and
    components of every plugin; plugins that failed to load follow with ``status: failed`` and
    their error. The description of an installed package is its ``Summary`` metadata (the
    ``description`` in its pyproject); that of a built-in plugin its module docstring's first
    paragraph."""
    load_plugins()
    built = registries()
    rows = []
    for name, plugin in sorted(pm.list_name_plugin(), key=lambda item: item[0]):
        hooks = sorted(caller.name for caller in pm.get_hookcallers(plugin) or [])
        dist = _distributions.get(name)
        if dist is not None:
            version, package, description = dist.version, dist.metadata["name"], _summary(dist)
        else:
            version, package, description = __version__, "madeval", first_paragraph(plugin)
        found: dict[str, list[str]] = {}
        for kind in REGISTRY_KINDS:
            names = [e.name for e in built.registry(kind.name).entries.values() if e.plugin == name]
            if names:
                found[kind.plural] = sorted(names)
        sources = [str(path) for plugin_name, path in built.task_sources if plugin_name == name]
        if sources:
            found[TASK_SOURCES.plural] = sources
        rows.append({
            "name": name, "package": package, "version": version, "description": description,
            "status": "loaded", "hooks": hooks,
            "components": found,
        })
    for broken in failed:
        rows.append({**broken, "status": "failed", "hooks": [], "components": {}})
    return rows


def component_info() -> list[dict[str, Any]]:
    """Every registered component, for ``madeval plugins``: kind, name, aliases, plugin, package,
    a one-line summary, the full description (its docstring) and its options, each with its type
    (the factory's annotation, as written) and default (``required`` when it has none)."""
    load_plugins()
    built = registries()
    packages = {name: dist.metadata["name"] for name, dist in _distributions.items()}
    found = []
    for kind in REGISTRY_KINDS:
        for entry in built.registry(kind.name).entries.values():
            found.append({
                "kind": kind.name, "name": entry.name, "aliases": list(entry.aliases), "plugin": entry.plugin,
                "package": packages.get(entry.plugin, "madeval"), "summary": first_sentence(entry.description),
                "description": inspect.getdoc(entry.factory) or entry.description,
                "options": option_info(entry.factory),
            })
    return found


def first_sentence(text: str) -> str:
    """The first sentence of ``text`` (up to the first ``. ``), on one line, without the final dot."""
    match = re.search(r"^(.+?\.)(\s|$)", text.strip(), re.DOTALL)
    return " ".join((match.group(1) if match else text.strip()).split()).rstrip(".")


def option_info(factory: Any) -> list[dict[str, str]]:
    """A factory's keyword options: name, type (its annotation, as written; "" when none) and default
    (``repr``, or ``required``)."""
    try:
        params = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):  # a callable without a signature takes no options we can show
        return []
    shown = []
    for p in params:
        if p.kind not in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) or p.name == "self":
            continue
        annotation = "" if p.annotation is inspect.Parameter.empty else p.annotation
        kind = annotation if isinstance(annotation, str) else getattr(annotation, "__name__", str(annotation))
        default = "required" if p.default is inspect.Parameter.empty else repr(p.default)
        shown.append({"name": p.name, "type": kind, "default": default})
    return shown


def versions() -> dict[str, Any]:
    """Versions of Python, madeval, key libraries and every loaded plugin."""
    found = {"python": sys.version.split()[0], "madeval": __version__}
    for package in ("openai", "pluggy", "datasets", "llama-cpp-python"):
        try:
            found[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            pass
    found["plugins"] = {p["name"]: p["version"] for p in plugin_info() if p["status"] == "loaded"}
    return found
