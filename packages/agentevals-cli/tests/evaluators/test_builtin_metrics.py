"""Builtin metrics: ADK's rules, golden values measured with google-adk 2.13.0 (see tools/adk_parity)."""

from __future__ import annotations

import asyncio

import pytest
from agentevals.engine.options import RunOptions
from agentevals.evaluators import EVALUATOR_TYPES
from agentevals.evaluators.base import EvalContext
from agentevals.evaluators.builtin.response_match import rouge1_fmeasure
from agentevals.evaluators.builtin.trajectory import trajectory_matches
from agentevals.protocol import IntermediateStepData, InvocationData, ToolCallData
from agentevals.results import Status


def calls(*specs):
    return [ToolCallData(name=s, args={}) if isinstance(s, str) else ToolCallData(name=s[0], args=s[1]) for s in specs]


@pytest.mark.parametrize(
    ("actual", "expected", "exact", "in_order", "any_order"),
    [
        (calls("a"), calls("a"), True, True, True),
        ([], calls("a"), False, False, False),
        (calls("a", "b"), calls("a"), False, True, True),
        (calls("b", "a"), calls("a", "b"), False, False, True),
        (calls("a", "x", "b"), calls("a", "b"), False, True, True),
        (calls("a"), calls("a", "a"), False, False, False),
        (calls(("a", {"n": 1})), calls(("a", {"n": 2})), False, False, False),
        (calls(("a", {"n": 1, "m": 2})), calls(("a", {"m": 2, "n": 1})), True, True, True),
        (calls(("a", {"n": 17})), calls(("a", {"n": 17.0})), True, True, True),
        (calls("a"), [], False, True, True),
        ([], [], True, True, True),
    ],
)
def test_trajectory_match_types(actual, expected, exact, in_order, any_order):
    assert trajectory_matches(actual, expected, "exact") is exact
    assert trajectory_matches(actual, expected, "in_order") is in_order
    assert trajectory_matches(actual, expected, "any_order") is any_order


def test_tool_call_ids_are_ignored():
    a = [ToolCallData(name="t", args={}, id="call_1")]
    e = [ToolCallData(name="t", args={}, id="call_expected")]
    assert trajectory_matches(a, e, "exact")


@pytest.mark.parametrize(
    ("actual", "expected", "score"),
    [
        ("The top 3 months are November, September and December.",
         "The top 3 months by revenue are November ($22,500), September ($20,100), and December ($19,400).", 0.692308),
        ("The dogs are running", "the dog runs", 0.857143),
        ("Café crème", "café creme", 0.5),
        ("東京は晴れ", "東京は雨", 0.666667),
        ("ﬁle x²", "file x2", 1.0),
        ("", "", 0.0),
        (None, "something", 0.0),
    ],
)
def test_rouge1_matches_google_adk(actual, expected, score):
    assert rouge1_fmeasure(actual, expected) == pytest.approx(score, abs=5e-7)


def inv(text: str | None = "hello", tools=(), inv_id="i1", user="q") -> InvocationData:
    return InvocationData(invocation_id=inv_id, user_content=user, final_response=text,
                          intermediate_steps=IntermediateStepData(tool_calls=calls(*tools)),
                          performance_metrics={"tokens": {"total": 100}, "counts": {"llm_calls": 2},
                                               "latency": {"overall": {"max": 1200.0}}})


def run_metric(name, actual, expected, options=None, **config):
    cls = EVALUATOR_TYPES.get("builtin")
    options = options or RunOptions()
    ev = cls(cls.Config(name=name, type="builtin", **config), base_dir=".", options=options)
    ev.check()
    return asyncio.run(ev.evaluate(EvalContext(case_id="c", invocations=actual, expected_invocations=expected,
                                               match_reason="test", options=options)))  # a run's options: by context


def test_trajectory_average_over_turns_with_diff():
    result = run_metric("tool_trajectory_avg_score", [inv(tools=["a"]), inv(tools=["b"], inv_id="i2")],
                        [inv(tools=["a"]), inv(tools=["c"])], threshold=0.5)
    assert (result.status, result.score, result.per_invocation_scores) == (Status.PASSED, 0.5, [1.0, 0.0])
    assert result.details["mismatches"] == [{"invocation": 1, "invocation_id": "i2",
                                             "expected": [{"name": "c", "args": {}}],
                                             "actual": [{"name": "b", "args": {}}]}]


def test_default_threshold_is_uniform_half():
    """Without a threshold every builtin metric passes at 0.5, as agentevals-cli 0.11 had it."""
    result = run_metric("tool_trajectory_avg_score", [inv(tools=["a"]), inv(tools=["b"])],
                        [inv(tools=["a"]), inv(tools=["c"])])
    assert (result.status, result.score, result.threshold) == (Status.PASSED, 0.5, 0.5)


@pytest.mark.parametrize(("metric", "threshold"), [("tool_trajectory_avg_score", 1.0), ("response_match_score", 0.8)])
def test_adk_thresholds_are_one_setting_away(metric, threshold):
    result = run_metric(metric, [inv(tools=["a"]), inv(tools=["b"])], [inv(tools=["a"]), inv(tools=["c"])],
                        options=RunOptions(builtin_thresholds="adk"))
    assert result.threshold == threshold


def test_turn_count_mismatch_is_not_evaluated_with_reason():
    result = run_metric("response_match_score", [inv()], [inv(), inv()])
    assert result.status == Status.NOT_EVALUATED
    assert result.reason == ("the session has 1 turn, the eval case has 2: turns are scored in pairs by position, "
                             "so the counts must be equal")


def test_no_eval_case_is_not_evaluated():
    result = run_metric("tool_trajectory_avg_score", [inv()], None)
    assert (result.status, result.reason) == (Status.NOT_EVALUATED, "needs an eval case: test")


def test_informational_metrics_report_values_without_eval_case():
    for name, value in [("token_usage_v1", 100.0), ("inference_call_count_v1", 2.0),
                        ("invocation_duration_v1", 1200.0), ("tool_call_count_v1", 1.0)]:
        result = run_metric(name, [inv(tools=["a"])], None)
        assert (result.status, result.value, result.score) == (Status.INFORMATIONAL, value, None), name


def test_adk_judged_metric_without_extra_is_not_evaluated_with_install_command():
    pytest.importorskip("rouge_score")
    try:
        import google.adk  # noqa: F401
        pytest.skip("google-adk is installed here")
    except ImportError:
        pass
    result = run_metric("final_response_match_v2", [inv()], [inv()])
    assert result.status == Status.NOT_EVALUATED
    assert result.reason == 'needs the adk extra (google-adk): pip install "agentevals-cli[adk]"'
