"""Load EVAL.yaml / JSONL test files the way AgentV reads them, remembering where every node came from.

AgentV parses YAML with the ``yaml`` npm package (YAML 1.2 core schema): ``yes``/``no``/``on``/``off``
and dates stay strings, ``012`` is twelve, duplicate keys are errors. PyYAML implements YAML 1.1, so
this loader swaps in the 1.2 core resolvers. Mappings and sequences come back as ``YamlMap`` /
``YamlSeq`` (plain ``dict`` / ``list`` subclasses) carrying an ``Origin`` so that errors can name the
file, line and column.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..core._files import read_input
from ..core._yaml import BoundedLoader
from ..errors import InputFileError
from ._js import js_str

__all__ = ["Origin", "YamlMap", "YamlSeq", "load_jsonl", "load_yaml", "origin_of", "where"]


@dataclass(frozen=True)
class Origin:
    """Where a node starts: the file as the user named it, 1-based line and column."""

    source: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.source}:{self.line}:{self.column}"


class YamlMap(dict[str, Any]):
    """A mapping from a YAML/JSONL file; ``origin`` is the mapping, ``key_origins[k]`` the value of ``k``."""

    origin: Origin | None = None
    key_origins: dict[str, Origin | None]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.key_origins = {}


class YamlSeq(list[Any]):
    """A sequence from a YAML/JSONL file; ``item_origins[i]`` is where item ``i`` starts."""

    origin: Origin | None = None
    item_origins: list[Origin | None]

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.item_origins = []


def origin_of(container: Any, key: Any = None) -> Origin | None:
    """Where ``container[key]`` (or ``container`` itself when ``key`` is None) starts, if known."""
    if key is not None:
        if isinstance(container, YamlMap) and key in container.key_origins:
            return container.key_origins[key]
        if isinstance(container, YamlSeq) and isinstance(key, int) and key < len(container.item_origins):
            return container.item_origins[key]
    return getattr(container, "origin", None)


def where(source: str, container: Any, key: Any = None) -> str:
    """``file:line:col`` for ``container[key]`` when known, else just ``source``."""
    found = origin_of(container, key)
    return str(found) if found else source


_INT = re.compile(r"^(?:[-+]?[0-9]+|0o[0-7]+|0x[0-9a-fA-F]+)$")
_FLOAT = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)
_YAML11_ONLY = {
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:timestamp",
}


class _CoreLoader(BoundedLoader, yaml.SafeLoader):
    """SafeLoader with YAML 1.2 core-schema scalars, duplicate-key errors and origin tracking."""

    source = "EVAL.yaml"


_CoreLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in _YAML11_ONLY]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_CoreLoader.add_implicit_resolver(
    "tag:yaml.org,2002:null", re.compile(r"^(?:~|null|Null|NULL|)$"), ["~", "n", "N", ""]
)
_CoreLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), list("tTfF")
)
_CoreLoader.add_implicit_resolver("tag:yaml.org,2002:int", _INT, list("-+0123456789"))
_CoreLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT, list("-+.0123456789"))


def _origin(loader: _CoreLoader, node: Node) -> Origin:
    mark = node.start_mark
    return Origin(loader.source, mark.line + 1, mark.column + 1)


def _construct_int(loader: _CoreLoader, node: ScalarNode) -> int:
    text = str(loader.construct_scalar(node)).replace("_", "")
    if text.startswith("0o"):
        return int(text[2:], 8)
    if text.startswith("0x"):
        return int(text[2:], 16)
    try:
        return int(text, 10)
    except ValueError:
        raise ConstructorError(None, None, f"invalid integer {text!r}", node.start_mark) from None


def _key(loader: _CoreLoader, node: Node) -> str:
    if not isinstance(node, ScalarNode):
        raise ConstructorError(None, None, "mapping keys must be plain scalars", node.start_mark)
    value = loader.construct_object(node)
    return value if isinstance(value, str) else js_str(value)


def _construct_map(loader: _CoreLoader, node: MappingNode) -> Iterator[YamlMap]:
    data = YamlMap()
    data.origin = _origin(loader, node)
    yield data
    seen: dict[str, Node] = {}
    for key_node, _ in node.value:
        if key_node.tag == "tag:yaml.org,2002:merge":
            continue
        key = _key(loader, key_node)
        if key in seen:
            line = seen[key].start_mark.line + 1
            raise ConstructorError(
                None, None, f"duplicate key '{key}' (first defined on line {line})", key_node.start_mark
            )
        seen[key] = key_node
    loader.flatten_mapping(node)  # merged (<<) pairs come first, so the mapping's own keys win
    for key_node, value_node in node.value:
        key = _key(loader, key_node)
        data[key] = loader.construct_object(value_node, deep=True)
        data.key_origins[key] = _origin(loader, value_node)


def _construct_seq(loader: _CoreLoader, node: SequenceNode) -> Iterator[YamlSeq]:
    data = YamlSeq()
    data.origin = _origin(loader, node)
    yield data
    for child in node.value:
        data.append(loader.construct_object(child, deep=True))
        data.item_origins.append(_origin(loader, child))


_CoreLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
_CoreLoader.add_constructor("tag:yaml.org,2002:map", _construct_map)
_CoreLoader.add_constructor("tag:yaml.org,2002:seq", _construct_seq)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _read(path: Path, source: str) -> str:
    data = read_input(path, source)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputFileError(f"{source}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")  # universal newlines, as text mode reads


def load_yaml(path: Path, source: str | None = None) -> Any:
    """Parse one YAML document; syntax errors raise ``InputFileError`` as ``file:line:col: problem``."""
    source = source or str(path)
    text = _read(path, source)
    try:  # the reader checks the characters as it is built: a NUL byte is already an error
        loader = _CoreLoader(text)
    except yaml.YAMLError as exc:
        raise InputFileError(f"{source}: invalid YAML: {str(exc).splitlines()[0]}") from None
    loader.source = source
    try:
        return loader.get_single_data()
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        at = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        raise InputFileError(f"{at}: invalid YAML: {_one_line(problem)}") from None
    except yaml.YAMLError as exc:
        raise InputFileError(f"{source}: invalid YAML: {_one_line(str(exc))}") from None
    finally:
        loader.dispose()


def load_jsonl(path: Path, source: str | None = None) -> YamlSeq:
    """One JSON object per non-blank line (AgentV's JSONL test format); each item remembers its line."""
    source = source or str(path)
    tests = YamlSeq()
    tests.origin = Origin(source, 1, 1)
    for number, line in enumerate(_read(path, source).split("\n"), start=1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputFileError(f"{source}:{number}:{exc.colno}: invalid JSON: {exc.msg}") from None
        if not isinstance(value, dict):
            raise InputFileError(f"{source}:{number}:1: expected a JSON object (one test per line)")
        item = YamlMap(value)
        item.origin = Origin(source, number, 1)
        item.key_origins = dict.fromkeys(value, item.origin)
        tests.append(item)
        tests.item_origins.append(item.origin)
    return tests
