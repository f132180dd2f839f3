"""A parsed protobuf message as its JSON mapping: ``MessageToDict(message)``'s output, several times faster.

``json_format.MessageToDict`` decides how to print every field of every message again (descriptor checks,
well-known types, enum options) and was a seventh of ``serve``'s CPU per session under a flood. Here each
message type gets a table once: per field its JSON name and a converter. Types this table does not cover
(well-known types, maps, extensions, closed enums, enums with JSON name options) are printed by
``MessageToDict`` itself, so the output is the same for any message.
"""

from __future__ import annotations

import math
from binascii import b2a_base64
from collections.abc import Callable
from typing import Any

from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.internal import type_checkers
from google.protobuf.json_format import MessageToDict

__all__ = ["message_to_dict"]

_Converter = Callable[[Any], Any]
_CODECS: dict[str, Callable[[Any], dict[str, Any]]] = {}
_INT64 = frozenset({FieldDescriptor.CPPTYPE_INT64, FieldDescriptor.CPPTYPE_UINT64})


def message_to_dict(message: Any) -> dict[str, Any]:
    """``MessageToDict(message)`` (camelCase names, no default values, enums by name, 64-bit integers and
    bytes as strings)."""
    return _codec(message.DESCRIPTOR)(message)


def _codec(descriptor: Descriptor) -> Callable[[Any], dict[str, Any]]:
    codec = _CODECS.get(descriptor.full_name)
    if codec is None:
        codec = _CODECS[descriptor.full_name] = _build(descriptor)
    return codec


def _build(descriptor: Descriptor) -> Callable[[Any], dict[str, Any]]:
    fields: dict[FieldDescriptor, tuple[str, _Converter, bool]] = {}
    if not descriptor.file.name.startswith("google/protobuf/") and not descriptor.is_extendable:
        for field in descriptor.fields:
            convert = _converter(field)
            if convert is None:
                break
            fields[field] = (field.json_name, convert, _repeated(field))
            if isinstance(convert, _Nested):
                convert.table, convert.field = fields, field
        else:
            def codec(message: Any) -> dict[str, Any]:
                js: dict[str, Any] = {}
                for field, value in message.ListFields():
                    name, convert, repeated = fields[field]
                    js[name] = [convert(v) for v in value] if repeated else convert(value)
                return js

            return codec
    return MessageToDict


def _repeated(field: FieldDescriptor) -> bool:
    # ``is_repeated`` is new (protobuf 6; our floor is 5.26), and protobuf 7 dropped the ``label`` it replaces
    repeated = getattr(field, "is_repeated", None)
    if repeated is None:
        return bool(getattr(field, "label") == FieldDescriptor.LABEL_REPEATED)  # noqa: B009 (typeshed: not on 7)
    return bool(repeated() if callable(repeated) else repeated)


def _converter(field: FieldDescriptor) -> _Converter | None:
    """How one field's value is printed; None for what only ``MessageToDict`` prints right."""
    cpp = field.cpp_type
    if cpp == FieldDescriptor.CPPTYPE_MESSAGE:
        message_type = field.message_type
        if message_type is None or message_type.GetOptions().map_entry:
            return None
        return _Nested(message_type)
    if cpp == FieldDescriptor.CPPTYPE_ENUM:
        enum = field.enum_type
        if enum is None or enum.is_closed or enum.full_name == "google.protobuf.NullValue" or any(
                v.has_options for v in enum.values):
            return None
        names = {v.number: v.name for v in enum.values}
        return lambda value: names.get(value, value)
    if cpp == FieldDescriptor.CPPTYPE_STRING:
        if field.type == FieldDescriptor.TYPE_BYTES:
            return lambda value: b2a_base64(value, newline=False).decode("ascii")
        return str
    if cpp == FieldDescriptor.CPPTYPE_BOOL:
        return bool
    if cpp in _INT64:
        return str
    if cpp == FieldDescriptor.CPPTYPE_DOUBLE:
        return _double
    if cpp == FieldDescriptor.CPPTYPE_FLOAT:
        return _float
    return _same


class _Nested:
    """A message field's converter until first used: then the field's entry in its table is the type's codec
    itself (found late: a type may contain itself, and one call less per nested message)."""

    __slots__ = ("descriptor", "field", "table")

    def __init__(self, descriptor: Descriptor) -> None:
        self.descriptor = descriptor
        self.table: dict[FieldDescriptor, tuple[str, _Converter, bool]] = {}
        self.field: Any = None

    def __call__(self, value: Any) -> dict[str, Any]:
        codec = _codec(self.descriptor)
        name, _, repeated = self.table[self.field]
        self.table[self.field] = (name, codec, repeated)
        return codec(value)


def _same(value: Any) -> Any:
    return value


def _special(value: float) -> str | None:
    if math.isinf(value):
        return "-Infinity" if value < 0.0 else "Infinity"
    return "NaN" if math.isnan(value) else None


def _double(value: float) -> Any:
    special = _special(value)
    return value if special is None else special


def _float(value: float) -> Any:
    special = _special(value)
    return type_checkers.ToShortestFloat(value) if special is None else special
