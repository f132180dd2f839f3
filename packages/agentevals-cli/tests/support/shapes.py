"""Compare a response with a recorded 0.11 response shape, key by key.

A shape is a JSON skeleton of 0.11's response model: a dict of key → shape, a one-item list (every item
has that shape), or a type name (``str``, ``int``, ``float``, ``bool``, ``dict``, ``list``, ``null``,
alternatives joined by ``|``; ``any`` for anything). ``mismatches`` lists every 0.11 key the response
lacks or holds with another type; extra keys (ours) are fine.
"""

from __future__ import annotations

from typing import Any

_TYPES = {"str": str, "bool": bool, "dict": dict, "list": list, "null": type(None)}


def _type_ok(value: Any, spec: str) -> bool:
    for name in spec.split("|"):
        if name == "any":
            return True
        if name == "int" and isinstance(value, int) and not isinstance(value, bool):
            return True
        if name == "float" and isinstance(value, (int, float)) and not isinstance(value, bool):
            return True
        if name in _TYPES and isinstance(value, _TYPES[name]) and not (name != "bool" and isinstance(value, bool)):
            return True
    return False


def mismatches(value: Any, shape: Any, path: str = "$") -> list[str]:
    """Where ``value`` departs from ``shape`` (empty when every 0.11 key is there with its type)."""
    if isinstance(shape, str):
        return [] if _type_ok(value, shape) else [f"{path}: {type(value).__name__} {value!r:.80} is not {shape}"]
    if isinstance(shape, list):
        if not isinstance(value, list):
            return [f"{path}: {type(value).__name__} is not a list"]
        return [m for i, item in enumerate(value) for m in mismatches(item, shape[0], f"{path}[{i}]")]
    if not isinstance(value, dict):
        return [f"{path}: {type(value).__name__} is not an object"]
    out = []
    for key, sub in shape.items():
        if key not in value:
            out.append(f"{path}.{key}: missing")
        else:
            out.extend(mismatches(value[key], sub, f"{path}.{key}"))
    return out
