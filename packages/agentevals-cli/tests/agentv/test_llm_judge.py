"""llm_judge and rubric against a real loopback chat-completions server; NOT_EVALUATED without a key."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from agentevals.engine.options import RunOptions
from agentevals.errors import ConfigError, EvaluatorFailure
from agentevals.results import Status, Verdict


def judge_entry(server: Any, **entry: Any) -> dict[str, Any]:
    return {"type": "llm_judge", "name": "quality", "model": "judge-model", "base_url": server.base_url,
            "api_key_env": "TEST_JUDGE_KEY", **entry}


def prompts(server: Any) -> list[tuple[str, str]]:
    """(system, user) of each chat request the server got."""
    return [(r.json["messages"][0]["content"], r.json["messages"][1]["content"])
            for r in server.requests_to("POST", "/chat/completions")]


def test_freeform_default_template(av: Any, chat_server: Any) -> None:
    chat_server.chat = lambda body: {"score": 0.9, "hits": ["names Paris", "", "a", "b", "c"], "misses": [],
                                     "reasoning": "Correct."}
    ctx = av.case("Paris.", expected="The capital of France is Paris.", criteria="Identifies Paris")
    result = av.run(judge_entry(chat_server), ctx)
    assert (result.status, result.score, result.verdict) == (Status.PASSED, 0.9, Verdict.PASS)
    assert result.hits == ["names Paris", "a", "b", "c"]
    assert result.reasoning == "Correct."
    assert result.details == {"judge_model": "judge-model"}
    [(system, user)] = prompts(chat_server)
    assert '"score": <number between 0.0 and 1.0>' in system
    assert "[[ ## criteria ## ]]\nIdentifies Paris\n\n[[ ## question ## ]]\nWhat is the capital of France?" in user
    assert "[[ ## reference_answer ## ]]\nThe capital of France is Paris.\n\n[[ ## answer ## ]]\nParis." in user
    assert chat_server.requests[0].json["model"] == "judge-model"


def test_prompt_file_with_variables(av: Any, chat_server: Any) -> None:
    chat_server.chat = lambda body: '```json\n{"score": 0.5, "reasoning": "partly"}\n```'
    result = av.run(judge_entry(chat_server, prompt="prompts/quality.md", criteria="Be exact"), av.case("Paris."))
    assert (result.score, result.verdict, result.status) == (0.5, Verdict.FAIL, Status.FAILED)
    [(_, user)] = prompts(chat_server)
    assert "Criteria: Be exact\nQuestion: What is the capital of France?\nReference: \n" in user
    assert "[[ ## answer ## ]]\nParis.\n" in user
    assert "{{ not_a_variable }}" in user


def test_inline_prompt_is_the_whole_template(av: Any, chat_server: Any) -> None:
    chat_server.chat = lambda body: {"score": 1}
    av.run(judge_entry(chat_server, prompt="Is the answer polite? Answer: {{answer}}"), av.case("Paris."))
    assert prompts(chat_server)[0][1] == "Is the answer polite? Answer: Paris."


def test_executable_prompt_template(av: Any, chat_server: Any) -> None:
    chat_server.chat = lambda body: {"score": 1}
    entry = judge_entry(chat_server, prompt={"command": ["python", "scripts/prompt_template.py"],
                                             "config": {"style": "concise"}})
    av.run(entry, av.case("Paris."))
    assert prompts(chat_server)[0][1].strip() == "Is 'Paris.' concise? Question: What is the capital of France?"


def test_retries_until_the_reply_parses(av: Any, chat_server: Any) -> None:
    replies = iter(["I think it is good", {"score": 1.5}, {"score": 0.75, "misses": ["terse"]}])
    chat_server.chat = lambda body: next(replies)
    result = av.run(judge_entry(chat_server), av.case())
    assert (result.score, result.verdict, result.misses) == (0.75, Verdict.BORDERLINE, ["terse"])
    assert len(prompts(chat_server)) == 3


def test_parse_failure_after_three_attempts_is_not_evaluated(av: Any, chat_server: Any) -> None:
    chat_server.chat = lambda body: "no JSON here"
    result = av.run(judge_entry(chat_server), av.case())
    assert result.status == Status.NOT_EVALUATED
    assert result.reason is not None and result.reason.startswith("Judge parse failure after 3 attempts")
    assert len(prompts(chat_server)) == 3


def test_api_error_is_an_error(av: Any, chat_server: Any) -> None:
    module = __import__("agentv_tests_openai_server")
    chat_server.chat = lambda body: module.Reply(400, json={"error": {"message": "model not found"}})
    with pytest.raises(EvaluatorFailure, match="HTTP 400"):
        asyncio.run(av.build(judge_entry(chat_server)).evaluate(av.case()))


def test_no_key_is_not_evaluated(av: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    entry = {"type": "llm-judge", "name": "q", "model": "m", "api_key_env": "NO_SUCH_KEY_VAR"}
    result = av.run(entry, av.case())
    assert (result.status, result.score) == (Status.NOT_EVALUATED, None)
    assert result.reason == "LLM judge unavailable: no API key: set NO_SUCH_KEY_VAR"


def test_no_model_is_not_evaluated_and_judge_model_option_fills_it(av: Any, chat_server: Any) -> None:
    entry = {"type": "llm_judge", "name": "q", "base_url": chat_server.base_url, "api_key_env": "TEST_JUDGE_KEY"}
    assert "no model configured" in (av.run(entry, av.case()).reason or "")
    chat_server.chat = lambda body: {"score": 1}
    result = av.run(entry, av.case(options=RunOptions(judge_model="from-flag")))
    assert result.score == 1.0 and chat_server.requests[-1].json["model"] == "from-flag"


def test_prompt_file_must_use_answer(av: Any, chat_server: Any) -> None:
    with pytest.raises(ConfigError, match=r"uses neither \{\{answer\}\} nor \{\{expected_output\}\}"):
        av.build(judge_entry(chat_server, prompt="prompts/no_answer.md"))


def test_missing_prompt_file_is_a_config_error(av: Any, chat_server: Any) -> None:
    with pytest.raises(ConfigError, match=r"prompt file not found: .*prompts/missing.md"):
        av.build(judge_entry(chat_server, prompt="./prompts/missing.md"))


def rubric_entry(server: Any, items: list[Any], **extra: Any) -> dict[str, Any]:
    return {"type": "rubric", "name": "criteria", "model": "judge", "base_url": server.base_url,
            "api_key_env": "TEST_JUDGE_KEY", "rubrics": items, **extra}


def test_rubric_checklist_weights(av: Any, chat_server: Any) -> None:
    chat_server.chat = lambda body: {"checks": [
        {"id": "accuracy", "satisfied": True, "reasoning": "Paris"},
        {"id": "clarity", "satisfied": False, "reasoning": "terse"},
        {"id": "unknown", "satisfied": False, "reasoning": "ignored"}], "overall_reasoning": "Mostly right."}
    items = [{"id": "accuracy", "outcome": "Answer is factually correct", "weight": 3.0, "required": True},
             {"id": "clarity", "outcome": "Explanation is clear", "weight": 1.0, "required": False}]
    result = av.run(rubric_entry(chat_server, items), av.case())
    assert (result.score, result.verdict, result.status) == (0.75, Verdict.BORDERLINE, Status.FAILED)
    assert result.hits == ["[accuracy] Answer is factually correct: Paris"]
    assert result.misses == ["[clarity] Explanation is clear: terse"]
    assert result.reasoning == "Mostly right."
    [(system, user)] = prompts(chat_server)
    assert '"satisfied": boolean' in system
    assert "- [accuracy] (REQUIRED) (weight: 3): Answer is factually correct" in user
    assert "- [clarity]: Explanation is clear" in user


def test_rubric_required_item_forces_fail_but_keeps_score(av: Any, chat_server: Any) -> None:
    chat_server.chat = lambda body: {"checks": [{"id": "rubric-1", "satisfied": True, "reasoning": "ok"},
                                                {"id": "rubric-2", "satisfied": True, "reasoning": "ok"},
                                                {"id": "rubric-3", "satisfied": True, "reasoning": "ok"},
                                                {"id": "rubric-4", "satisfied": True, "reasoning": "ok"},
                                                {"id": "rubric-5", "satisfied": False, "reasoning": "no"}],
                                     "overall_reasoning": "."}
    entry = {**rubric_entry(chat_server, []), "type": "rubrics", "name": None}
    del entry["rubrics"]
    entry["criteria"] = ["Mentions Paris", "Is one sentence", "Is polite", "No errors", "Cites a source"]
    result = av.run(entry, av.case())
    assert result.name == "rubrics"
    assert (result.score, result.verdict, result.status) == (0.8, Verdict.FAIL, Status.FAILED)


def test_rubric_score_ranges(av: Any, chat_server: Any) -> None:
    chat_server.chat = lambda body: {"checks": [{"id": "correctness", "score": 8, "reasoning": "minor gap"},
                                                {"id": "style", "score": 5}]}
    items = [{"id": "correctness", "weight": 2.0, "required_min_score": 7,
              "score_ranges": {0: "Critical bugs", 3: "Minor bugs", 6: "Correct with minor issues", 9: "Fully correct"}},
             {"id": "style", "outcome": "Readable", "score_ranges": [
                 {"score_range": [0, 4], "outcome": "Hard to read"}, {"score_range": [5, 10], "expected_outcome": "Readable"}]}]
    result = av.run(rubric_entry(chat_server, items), av.case())
    assert result.score == pytest.approx((0.8 * 2 + 0.5) / 3)
    assert result.verdict == Verdict.BORDERLINE
    assert result.hits == ["[correctness] correctness - Score: 8/10 (Correct with minor issues): minor gap"]
    assert result.misses == ["[style] Readable - Score: 5/10 (Readable)"]
    assert result.details["raw_scores"] == {"correctness": 8, "style": 5}
    user = prompts(chat_server)[0][1]
    assert "### Criterion: correctness (weight: 2) [REQUIRED: min score 7]" in user
    assert "  - Score 0-2: Critical bugs" in user and "  - Score 9-10: Fully correct" in user


def test_rubric_score_range_gate(av: Any, chat_server: Any) -> None:
    chat_server.chat = lambda body: {"checks": [{"id": "c", "score": 9}]}
    items = [{"id": "c", "outcome": "Correct", "required": True, "score_ranges": {0: "Wrong", 5: "Right"}}]
    result = av.run(rubric_entry(chat_server, items), av.case())
    assert (result.score, result.verdict) == (0.9, Verdict.FAIL)
    chat_server.chat = lambda body: {"checks": [{"id": "c", "score": 7.5}]}
    assert av.run(rubric_entry(chat_server, items), av.case()).status == Status.NOT_EVALUATED


def test_llm_judge_with_rubrics_uses_rubric_grading(av: Any, chat_server: Any) -> None:
    chat_server.chat = lambda body: {"checks": [{"id": "rubric-1", "satisfied": True, "reasoning": "yes"}],
                                     "overall_reasoning": "ok"}
    result = av.run(judge_entry(chat_server, rubrics=["Mentions Paris"]), av.case())
    assert (result.score, result.hits) == (1.0, ["[rubric-1] Mentions Paris: yes"])


@pytest.mark.parametrize(("ranges", "message"), [
    ({1: "a", 5: "b"}, "must start at 0"),
    ([{"score_range": [0, 5], "outcome": "a"}, {"score_range": [5, 10], "outcome": "b"}], "not overlap"),
    ([{"score_range": [0, 11], "outcome": "a"}], "0 <= lo <= hi <= 10"),
])
def test_rubric_score_ranges_are_validated(av: Any, ranges: Any, message: str) -> None:
    with pytest.raises(Exception, match=message):
        av.build({"type": "rubric", "name": "r", "rubrics": [{"id": "a", "score_ranges": ranges}]})


def test_rubric_without_key_is_not_evaluated(av: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = av.run({"type": "rubric", "name": "r", "model": "m", "rubrics": ["x"]}, av.case())
    assert result.status == Status.NOT_EVALUATED
    assert result.reason == "LLM judge unavailable: no API key: set OPENAI_API_KEY"


def test_composite_llm_aggregator(av: Any, chat_server: Any) -> None:
    chat_server.chat = lambda body: {"score": 0.9, "verdict": "pass", "reasoning": "Both fine."}
    entry = {"type": "composite", "name": "final_decision",
             "aggregator": {"type": "llm_judge", "prompt": "Decide:\n{{EVALUATOR_RESULTS_JSON}}", "model": "judge",
                            "base_url": chat_server.base_url, "api_key_env": "TEST_JUDGE_KEY"},
             "evaluators": [{"name": "conciseness", "type": "contains", "value": "Paris"},
                            {"name": "detail", "type": "is_json"}]}
    result = av.run(entry, av.case())
    assert (result.score, result.verdict, result.reasoning) == (0.9, Verdict.PASS, "Both fine.")
    user = prompts(chat_server)[0][1]
    assert user.startswith("Decide:\n{")
    assert json.loads(user.removeprefix("Decide:\n"))["detail"]["verdict"] == "fail"
