"""Named component registries: names, aliases, collisions and "did you mean".

Plugins add components through register callbacks (see :mod:`madeval.core.hookspecs`); this module
owns what happens to those names. A name may be registered once; a second plugin using the same
name or alias is an error that names both plugins.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

from madeval.core.options import convert_component_option
from madeval.errors import UsageError


@dataclass
class Entry:
    """One registered component: its factory, where it came from and how to describe it."""

    name: str
    factory: Callable[..., Any]
    plugin: str
    aliases: tuple[str, ...] = ()
    description: str = ""

    def options(self) -> dict[str, Any]:
        """The keyword options the factory accepts, with their defaults (``...`` = required)."""
        return _options_of(self.factory)


@dataclass
class Registry:
    """All components of one kind (``"decider"``, ``"paradigm"``, ...)."""

    kind: str
    entries: dict[str, Entry] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)

    def add(
        self,
        name: str,
        factory: Callable[..., Any],
        *,
        plugin: str,
        aliases: tuple[str, ...] | list[str] = (),
        description: str = "",
    ) -> None:
        """Register ``factory`` under ``name`` (and ``aliases``) for ``plugin``."""
        for key in (name, *aliases):
            owner = self._owner(key)
            if owner is not None:
                raise UsageError(
                    f"{self.kind} name '{key}' is registered by both plugin '{owner.plugin}' "
                    f"and plugin '{plugin}'"
                )
        description = description or first_paragraph(factory)
        self.entries[name] = Entry(name, factory, plugin, tuple(aliases), description)
        for alias in aliases:
            self.aliases[alias] = name

    def _owner(self, key: str) -> Entry | None:
        if key in self.entries:
            return self.entries[key]
        if key in self.aliases:
            return self.entries[self.aliases[key]]
        return None

    def names(self) -> list[str]:
        """Registered names, sorted."""
        return sorted(self.entries)

    def resolve(self, name: str) -> Entry:
        """The entry for ``name`` or an alias of it; unknown names raise a one-line UsageError."""
        entry = self._owner(name)
        if entry is not None:
            return entry
        known = sorted({*self.entries, *self.aliases})
        close = difflib.get_close_matches(name, known, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(known)}"
        raise UsageError(f"unknown {self.kind} '{name}'{hint}")

    def create(self, name: str, options: dict[str, Any] | None = None) -> Any:
        """Build the component ``name`` with ``options`` and name it; bad options raise a UsageError.

        The registry is the one place a component's name comes from: ``register("counting",
        Counting)`` is all a plugin writes, and ``create`` sets the built object's ``name`` to the
        canonical registered name (an alias resolves to it), so no class attribute repeats the name
        (an object that takes no attributes, such as a built-in function, is left as it is).
        ``self.name`` is therefore set once ``__init__`` has returned, not inside it. A component
        built inside another (a wrapper's inner paradigm) or in a test goes through ``create`` too,
        so it records the same name as one named on the command line.
        """
        entry = self.resolve(name)
        options = dict(options or {})
        accepted = entry.options()
        unknown = sorted(set(options) - set(accepted))
        if unknown:
            listed = ", ".join(sorted(accepted)) or "none"
            raise UsageError(
                f"{self.kind} '{entry.name}' has no option {', '.join(unknown)} (options: {listed})"
            )
        converted = {
            key: convert_component_option(self.kind, entry.name, key, value, accepted[key])
            for key, value in options.items()
        }
        try:
            built = entry.factory(**converted)
        except (TypeError, ValueError) as error:
            raise UsageError(f"{self.kind} '{entry.name}': {error}") from error
        with contextlib.suppress(AttributeError):  # e.g. a built-in function an extractor factory returns
            built.name = entry.name
        return built


def first_paragraph(documented: Any) -> str:
    """The first paragraph of ``documented``'s docstring on one line ("" when it has none): a
    component's :attr:`Entry.description`, and what ``madeval plugins`` shows as the description
    of a built-in plugin module."""
    doc = inspect.getdoc(documented) or ""
    return doc.split("\n\n")[0].replace("\n", " ")


@functools.lru_cache(maxsize=None)
def _options_of(factory: Callable[..., Any]) -> dict[str, Any]:
    params = inspect.signature(factory).parameters
    return {
        name: (... if p.default is inspect.Parameter.empty else p.default)
        for name, p in params.items()
        if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD) and name != "self"
    }

