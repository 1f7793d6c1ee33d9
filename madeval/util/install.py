"""How to install one of madeval's extras the way madeval itself was installed.

A message that needs an extra (``inspect``, ``embedded``, ``wandb``...) names the command that
works here: ``pip install -e '.[inspect]'`` for a clone installed in editable mode (the usual way
to work on madeval, and what a newcomer following the README has), ``pip install
'madeval[inspect] @ git+URL'`` for an install from a repository, ``pip install 'madeval[inspect]'``
from a package index. How madeval was installed is read from its ``direct_url.json`` (PEP 610,
through :mod:`importlib.metadata`); code run from a source tree without such a record (``PYTHONPATH``)
counts as a clone.
"""

from __future__ import annotations

import importlib
import json
import shlex
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any, Callable
from urllib.parse import unquote, urlparse

from madeval.errors import UsageError

#: The distribution whose extras are meant.
DISTRIBUTION = "madeval"
#: Where this package's source tree would hold its pyproject.toml (a clone's root).
SOURCE_ROOT = Path(__file__).resolve().parents[2]


def import_optional(module: str, missing: Callable[[], str]) -> ModuleType:
    """``module`` imported (an optional dependency, one of an extra's), or a one-line :class:`UsageError`
    saying ``missing()``: built only then, as it looks up how madeval was installed."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise UsageError(missing()) from None


def install_command(extra: str) -> str:
    """The shell command that installs madeval's ``extra`` the way this madeval was installed
    (:func:`command_for`, from this installation's ``direct_url.json`` and this file's place)."""
    return command_for(extra, installed_from(), source_tree(), Path.cwd())


def installed_from() -> dict[str, Any] | None:
    """The installed madeval's ``direct_url.json`` (PEP 610) as a mapping; None when it was installed
    from an index, is not installed, or the record cannot be read."""
    try:
        text = metadata.distribution(DISTRIBUTION).read_text("direct_url.json")
    except metadata.PackageNotFoundError:
        return None
    try:
        found = json.loads(text) if text else None
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def source_tree() -> Path | None:
    """The clone this code runs from (the folder with madeval's pyproject.toml), or None."""
    project = SOURCE_ROOT / "pyproject.toml"
    try:
        text = project.read_text(encoding="utf-8")
    except OSError:
        return None
    return SOURCE_ROOT if f'name = "{DISTRIBUTION}"' in text else None


def command_for(extra: str, direct_url: dict[str, Any] | None, tree: Path | None, cwd: Path) -> str:
    """The install command of ``extra`` for an installation described by ``direct_url`` (PEP 610's
    ``direct_url.json``; None: from an index) and the source ``tree`` the code runs from (None: not
    a clone). A local folder is written ``.`` when it is ``cwd``."""
    url = str((direct_url or {}).get("url") or "")
    local = _local_path(url)
    if (direct_url or {}).get("dir_info", {}).get("editable") and local is not None:
        return f"pip install -e {_quoted(local, extra, cwd)}"
    if direct_url is None and tree is not None:  # run from a clone that pip did not install
        return f"pip install -e {_quoted(tree, extra, cwd)}"
    if direct_url and "vcs_info" in direct_url:
        vcs = direct_url["vcs_info"].get("vcs", "git")
        return f"pip install {shlex.quote(f'{DISTRIBUTION}[{extra}] @ {vcs}+{url}')}"
    if direct_url and "dir_info" in direct_url and local is not None:
        return f"pip install {_quoted(local, extra, cwd)}"
    return f"pip install {shlex.quote(f'{DISTRIBUTION}[{extra}]')}"


def _local_path(url: str) -> Path | None:
    """The folder a ``file://`` URL names, or None for any other URL."""
    parsed = urlparse(url)
    return Path(unquote(parsed.path)) if parsed.scheme == "file" and parsed.path else None


def _quoted(folder: Path, extra: str, cwd: Path) -> str:
    """``folder[extra]`` quoted for a POSIX shell; ``.[extra]`` when ``folder`` is ``cwd``."""
    try:
        same = folder.resolve() == cwd.resolve()
    except OSError:
        same = False
    return shlex.quote(f"{'.' if same else folder}[{extra}]")
