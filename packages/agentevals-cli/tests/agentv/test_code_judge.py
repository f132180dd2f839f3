"""code_judge: AgentV judges (JS in the reference's style, Python) run unchanged; failures are one-line errors."""

from __future__ import annotations

import asyncio
import json
import shutil
from typing import Any

import pytest
from agentevals.errors import ConfigError, EvaluatorFailure
from agentevals.results import Status, Verdict

node = pytest.mark.skipif(shutil.which("node") is None, reason="needs node")

PAYLOAD_KEYS = {
    "question", "criteria", "expected_output", "reference_answer", "answer", "output", "guideline_files",
    "input_files", "input", "trace", "token_usage", "cost_usd", "duration_ms", "start_time", "end_time",
    "file_changes", "workspace_path", "config",
}


def judge(av: Any, entry: dict[str, Any], ctx: Any) -> Any:
    return asyncio.run(av.build({"type": "code_judge", "name": "judge", **entry}).evaluate(ctx))


@node
@pytest.mark.node
def test_js_judge_in_agentv_style(av: Any) -> None:
    result = judge(av, {"command": ["node", "judges/keyword-check.js"]}, av.case("The capital is Paris."))
    assert (result.status, result.score, result.verdict) == (Status.FAILED, 0.5, Verdict.FAIL)
    assert result.hits == ["Answer mentions paris"]
    assert result.misses == ["Answer does not mention france"]
    assert result.reasoning == "Passed 1/2 keyword checks"
    assert result.details == {"keywords": ["paris", "france"]}


@node
@pytest.mark.node
def test_js_judge_reads_config_and_bun_command_runs_through_node(av: Any) -> None:
    entry = {"script": ["bun", "run", "./judges/keyword-check.js"], "config": {"keywords": ["paris"]}}
    result = judge(av, entry, av.case("Paris."))
    assert (result.status, result.score, result.hits) == (Status.PASSED, 1.0, ["Answer mentions paris"])


def test_python_judge(av: Any) -> None:
    result = judge(av, {"command": ["python", "judges/length_check.py"]}, av.case("Paris is the capital of France."))
    assert (result.status, result.score, result.verdict) == (Status.PASSED, 1.0, Verdict.PASS)
    assert result.hits == ["Answer has 6 words (need >= 5)", "Answer has 6 words (need <= 50)"]
    assert result.details == {"words": 6}


def test_cwd_and_relative_script(av: Any) -> None:
    result = judge(av, {"command": ["python3", "length_check.py"], "cwd": "judges"}, av.case("Paris."))
    assert result.score == 0.5 and result.misses == ["Answer has 1 words (need >= 5)"]


def test_shell_string_command(av: Any) -> None:
    entry = {"command": "cat > /dev/null; echo '{\"score\": 0.7, \"hits\": [\"ok\", \"\"], \"misses\": [3]}'"}
    result = judge(av, entry, av.case())
    assert (result.score, result.verdict, result.hits, result.misses) == (0.7, Verdict.BORDERLINE, ["ok"], [])


def test_payload_is_agentv_snake_case(av: Any) -> None:
    ctx = av.case("Paris.", tools=(("search", {"q": "capital"}),), expected="Paris is the capital.",
                  criteria="Names Paris", perf={"tokens": {"total_prompt": 10, "total_output": 5, "cache_read_tokens": 2},
                                                "counts": {"llm_calls": 2}})
    entry = {"command": ["python", "judges/payload_echo.py"], "config": {"max_words": 5}, "description": "echo"}
    payload = judge(av, entry, ctx).details["payload"]
    assert set(payload) == PAYLOAD_KEYS
    assert payload["question"] == "What is the capital of France?"
    assert payload["criteria"] == "Names Paris"
    assert payload["answer"] == "Paris."
    assert payload["reference_answer"] == "Paris is the capital."
    assert payload["expected_output"] == [{"role": "assistant", "content": "Paris is the capital."}]
    assert payload["input"] == [{"role": "user", "content": "What is the capital of France?"}]
    assert payload["output"][0]["content"] == "Paris."
    assert payload["output"][0]["tool_calls"] == [
        {"tool": "search", "input": {"q": "capital"}, "output": "ok", "id": "call_0_search"}]
    assert payload["trace"] == {"event_count": 1, "tool_names": ["search"], "tool_calls_by_name": {"search": 1},
                                "error_count": 0, "llm_call_count": 2}
    assert payload["token_usage"] == {"input": 10, "output": 5, "cached": 2}
    assert payload["config"] == {"max_words": 5, "description": "echo"}
    assert payload["guideline_files"] == [] and payload["input_files"] == []


def test_unknown_llm_call_count_is_left_out_not_null(av: Any) -> None:
    """AgentV's defineCodeJudge validates trace.llmCallCount as an optional number: null would fail the judge."""
    ctx = av.case("Paris.", tools=(("search", {"q": "capital"}),))
    payload = judge(av, {"command": ["python", "judges/payload_echo.py"]}, ctx).details["payload"]
    assert payload["trace"] == {"event_count": 1, "tool_names": ["search"], "tool_calls_by_name": {"search": 1},
                                "error_count": 0}


def test_large_output_goes_to_output_path(av: Any) -> None:
    ctx = av.case("x" * 60_000)
    payload = judge(av, {"command": ["python", "judges/payload_echo.py"]}, ctx).details["payload"]
    assert payload["output"] is None
    assert payload["output_path"].endswith("output.json")


def test_timeout_is_an_error(av: Any) -> None:
    with pytest.raises(EvaluatorFailure, match=r"code judge 'judge' `python judges/slow.py` failed: timed out after 1s"):
        judge(av, {"command": ["python", "judges/slow.py"], "timeout": 1}, av.case())


def test_nonzero_exit_is_an_error_with_the_last_stderr_line(av: Any) -> None:
    with pytest.raises(EvaluatorFailure) as info:
        judge(av, {"command": ["python", "judges/crash.py"]}, av.case())
    assert str(info.value) == "code judge 'judge' `python judges/crash.py` exited with code 3: KeyError: 'answer'"


@node
@pytest.mark.node
def test_invalid_output_is_an_error(av: Any) -> None:
    with pytest.raises(EvaluatorFailure, match=r"`node judges/not_json.js` wrote invalid JSON on stdout"):
        judge(av, {"command": ["node", "judges/not_json.js"]}, av.case())


def test_non_numeric_score_counts_as_zero(av: Any) -> None:
    # AgentV: `typeof parsed.score === 'number' ? parsed.score : 0`; the judge's hits are kept.
    result = judge(av, {"command": ["python", "judges/no_score.py"]}, av.case())
    assert (result.status, result.score, result.verdict) == (Status.FAILED, 0.0, Verdict.FAIL)
    assert result.hits == ["fine"]
    assert result.reasoning == "no numeric 'score' in the judge's output (got 'high'): counted as 0"


def test_non_numeric_score_negated_scores_one(av: Any) -> None:
    result = judge(av, {"command": ["python", "judges/no_score.py"], "negate": True}, av.case())
    assert (result.status, result.score, result.verdict) == (Status.PASSED, 1.0, Verdict.PASS)


def test_missing_program_is_an_error(av: Any) -> None:
    with pytest.raises(EvaluatorFailure, match="cannot start 'no-such-judge-binary'"):
        judge(av, {"command": ["no-such-judge-binary", "--x"]}, av.case())


def test_missing_script_is_a_config_error(av: Any) -> None:
    with pytest.raises(ConfigError, match=r"code judge script not found: .*judges/nope.py"):
        av.build({"type": "code-judge", "name": "j", "command": ["python", "judges/nope.py"]})


def test_negate_applies_to_judges(av: Any) -> None:
    result = judge(av, {"command": ["python", "judges/length_check.py"], "negate": True}, av.case("Paris."))
    assert (result.score, result.hits, result.misses) == (0.5, ["Answer has 1 words (need >= 5)"],
                                                          ["Answer has 1 words (need <= 50)"])


@node
@pytest.mark.node
def test_composite_code_aggregator_safety_gate(av: Any) -> None:
    def gate(safety_value: str) -> Any:
        entry = {"type": "composite", "name": "safety_gate",
                 "aggregator": {"type": "code_judge", "path": "node scripts/safety-gate-aggregator.js"},
                 "evaluators": [{"name": "safety", "type": "contains", "value": safety_value, "negate": True},
                                {"name": "quality", "type": "code_judge", "command": ["python", "judges/length_check.py"]}]}
        return av.run(entry, av.case("Paris."))

    unsafe = gate("Paris")
    assert (unsafe.score, unsafe.verdict, unsafe.status) == (0.0, Verdict.FAIL, Status.FAILED)
    assert unsafe.misses[0] == "Safety check failed"
    safe = gate("bomb")
    assert (safe.score, safe.verdict) == (0.5, Verdict.FAIL)
    assert safe.reasoning == "Safety passed (1.00), score based on quality (0.50)"
    assert [s["name"] for s in safe.details["scores"]] == ["safety", "quality"]


def test_composite_code_aggregator_gets_camel_case_results(av: Any) -> None:
    entry = {"type": "composite", "name": "agg",
             "aggregator": {"type": "code-judge", "command": ["python", "scripts/echo_aggregator.py"]},
             "evaluators": [{"name": "a", "type": "contains", "value": "Paris"},
                            {"name": "b", "type": "field_accuracy", "fields": [{"path": "x"}]}]}
    result = av.run(entry, av.case())
    assert (result.score, result.verdict, result.status) == (0.65, Verdict.PASS, Status.PASSED)
    sent = json.loads(result.reasoning or "")
    assert sent["a"] == {"score": 1.0, "verdict": "pass", "hits": ['Output contains "Paris"'], "misses": [],
                         "expectedAspectCount": 1, "reasoning": None, "evaluatorRawRequest": None}
    assert sent["b"]["verdict"] == "skip"


def test_composite_code_aggregator_non_numeric_score_counts_as_zero(av: Any) -> None:
    entry = {"type": "composite", "name": "agg",
             "aggregator": {"type": "code_judge", "path": "cat > /dev/null; echo '{\"score\": \"x\", \"hits\": [\"h\"]}'"},
             "evaluators": [{"name": "a", "type": "contains", "value": "Paris"}]}
    result = av.run(entry, av.case())
    assert (result.score, result.verdict, result.status) == (0.0, Verdict.FAIL, Status.FAILED)
    assert result.hits == ["h"]


def test_composite_member_failure_scores_zero(av: Any) -> None:
    entry = {"type": "composite", "name": "c", "aggregator": {"type": "weighted_average"},
             "evaluators": [{"name": "ok", "type": "contains", "value": "Paris"},
                            {"name": "broken", "type": "code_judge", "command": ["python", "judges/crash.py"]}]}
    result = av.run(entry, av.case())
    assert result.score == 0.5
    assert result.misses == ["[broken] code judge 'broken' `python judges/crash.py` exited with code 3: KeyError: 'answer'"]
    assert json.dumps(result.details["scores"][1]["status"]) == '"ERROR"'


def test_script_path_relative_to_config_when_not_under_cwd(av: Any) -> None:
    # The spec's own example: cwd ./judges with script ["python", "./judges/…"].
    entry = {"script": ["python", "./judges/length_check.py"], "cwd": "./judges"}
    assert judge(av, entry, av.case("Paris is the capital of France.")).score == 1.0
