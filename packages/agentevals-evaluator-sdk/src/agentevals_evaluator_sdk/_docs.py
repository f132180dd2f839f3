"""Attribute docstrings as JSON Schema descriptions, read when a schema is asked for, not at import.

pydantic's ``use_attribute_docstrings=True`` reads each model's source while the class is built: about a
sixth of this package's import, paid again by every evaluator process (each persistent worker) for a
schema that only ``tools/sync_schema.py`` renders. ``ATTRIBUTE_DOCS`` gives the same schema lazily. (The
CLI has its own copy, ``agentevals.core._docs``: the SDK depends on nothing of the CLI's.)
"""

from __future__ import annotations

import ast
import inspect
import itertools
import textwrap
from functools import cache
from typing import Any

from pydantic import ConfigDict

__all__ = ["ATTRIBUTE_DOCS", "attribute_docstrings", "describe_fields"]


@cache
def attribute_docstrings(cls: type) -> dict[str, str]:
    """``{field name: docstring}`` of the string literals that follow annotated fields in ``cls``'s body and in
    its bases' (the nearest class wins); ``{}`` where the source cannot be read (e.g. a frozen app)."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):  # bases first, so that a subclass overrides
        if not hasattr(klass, "model_fields") or klass.__module__.split(".")[0] == "pydantic":
            continue
        try:
            body = ast.parse(textwrap.dedent(inspect.getsource(klass))).body
        except (OSError, TypeError, SyntaxError):
            continue
        if not body or not isinstance(body[0], ast.ClassDef):
            continue
        for node, following in itertools.pairwise(body[0].body):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(following, ast.Expr) and isinstance(following.value, ast.Constant)
                    and isinstance(following.value.value, str)):
                docs[node.target.id] = inspect.cleandoc(following.value.value)
    return docs


def describe_fields(schema: dict[str, Any], cls: type) -> None:
    """pydantic's ``json_schema_extra`` hook: fill in the description of every documented property."""
    properties = schema.get("properties", {})
    fields = getattr(cls, "model_fields", {})
    for name, doc in attribute_docstrings(cls).items():
        field = fields.get(name)
        if field is None or field.description is not None:
            continue
        for key in dict.fromkeys((name, field.alias)):
            if key in properties:
                properties[key].setdefault("description", doc)


ATTRIBUTE_DOCS = ConfigDict(json_schema_extra=describe_fields)
"""Model config entries (``ConfigDict(**ATTRIBUTE_DOCS)``) that document fields from their docstrings."""
