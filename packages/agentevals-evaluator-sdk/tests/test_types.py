"""The wire models: what an evaluator author builds."""


def test_unknown_result_fields_are_a_warning_naming_them_and_the_likely_field():
    import warnings

    from agentevals_evaluator_sdk import EvalResult

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = EvalResult(score=0.5, reason="too short", detials={"n": 1})
    assert result.details is None  # still ignored, as the wire protocol says
    assert [str(w.message) for w in caught] == [
        "EvalResult: unknown field(s) 'reason', 'detials' (did you mean 'details'?) ignored; an EvalResult has "
        "score, status, per_invocation_scores, details, protocol_version (put anything else in details)"
    ]
    assert caught[0].filename == __file__  # points at the line that built the result
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        EvalResult(score=1.0, details={"reason": "fine"})  # known fields: no warning
