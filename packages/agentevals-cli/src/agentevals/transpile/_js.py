"""JavaScript value semantics the AgentV transpiler relies on: ``String(v)``, ``trim()``, ``JSON.stringify``.

AgentV builds its natural-language assertions with template literals and writes evals.json with
``JSON.stringify(obj, null, 2)``. Reproducing those conversions exactly is what makes our output
byte-identical: ``1.0`` prints as ``1``, ``true`` as ``true``, a list as ``a,b``, a missing key as
``undefined``.
"""

from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Any, Final

__all__ = ["UNDEFINED", "js_number", "js_str", "js_stringify", "js_trim", "nullish"]


class _Undefined:
    """JavaScript's ``undefined``: what reading a missing key gives."""

    _instance: _Undefined | None = None

    def __new__(cls) -> _Undefined:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "UNDEFINED"

    def __bool__(self) -> bool:
        return False


UNDEFINED: Final = _Undefined()

# ECMAScript WhiteSpace + LineTerminator code points (what String.prototype.trim removes).
_JS_SPACE: Final = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_ARRAY_INDEX: Final = re.compile(r"^(?:0|[1-9][0-9]*)$")


def nullish(value: Any) -> bool:
    """``value ?? …`` falls through: ``None`` (null) or ``UNDEFINED``."""
    return value is None or value is UNDEFINED


def js_trim(text: str) -> str:
    """``String.prototype.trim``."""
    return text.strip(_JS_SPACE)


def js_number(value: float) -> str:
    """``Number.prototype.toString()`` (shortest round-trip digits, JS exponent rules)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) < 2**53:
        return str(value)
    value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    _, digit_tuple, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0")
    assert isinstance(exponent, int)
    exponent += len(digit_tuple) - len(digits)  # account for the stripped zeros
    k = len(digits)
    n = k + exponent  # value = 0.digits * 10^n
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = f"{digits[:n]}.{digits[n:]}"
    elif -6 < n <= 0:
        body = "0." + "0" * -n + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else f"{digits[0]}.{digits[1:]}"
        body = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + body


def js_str(value: Any) -> str:
    """``String(value)`` / ``${value}`` in a template literal."""
    if value is UNDEFINED:
        return "undefined"
    if value is None:
        return "null"
    if isinstance(value, str):
        return value
    if isinstance(value, (bool, int, float)):
        return js_number(value)
    if isinstance(value, (list, tuple)):
        return ",".join("" if nullish(item) else js_str(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def _key_order(obj: dict[str, Any]) -> list[str]:
    # JS objects list integer-like keys first (ascending), then the others in insertion order.
    keys = [js_str(k) if not isinstance(k, str) else k for k in obj]
    index_keys = sorted((k for k in keys if _ARRAY_INDEX.match(k) and int(k) < 2**32 - 1), key=int)
    return index_keys + [k for k in keys if k not in set(index_keys)]


def _quote(text: str) -> str:
    out = json.dumps(text, ensure_ascii=False)
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", out)


def js_stringify(value: Any, indent: int | None = None) -> str:
    """``JSON.stringify(value, null, indent)`` for YAML/JSON-shaped data."""
    return _stringify(value, indent, 0) or "undefined"


def _stringify(value: Any, indent: int | None, depth: int) -> str | None:
    if value is UNDEFINED:
        return None
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return js_number(value) if math.isfinite(value) else "null"
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, (list, tuple)):
        items = [_stringify(item, indent, depth + 1) or "null" for item in value]
        return _wrap("[", "]", items, indent, depth)
    if isinstance(value, dict):
        lookup = {(k if isinstance(k, str) else js_str(k)): v for k, v in value.items()}
        members = []
        for key in _key_order(value):
            text = _stringify(lookup[key], indent, depth + 1)
            if text is not None:
                members.append(f"{_quote(key)}:{' ' if indent else ''}{text}")
        return _wrap("{", "}", members, indent, depth)
    return _quote(str(value))


def _wrap(open_: str, close: str, items: list[str], indent: int | None, depth: int) -> str:
    if not items:
        return open_ + close
    if not indent:
        return open_ + ",".join(items) + close
    inner = "\n" + " " * (indent * (depth + 1))
    return open_ + inner + ("," + inner).join(items) + "\n" + " " * (indent * depth) + close
