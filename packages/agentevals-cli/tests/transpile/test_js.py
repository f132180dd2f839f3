"""JavaScript value semantics used for byte-identical output, and the public surface of the packages."""

from __future__ import annotations

import importlib

import pytest
from agentevals.transpile._js import UNDEFINED, js_number, js_str, js_stringify, js_trim


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (5000, "5000"),
        (1.0, "1"),
        (0.1, "0.1"),
        (-2.5, "-2.5"),
        (0.1 + 0.2, "0.30000000000000004"),
        (1e21, "1e+21"),
        (1.5e21, "1.5e+21"),
        (123456789012345680000.0, "123456789012345680000"),
        (1e-6, "0.000001"),
        (1e-7, "1e-7"),
        (2.5e-7, "2.5e-7"),
        (-0.0, "0"),
        (float("nan"), "NaN"),
        (float("-inf"), "-Infinity"),
        (2**60, "1152921504606847000"),
    ],
)
def test_js_number(value, text):
    assert js_number(value) == text


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (UNDEFINED, "undefined"),
        (None, "null"),
        (True, "true"),
        (["a", None, 1.0, ["b", "c"]], "a,,1,b,c"),
        ({"a": 1}, "[object Object]"),
    ],
)
def test_js_str(value, text):
    assert js_str(value) == text


def test_js_trim_strips_js_whitespace_only():
    assert js_trim("\ufeff\u00a0 x \u2028\n") == "x"
    assert js_trim("\x1fx") == "\x1fx"  # Python's strip() would remove this; JavaScript's trim() does not


def test_js_stringify_orders_integer_keys_first_and_escapes_like_json_stringify():
    assert js_stringify({"b": 1, "10": 2, "2": 3, "01": 4}) == '{"2":3,"10":2,"b":1,"01":4}'
    assert (
        js_stringify(["\x01", "\u2028", "é", float("inf"), UNDEFINED]) == '["\\u0001","\u2028","é",null,null]'
    )
    assert js_stringify({"a": UNDEFINED, "b": []}, indent=2) == '{\n  "b": []\n}'


@pytest.mark.parametrize("module", ["agentevals.transpile", "agentevals.judges"])
def test_every_public_name_is_exported(module):
    mod = importlib.import_module(module)
    public = {
        name
        for name, value in vars(mod).items()
        if not name.startswith("_")
        and getattr(value, "__module__", module).startswith(module)
        and not isinstance(value, type(mod))
    }
    assert public <= set(mod.__all__)
    assert all(hasattr(mod, name) for name in mod.__all__)
