"""Default factories for pydantic fields on the run path: ``Field(default_factory=new_list)``, not ``list``.

pydantic asks each field's default factory whether it takes the validated data by reading its signature; a
builtin's (``list``, ``dict``) is read by tokenizing its text signature, ~2% of a one-trace run's instructions
for the models a run builds. A Python function's costs nothing to read. The defaults and the JSON Schemas stay
the same.
"""

from __future__ import annotations

from typing import Any

__all__ = ["new_dict", "new_list"]


def new_list() -> list[Any]:
    return []


def new_dict() -> dict[str, Any]:
    return {}
