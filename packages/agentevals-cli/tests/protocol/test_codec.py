"""Strict decoding of evaluator results by the CLI."""

from __future__ import annotations

import pytest
from agentevals.errors import ProtocolError
from agentevals.protocol import EvalInput, decode_result, encode_input, load_schema, result_warnings


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
    assert '"protocol_version": "1.2"' in encode_input(EvalInput())


def test_schema_loads():
    assert load_schema("eval_result", "1.0")["x-protocol-version"] == "1.0"
