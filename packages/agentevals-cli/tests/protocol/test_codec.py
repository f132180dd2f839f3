"""Strict decoding of evaluator results by the CLI."""

from __future__ import annotations

import json

import pytest
from agentevals.errors import ProtocolError
from agentevals.protocol import (
    EvalInput,
    decode_result,
    encode_input,
    encode_line,
    load_schema,
    result_warnings,
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "ev wrote invalid JSON: Expecting value at line 1 column 1"),
        ("[1]", "ev wrote a JSON list, expected an EvalResult object"),
        ('{"score": "high"}', "ev returned an invalid EvalResult: score: Input should be a valid number (got 'high')"),
        ('{"score": NaN}', "score must be finite (got nan)"),
        ('{"score": "NaN"}', "score: Input should be a finite number (got nan)"),
        ('{"score": 1.5}', "score: Input should be less than or equal to 1 (got 1.5)"),
        ('{"score": 0.9, "status": "MAYBE"}', "status: Input should be 'PASSED', 'FAILED' or 'NOT_EVALUATED' (got 'MAYBE')"),
    ],
)
def test_invalid_results_raise_one_line(text, message):
    with pytest.raises(ProtocolError) as info:
        decode_result(text, threshold=0.5, n_invocations=3, name="ev")
    assert message in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize(
    ("text", "warnings"),
    [
        ('{"score": 0.9, "status": "FAILED"}',
         ["status FAILED set by the evaluator overrides score 0.9 vs threshold 0.5 (which says PASSED)"]),
        ('{"score": 0.9, "per_invocation_scores": [1, 1]}',
         ["2 per_invocation_scores for 3 invocations (kept as given; they do not line up with the turns)"]),
        ('{"score": "0.9", "status": "PASSED", "per_invocation_scores": [true, false, "1"]}', []),
    ],
)
def test_results_0_11_accepted_decode_with_warnings(text, warnings):
    result = decode_result(text, threshold=0.5, n_invocations=3, name="ev")
    assert result.score == 0.9
    assert result_warnings(result, threshold=0.5, n_invocations=3) == warnings


def test_not_evaluated_may_omit_score():
    result = decode_result('{"score": null, "status": "NOT_EVALUATED"}', threshold=0.5, n_invocations=1)
    assert result.status == "NOT_EVALUATED" and result.score is None


def test_encode_defaults_to_current_version():
    assert json.loads(encode_input(EvalInput()))["protocol_version"] == "1.2"


def test_schema_loads():
    assert load_schema("eval_result", "1.0")["x-protocol-version"] == "1.0"


def _rich_input(**config: object) -> EvalInput:
    return EvalInput(metric_name="m", config={"text": "é\n\u2028", "small": 1e-07, "big": 1e16, **config},
                     invocations=[{"invocation_id": "a", "user_content": "hi",
                                   "intermediate_steps": {"tool_calls": [{"name": "t", "args": {"n": 1}}]},
                                   "trace_id": "t1"}],
                     performance_metrics={"latency": {"overall": {"median": 1.5, "p95": float("nan")}}})


@pytest.mark.parametrize("version", ["1.0", "1.1", "1.2"])
def test_encode_line_is_encode_input_on_one_line(version):
    # A persistent worker's line (orjson) says what encode_input (json) says, plus the fields given.
    eval_input = _rich_input()
    line = encode_line(eval_input, version, request_id="7")
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    document = encode_input(eval_input, version)
    assert "NaN" not in document  # JSON has none: null (pydantic before 2.5 leaves NaN in model_dump)
    expected = json.loads(document)
    if version == "1.2":
        expected["request_id"] = "7"  # older peers do not get it: the field is not in their schema
    assert json.loads(line) == expected
    assert list(json.loads(line)) == list(expected)  # the same field order


def test_encode_line_takes_what_orjson_refuses_the_json_way():
    eval_input = _rich_input(huge=10**30)  # beyond 64 bits: orjson refuses it, json writes it
    assert json.loads(encode_line(eval_input, "1.2"))["config"]["huge"] == 10**30
    lone = EvalInput(metric_name="\ud800")  # cannot be UTF-8: refused as encode_input's bytes are
    with pytest.raises(UnicodeEncodeError):
        encode_input(lone).encode()
    with pytest.raises(UnicodeEncodeError):
        encode_line(lone)
