"""madeval: an evaluation harness for multi-agent debate.

Plugins implement the hooks in :mod:`madeval.hookspecs` with the ``hookimpl`` marker exported
here; the component base classes live in :mod:`madeval.components`.
"""

import pluggy

__version__ = "0.1.0"

hookimpl = pluggy.HookimplMarker("madeval")

__all__ = ["__version__", "hookimpl"]
