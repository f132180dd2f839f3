"""JSON by orjson (a tenth of the standard library's time), and by the standard library for what orjson refuses:
an integer past 64 bits, a lone surrogate, a key that is not a string (when sorting). Both write UTF-8 as it is;
orjson writes NaN and infinities null. The one place for that pair::

    dumps({"b": 1, "a": [2]}, sort_keys=True)  # b'{"a":[2],"b":1}'
    dumps({"a": 1}, indent=True)               # b'{\n  "a": 1\n}'
    loads('{"a": NaN}')                        # {'a': nan}: the standard library reads what orjson does not
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Optional

import orjson

__all__ = ["dumps", "loads"]


def dumps(value: Any, *, indent: bool = False, sort_keys: bool = False,
          default: Optional[Callable[[Any], Any]] = None, option: int = 0) -> bytes:
    """``value`` as compact JSON bytes (``indent``: by two spaces), keys sorted with ``sort_keys``; ``default``
    gives what is not JSON, as for both encoders; ``option``: more orjson options (the standard library way
    ignores them)."""
    option |= (orjson.OPT_INDENT_2 if indent else 0) | (orjson.OPT_SORT_KEYS if sort_keys else 0)
    try:
        return orjson.dumps(value, default=default, option=option)
    except TypeError:  # orjson.JSONEncodeError is one
        return json.dumps(_str_keys(value) if sort_keys else value, indent=2 if indent else None,
                          separators=(",", ": ") if indent else (",", ":"), sort_keys=sort_keys, default=default,
                          ensure_ascii=False).encode()


def loads(text: str | bytes) -> Any:
    """A JSON text: orjson, or the standard library for what it refuses (``NaN``, integers past 64 bits)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def _str_keys(value: Any) -> Any:
    """Keys made strings (sorting needs keys of one type), as orjson's ``OPT_NON_STR_KEYS`` writes them."""
    if isinstance(value, dict):
        return {str(k): _str_keys(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_str_keys(v) for v in value]
    return value
