"""The one YAML loader madeval reads every file with: PyYAML's safe loader, bounded.

A config file, a task file or a price file may come from anyone; a few hundred bytes of aliases
of aliases (a "billion laughs" file) must not take a process's memory, and a file nested too
deeply must be one line, not a traceback.
"""

from __future__ import annotations

from pathlib import Path

import yaml

from madeval.errors import UsageError

#: Nodes a YAML document may expand to, an alias counted again at every use: a few hundred bytes
#: of aliases of aliases (a "billion laughs" file) expand to billions, and every later walk over
#: the value (a check, an error message, a copy) would take that long.
MAX_YAML_NODES = 100_000


#: libyaml's safe loader when PyYAML was built with it (the same documents, about 6 times faster:
#: every run reads the task files before its first call), else PyYAML's own. libyaml bounds
#: nesting itself (1,000 levels: a ScannerError, not a crash).
SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class BoundedLoader(SAFE_LOADER):  # type: ignore[misc, valid-type]
    """PyYAML's safe loader that refuses a document expanding to more than :data:`MAX_YAML_NODES`
    nodes or holding a recursive alias (a :class:`yaml.YAMLError` with the line of its start).

    Aliases stay allowed (a config file may share a block with ``&name``/``*name``); what is bounded
    is their expansion, counted on the composed node graph before anything is constructed."""

    def get_single_node(self) -> yaml.Node | None:  # libyaml's composer and PyYAML's both end here
        node = super().get_single_node()
        if node is not None:
            _check_expansion(node)
        return node


def _check_expansion(root: yaml.Node) -> None:
    """Refuse ``root`` when its nodes, aliases expanded, pass :data:`MAX_YAML_NODES` or loop."""
    sizes: dict[int, int] = {}  # a node's expanded size, once known (aliases share the node)
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:  # depth first, without recursion: the nesting may be deep
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        children = _children(node)
        if children_done:
            open_nodes.discard(id(node))
            sizes[id(node)] = size = 1 + sum(sizes[id(child)] for child in children)
            if size > MAX_YAML_NODES:
                raise yaml.composer.ComposerError(
                    None, None, f"expands to more than {MAX_YAML_NODES} values (aliases of aliases?)",
                    root.start_mark)
            continue
        if id(node) in open_nodes:
            raise yaml.composer.ComposerError(None, None, "holds a recursive alias", node.start_mark)
        open_nodes.add(id(node))
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def yaml_problem(path: Path | str, error: yaml.YAMLError | RecursionError) -> UsageError:
    """The one-line error for a YAML file that cannot be read: where and what."""
    if isinstance(error, RecursionError):
        return UsageError(f"malformed YAML in {path}: nested too deeply")
    mark = getattr(error, "problem_mark", None)
    where = f" line {mark.line + 1}" if mark else ""
    return UsageError(f"malformed YAML in {path}{where}: {getattr(error, 'problem', error)}")
