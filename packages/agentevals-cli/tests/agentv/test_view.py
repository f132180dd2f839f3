"""The one mapping from a case (turns, golden turns, spans, figures) to what AgentV evaluators read."""

from __future__ import annotations

import json
from typing import Any

from agentevals.evalsets.model import EvalCase
from agentevals.evaluators.agentv._view import CaseView
from agentevals.traces.model import Span


def perf(ms: float, prompt: int, output: int, llm_calls: int, cost: Any = None) -> dict[str, Any]:
    data = {"latency": {"overall": {"max": ms, "count": 1}}, "counts": {"llm_calls": llm_calls},
            "tokens": {"total_prompt": prompt, "total_output": output, "cache_read_tokens": 1}}
    return {**data, "cost_usd": cost} if cost is not None else data


def two_turns(av: Any) -> Any:
    turns = [
        av.turn("List releases", "Two releases.", ({"name": "helm_list", "id": "c1"}, {"name": "Read", "id": "c2",
                                                                                      "status": "ERROR"}),
                perf(1000, 100, 10, 2, 0.01), span_id="turn-1"),
        av.turn("Upgrade kagent", None, ({"name": "helm_upgrade", "args": {"release": "kagent"}, "id": "c3"},),
                perf(500.5, 50, 5, 1, 0.02), span_id="turn-2"),
    ]
    spans = (av.span("helm_list", "c1", 10, 40), av.span("helm_upgrade", "c3", 1100, 250),
             Span(trace_id="t1", span_id="turn-1", name="invocation", start_ns=0, end_ns=int(1000e6)),
             Span(trace_id="t1", span_id="turn-2", name="invocation", start_ns=int(1050e6), end_ns=int(1550.5e6)))
    return av.case(turns=turns, spans=spans, expected_tools=("helm_list",), expected=None, golden=True)


def test_question_answer_and_messages(av: Any) -> None:
    view = CaseView.of(two_turns(av))
    assert view.question == "List releases\n\nUpgrade kagent"
    assert view.input == [{"role": "user", "content": "List releases"}, {"role": "user", "content": "Upgrade kagent"}]
    assert view.answer == "Two releases."  # the last turn that has a final response
    first, second = view.output
    assert first["content"] == "Two releases." and "content" not in second
    assert first["tool_calls"][0] == {"tool": "helm_list", "input": {}, "output": "ok", "id": "c1",
                                      "start_time": "1970-01-01T00:00:00.010Z", "end_time": "1970-01-01T00:00:00.050Z",
                                      "duration_ms": 40.0}
    assert second["tool_calls"][0]["input"] == {"release": "kagent"}
    assert first["token_usage"] == {"input": 100, "output": 10, "cached": 1} and first["duration_ms"] == 1000


def test_golden_side(av: Any) -> None:
    view = CaseView.of(two_turns(av))
    assert view.expected_output == [{"role": "assistant", "tool_calls": [{"tool": "helm_list", "input": {}}]}]
    assert view.reference_answer == '[{"tool": "helm_list", "input": {}}]'
    assert view.has_golden
    text = CaseView.of(av.case(expected="Paris.")).reference_answer
    assert text == "Paris."


def test_figures_and_trace_summary(av: Any) -> None:
    view = CaseView.of(two_turns(av))
    assert view.token_usage == {"input": 150, "output": 15, "cached": 2}
    assert view.llm_call_count == 3
    assert view.cost_usd == 0.03
    assert view.duration_ms == 1500.5
    assert (view.start_time, view.end_time) == ("1970-01-01T00:00:00.000Z", "1970-01-01T00:00:01.550Z")
    assert view.trace_summary() == {
        "event_count": 3, "tool_names": ["Read", "helm_list", "helm_upgrade"],
        "tool_calls_by_name": {"helm_list": 1, "Read": 1, "helm_upgrade": 1}, "error_count": 1, "llm_call_count": 3,
        "tool_durations": {"helm_list": [40.0], "helm_upgrade": [250.0]}}
    assert view.exploration_ratio() == 1 / 3


def test_case_figures_win_over_turn_sums(av: Any) -> None:
    ctx = av.case(perf=perf(10, 1, 1, 1), case_perf={"tokens": {"total_prompt": 7, "total_output": 3},
                                                      "counts": {"llm_calls": 9}})
    view = CaseView.of(ctx)
    assert view.token_usage == {"input": 7, "output": 3, "cached": 0}
    assert view.llm_call_count == 9
    assert view.duration_ms == 10


def test_missing_figures_stay_none(av: Any) -> None:
    view = CaseView.of(av.case())
    assert (view.token_usage, view.llm_call_count, view.cost_usd, view.duration_ms, view.start_time) == (
        None, None, None, None, None)


def test_criteria_from_case_or_adk_rubrics(av: Any) -> None:
    assert CaseView.of(av.case(criteria="Names Paris")).criteria == "Names Paris"
    ctx = av.case(expected="x")
    ctx.eval_case = EvalCase(eval_id="c", conversation=ctx.eval_case.conversation, rubrics=[
        {"rubric_id": "r1", "rubric_content": {"text_property": "Mentions Paris"}},
        {"rubric_id": "r2", "rubric_content": {"text_property": "One sentence"}}])
    assert CaseView.of(ctx).criteria == "Mentions Paris\nOne sentence"


def test_template_variables_include_older_names(av: Any) -> None:
    variables = CaseView.of(av.case(" Paris. ", expected="Paris", criteria="c")).variables()
    assert variables["answer"] == variables["candidate_answer"] == "Paris."
    assert variables["criteria"] == variables["expected_outcome"] == "c"
    assert json.loads(variables["expected_output"]) == [{"role": "assistant", "content": "Paris"}]
    assert variables["file_changes"] == ""


def test_view_is_built_once_per_case(av: Any) -> None:
    ctx = av.case()
    assert CaseView.of(ctx) is CaseView.of(ctx)
