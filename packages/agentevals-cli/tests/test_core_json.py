"""``core._json``: orjson's bytes, and the standard library's for what orjson refuses, with the same options."""

from __future__ import annotations

import json
import math

import orjson
import pytest
from agentevals.core._json import dumps, loads

BIG = 2**70  # past 64 bits: orjson refuses it


@pytest.mark.parametrize("value", [{"b": [1, 2.5, "é"], "a": None}, [], {"x": {"y": True}}])
def test_orjson_writes_what_it_can(value):
    assert dumps(value) == orjson.dumps(value)
    assert dumps(value, indent=True) == orjson.dumps(value, option=orjson.OPT_INDENT_2)
    assert dumps(value, sort_keys=True) == orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def test_the_standard_library_writes_the_rest_in_the_same_shape():
    value = {"b": BIG, "a": ["é", 1]}
    assert dumps(value) == b'{"b":1180591620717411303424,"a":["\xc3\xa9",1]}'
    assert dumps(value, sort_keys=True) == b'{"a":["\xc3\xa9",1],"b":1180591620717411303424}'
    assert dumps(value, indent=True).decode() == json.dumps(value, indent=2, ensure_ascii=False)
    # keys of several types sort as strings (orjson refuses to sort them)
    assert dumps({2: "x", "1": BIG}, sort_keys=True) == b'{"1":1180591620717411303424,"2":"x"}'


def test_default_writes_what_is_not_json_both_ways():
    class Thing:
        def __str__(self) -> str:
            return "thing"

    assert dumps({"t": Thing()}, default=str) == b'{"t":"thing"}'
    assert dumps({"t": Thing(), "n": BIG}, default=str) == b'{"t":"thing","n":1180591620717411303424}'


def test_a_lone_surrogate_fails_as_the_standard_library_fails():
    with pytest.raises(UnicodeEncodeError):
        dumps({"s": "\ud800"})


def test_loads_reads_what_orjson_refuses():
    assert loads(b'{"a": [1, "\xc3\xa9"]}') == {"a": [1, "é"]}
    assert math.isnan(loads('{"a": NaN}')["a"])
    assert loads(str(BIG)) == BIG
    with pytest.raises(json.JSONDecodeError):
        loads("{")
