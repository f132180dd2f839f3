"""In-process behaviour of @evaluator and the testing helpers."""

from __future__ import annotations

import pytest
from agentevals_evaluator_sdk import EvalInput, EvalResult, EvaluatorDefinitionError, evaluator
from agentevals_evaluator_sdk.testing import make_input, run_evaluator
from pydantic import ValidationError


@evaluator
def tool_count(input: EvalInput) -> EvalResult:
    scores = [1.0 if inv.intermediate_steps.tool_calls else 0.0 for inv in input.invocations]
    return EvalResult(score=sum(scores) / len(scores), per_invocation_scores=scores)


def test_bare_decorator_keeps_function_callable():
    result = tool_count(make_input(tool_calls=["search"]))
    assert isinstance(result, EvalResult)
    assert result.score == 1.0
    assert tool_count.__name__ == "tool_count"
    assert tool_count.name == "tool_count"


def test_called_decorator_sets_name():
    @evaluator(name="quality")
    def q(input: EvalInput) -> EvalResult:
        return EvalResult(score=0.25)

    assert q.name == "quality"
    assert run_evaluator(q, make_input()).score == 0.25


def test_async_evaluator_runs_through_evaluate():
    @evaluator
    async def slow(input: EvalInput) -> EvalResult:
        return EvalResult(score=0.75, per_invocation_scores=[0.75])

    result = run_evaluator(slow, make_input())
    assert result.score == 0.75
    assert result.protocol_version == "1.2"


def test_dict_result_is_accepted_and_validated():
    @evaluator
    def as_dict(input: EvalInput):
        return {"score": 0.6, "details": {"why": "dict"}}

    assert run_evaluator(as_dict, make_input()).details == {"why": "dict"}


@pytest.mark.parametrize("bad", [lambda: None, lambda a, b: None, 42])
def test_wrong_signature_is_refused_when_applied(bad):
    with pytest.raises(EvaluatorDefinitionError):
        evaluator(bad)


def test_explicit_status_is_kept_even_against_the_threshold():
    """Seed 000: status is derived from score vs threshold only when omitted; the host shows a warning."""
    @evaluator
    def lenient(input: EvalInput) -> EvalResult:
        return EvalResult(score=0.2, status="PASSED")

    result = run_evaluator(lenient, make_input())
    assert (result.score, result.status) == (0.2, "PASSED")


def test_per_invocation_length_mismatch_is_kept():
    @evaluator
    def two(input: EvalInput) -> EvalResult:
        return EvalResult(score=1.0, per_invocation_scores=[1.0, 1.0])

    assert run_evaluator(two, make_input()).per_invocation_scores == [1.0, 1.0]


@pytest.mark.parametrize(("given", "score"), [("0.5", 0.5), (" 1 ", 1.0), (True, 1.0), (False, 0.0), (1, 1.0)])
def test_scores_are_read_as_the_0_2_sdk_read_them(given, score):
    result = EvalResult(score=given, per_invocation_scores=[given])
    assert (result.score, result.per_invocation_scores) == (score, [score])
    assert type(result.score) is float
    assert result.model_dump_json().startswith(f'{{"score":{score!r}')


@pytest.mark.parametrize("given", ["high", "", "nan", "1e9", None])
def test_non_numeric_or_out_of_range_scores_still_fail(given):
    with pytest.raises(ValidationError):
        EvalResult(score=given)


def test_empty_per_invocation_scores_mean_not_computed():
    @evaluator
    def none(input: EvalInput) -> EvalResult:
        return EvalResult(score=1.0, per_invocation_scores=[])

    assert run_evaluator(none, make_input()).per_invocation_scores == []


def test_input_from_dict_negotiates_version():
    payload = make_input().model_dump(mode="json")
    payload["protocol_version"] = "1.0"
    assert run_evaluator(tool_count, payload).protocol_version == "1.0"


def test_make_input_builds_tool_calls_with_args():
    inp = make_input(tool_calls=[{"name": "calc", "args": {"x": 1}}, "search"])
    calls = inp.invocations[0].intermediate_steps.tool_calls
    assert [(c.name, c.args) for c in calls] == [("calc", {"x": 1}), ("search", {})]


def test_async_evaluator_can_be_tested_from_inside_a_running_event_loop():
    import asyncio

    @evaluator
    async def slow(input: EvalInput) -> EvalResult:
        await asyncio.sleep(0)
        return EvalResult(score=0.75, per_invocation_scores=[0.75])

    async def an_async_test():  # as pytest-asyncio / anyio run an ``async def test_…``
        return run_evaluator(slow, make_input())

    assert asyncio.run(an_async_test()).score == 0.75
