"""The one YAML loader madeval reads every file with: PyYAML's safe loader, bounded.

A config file, a task file or a price file may come from anyone; a few hundred bytes of aliases
of aliases (a "billion laughs" file) must not take a process's memory, and a file nested too
deeply, too large or holding a number too long to read must be one line, not a traceback.
:func:`read_yaml_file` is the one way madeval reads a YAML file: its size, its nodes (aliases
counted at every use) and its depth are bounded, and every problem is one :class:`UsageError`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from madeval.errors import UsageError

#: Nodes a YAML document may expand to, an alias counted again at every use: a few hundred bytes
#: of aliases of aliases (a "billion laughs" file) expand to billions, and every later walk over
#: the value (a check, an error message, a copy) would take that long.
MAX_YAML_NODES = 100_000
#: Levels a YAML document may nest (aliases expanded): a config, task or price file nests a few;
#: every later walk over the value (a check, a copy, an error message) recurses that deep.
MAX_YAML_DEPTH = 64
#: Bytes of a YAML file read at most: the files madeval reads are a few kilobytes.
MAX_YAML_BYTES = 8 << 20


#: libyaml's safe loader when PyYAML was built with it (the same documents, about 6 times faster:
#: every run reads the task files before its first call), else PyYAML's own. libyaml bounds
#: nesting itself (1,000 levels: a ScannerError, not a crash).
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class BoundedLoader(SAFE_LOADER):  # type: ignore[misc, valid-type]
    """PyYAML's safe loader that refuses a document expanding to more than :data:`MAX_YAML_NODES`
    nodes, nesting deeper than :data:`MAX_YAML_DEPTH` levels or holding a recursive alias (a
    :class:`yaml.YAMLError` with the line of its start).

    Aliases stay allowed (a config file may share a block with ``&name``/``*name``); what is bounded
    is their expansion, counted on the composed node graph before anything is constructed."""

    def get_single_node(self) -> yaml.Node | None:  # libyaml's composer and PyYAML's both end here
        node = super().get_single_node()
        if node is not None:
            _check_expansion(node)
        return node


def _check_expansion(root: yaml.Node) -> None:
    """Refuse ``root`` when its nodes, aliases expanded, pass :data:`MAX_YAML_NODES`, nest deeper
    than :data:`MAX_YAML_DEPTH` or loop."""
    sizes: dict[int, tuple[int, int]] = {}  # a node's expanded size and height, once known (aliases share the node)
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:  # depth first, without recursion: the nesting may be deep
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if children_done:
            open_nodes.discard(id(node))
            known = [sizes[id(child)] for child in children]
            size, height = 1 + sum(s for s, _ in known), 1 + max((h for _, h in known), default=0)
            sizes[id(node)] = (size, height)
            if size > MAX_YAML_NODES:
                raise yaml.composer.ComposerError(
                    None, None, f"expands to more than {MAX_YAML_NODES} values (aliases of aliases?)",
                    root.start_mark)
            if height > MAX_YAML_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nests more than {MAX_YAML_DEPTH} levels deep", root.start_mark)
            continue
        if id(node) in open_nodes:
            raise yaml.composer.ComposerError(None, None, "holds a recursive alias", node.start_mark)
        if len(open_nodes) > MAX_YAML_DEPTH:  # the open nodes are the path from the root: refused before the walk grows
            raise yaml.composer.ComposerError(
                None, None, f"nests more than {MAX_YAML_DEPTH} levels deep", root.start_mark)
        open_nodes.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def read_yaml_file(path: Path | str, loader: type[yaml.SafeLoader] = BoundedLoader, what: str = "") -> Any:
    """The value of the YAML file at ``path``, read with ``loader`` (:class:`BoundedLoader` or a
    subclass of it: a task file's adds its tags). A file over :data:`MAX_YAML_BYTES`, not text,
    malformed, expanding past :data:`MAX_YAML_NODES` nodes, nested past :data:`MAX_YAML_DEPTH`
    levels or holding a number too long to read is a one-line :class:`UsageError` naming the file;
    so is one that cannot be read (``what`` names the file's kind there, e.g. ``"config "``)."""
    return parse_yaml_bytes(read_yaml_bytes(path, what), path, loader)


def read_yaml_bytes(path: Path | str, what: str = "") -> bytes:
    """The bytes of the YAML file at ``path``, at most :data:`MAX_YAML_BYTES` (a larger file, or one
    that cannot be read, is a one-line :class:`UsageError`; ``what`` as for :func:`read_yaml_file`)."""
    named = f"{what}{path}"
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_YAML_BYTES + 1)
    except OSError as error:
        raise UsageError(f"cannot read {named}: {error.strerror or error}") from None
    if len(data) > MAX_YAML_BYTES:
        raise UsageError(f"{named} is larger than {MAX_YAML_BYTES >> 20} MB: not a YAML file madeval reads")
    return data


def parse_yaml_bytes(data: bytes, path: Path | str, loader: type[yaml.SafeLoader] = BoundedLoader) -> Any:
    """The value of ``data``, the bytes of the YAML file at ``path`` (:func:`read_yaml_bytes`), read
    with ``loader``; every problem is a one-line :class:`UsageError` naming ``path``."""
    try:
        return yaml.load(data, Loader=loader)  # noqa: S506 - a safe loader, bounded; bytes: PyYAML reads the BOM
    except (yaml.YAMLError, RecursionError) as error:
        raise yaml_problem(path, error) from None
    except (ValueError, OverflowError) as error:  # a value its constructor cannot make (a date, a huge integer)
        problem = "a number too long to read" if "digits" in str(error) else " ".join(str(error).split())[:200]
        raise UsageError(f"malformed YAML in {path}: {problem}") from None


def yaml_problem(path: Path | str, error: yaml.YAMLError | RecursionError) -> UsageError:
    """The one-line error for a YAML file that cannot be read: where and what."""
    if isinstance(error, RecursionError):
        return UsageError(f"malformed YAML in {path}: nested too deeply")
    mark = getattr(error, "problem_mark", None)
    where = f" line {mark.line + 1}" if mark else ""
    problem = " ".join(str(getattr(error, "problem", None) or error).split())
    return UsageError(f"malformed YAML in {path}{where}: {problem}")


def yaml_value(text: str, where: str) -> Any:
    """A value written in YAML on the command line (``--decider counting:after_turns=2``), read as
    a file is (:class:`BoundedLoader`); a malformed one is a one-line :class:`UsageError` naming
    ``where``."""
    try:
        return yaml.load(text, Loader=BoundedLoader)  # noqa: S506 - a safe loader, bounded
    except (yaml.YAMLError, RecursionError, ValueError, OverflowError) as error:
        problem = getattr(error, "problem", None) or error
        raise UsageError(f"{where}: {' '.join(str(problem).split())[:200]}") from None
