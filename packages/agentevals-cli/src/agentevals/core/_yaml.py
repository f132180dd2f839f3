"""YAML with bounded expansion: every YAML agentevals reads (configs, manifests, indexes, EVAL.yaml) goes
through ``BoundedLoader`` so that an alias bomb ("billion laughs") or a document nested thousands deep is
a one-line ``yaml.YAMLError`` instead of gigabytes of memory or a ``RecursionError``.

Aliases are not expanded by PyYAML itself (they share one object), but everything downstream (pydantic
validation, JSON encoding for an evaluator, printing) copies them. So the check counts the nodes the
document would have with every alias expanded, on the composed node graph, before anything is built.

Example:
    ```python
    from agentevals.core._yaml import safe_load

    data = safe_load(text)        # yaml.YAMLError: "expands to more than 100000 nodes …"
    ```
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, SequenceNode

from .limits import current_limits, variable

__all__ = ["BoundedLoader", "BoundedSafeLoader", "check_expansion", "safe_load"]


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def check_expansion(root: Node, limit: int) -> None:
    """Raise ``ConstructorError`` when ``root`` expands to more than ``limit`` nodes or refers to itself.

    Linear in the number of distinct nodes: each node's expanded size is computed once (post-order,
    without recursion, so depth costs nothing either).
    """
    sizes: dict[int, int] = {}
    on_path: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            on_path.discard(key)
            total = 1 + sum(sizes[id(child)] for child in _children(node))
            if total > limit:
                raise ConstructorError(
                    None, None,
                    f"the document expands to more than {limit} nodes (aliases included); "
                    f"set {variable('max_yaml_nodes')} to allow more", node.start_mark)
            sizes[key] = total
            continue
        if key in sizes:
            continue
        if key in on_path:
            raise ConstructorError(None, None, "an alias refers to a node that contains it (a recursive "
                                   "document)", node.start_mark)
        on_path.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)


class BoundedLoader:
    """Mixin for a PyYAML loader class: checks alias expansion and depth before constructing anything."""

    def get_single_node(self) -> Any:
        try:
            return super().get_single_node()  # type: ignore[misc]  # defined by the loader this mixes into
        except RecursionError:
            raise yaml.YAMLError("the document is nested too deeply to read") from None

    def construct_document(self, node: Node) -> Any:
        check_expansion(node, current_limits().max_yaml_nodes)
        try:
            return super().construct_document(node)  # type: ignore[misc]  # defined by the loader this mixes into
        except RecursionError:
            raise yaml.YAMLError("the document is nested too deeply to read") from None


class BoundedSafeLoader(BoundedLoader, yaml.SafeLoader):
    """``yaml.SafeLoader`` with the checks of ``BoundedLoader``."""


def safe_load(text: str | bytes) -> Any:
    """``yaml.safe_load`` with bounded alias expansion and depth (raises ``yaml.YAMLError``)."""
    return yaml.load(text, Loader=BoundedSafeLoader)
