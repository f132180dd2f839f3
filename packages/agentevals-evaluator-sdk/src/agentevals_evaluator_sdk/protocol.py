"""Protocol versions this SDK speaks and the negotiation rule shared with the host.

The sender states its version; the receiver answers with the version it used: same MAJOR, MINOR the
lower of the two. A different MAJOR is refused; a newer MINOR is accepted and its unknown fields ignored.
"""

from __future__ import annotations

import json
from importlib import resources
from typing import Any

from .errors import ProtocolVersionError

__all__ = [
    "PROTOCOL_VERSION",
    "SUPPORTED_VERSIONS",
    "load_schema",
    "negotiate",
    "parse_version",
    "schema_for_version",
]

PROTOCOL_VERSION = "1.2"
"""Highest protocol version this SDK speaks."""

SUPPORTED_VERSIONS: tuple[str, ...] = ("1.0", "1.1", "1.2")
"""Every version this SDK ships a schema for, oldest first."""


def parse_version(text: object) -> tuple[int, int]:
    """Parse ``"MAJOR.MINOR"`` into a tuple.

    >>> parse_version("1.10")
    (1, 10)
    """
    if not isinstance(text, str):
        raise ProtocolVersionError(f"protocol_version must be a string like '1.0', got {text!r}")
    parts = text.strip().split(".")
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        raise ProtocolVersionError(f"protocol_version must look like 'MAJOR.MINOR', got {text!r}")
    return int(parts[0]), int(parts[1])


def negotiate(theirs: object, ours: str = PROTOCOL_VERSION, *, peer: str = "agentevals-cli") -> str:
    """Return the version both sides speak, or raise when the majors differ.

    ``peer`` names the package that produced ``theirs`` so the message can say what to upgrade.

    >>> negotiate("1.9")
    '1.1'
    >>> negotiate("1.0")
    '1.0'
    """
    their_major, their_minor = parse_version(theirs)
    our_major, our_minor = parse_version(ours)
    if their_major != our_major:
        upgrade = "agentevals-evaluator-sdk" if their_major > our_major else peer
        raise ProtocolVersionError(
            f"unsupported protocol_version {theirs} from {peer}: agentevals-evaluator-sdk speaks "
            f"{SUPPORTED_VERSIONS[0]} to {SUPPORTED_VERSIONS[-1]}; upgrade {upgrade} so both speak "
            f"major {max(their_major, our_major)}"
        )
    return f"{our_major}.{min(our_minor, their_minor)}"


def load_schema(name: str, version: str) -> dict[str, Any]:
    """Load a shipped JSON Schema, e.g. ``load_schema("eval_input", "1.1")``."""
    text = resources.files(__package__).joinpath("schema").joinpath(f"{name}.v{version}.json").read_text("utf-8")
    schema: dict[str, Any] = json.loads(text)
    return schema


def schema_for_version(schema: dict[str, Any], version: str) -> dict[str, Any]:
    """Drop every property introduced after ``version`` (marked ``x-protocol-since``) from a schema."""
    wanted = parse_version(version)

    def prune(node: Any) -> Any:
        if isinstance(node, dict):
            out = {}
            for key, value in node.items():
                if key == "properties" and isinstance(value, dict):
                    value = {
                        k: v
                        for k, v in value.items()
                        if parse_version(v.get("x-protocol-since", "1.0")) <= wanted
                    }
                out[key] = prune(value)
            return out
        if isinstance(node, list):
            return [prune(v) for v in node]
        return node

    pruned: dict[str, Any] = prune(schema)
    defs = pruned.get("$defs")
    if isinstance(defs, dict):  # drop definitions only newer fields referred to
        used: set[str] = set()
        todo: list[Any] = [{k: v for k, v in pruned.items() if k != "$defs"}]
        while todo:
            node = todo.pop()
            if isinstance(node, dict):
                ref = node.get("$ref")
                if isinstance(ref, str) and ref.rsplit("/", 1)[-1] not in used:
                    used.add(ref.rsplit("/", 1)[-1])
                    todo.append(defs.get(ref.rsplit("/", 1)[-1]))
                todo.extend(node.values())
            elif isinstance(node, list):
                todo.extend(node)
        pruned["$defs"] = {k: v for k, v in defs.items() if k in used}
    return pruned
