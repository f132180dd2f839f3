"""mode: evals_api — the exact exchange with a loopback Evals API, cleanup, and faults."""

from __future__ import annotations

import asyncio

import pytest
from agentevals.errors import EvaluatorFailure
from agentevals.results import Status
from support.openai_server import Reply

SIMILARITY = {"type": "text_similarity", "evaluation_metric": "fuzzy_match"}


def run(evaluator, ctx):
    return asyncio.run(evaluator.evaluate(ctx))


def calls(server) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in server.requests]


def test_exchange_and_scores(build, case, evals_server, api_key):
    evals_server.grade = lambda criterion, item: (
        (0.9, True) if item["actual_response"] == "a1" else (0.2, False)
    )
    evaluator = build(SIMILARITY, server=evals_server, mode="evals_api", threshold=0.8)
    result = run(evaluator, case(["a1", "a2", "a3"], ["e1", "e2"]))

    assert calls(evals_server) == [
        ("POST", "/evals"),
        ("POST", "/evals/eval_1/runs"),
        ("GET", "/evals/eval_1/runs/evalrun_1"),
        ("GET", "/evals/eval_1/runs/evalrun_1"),
        ("GET", "/evals/eval_1/runs/evalrun_1/output_items"),
        ("DELETE", "/evals/eval_1"),
    ]
    create = evals_server.requests[0].json
    assert create == {
        "name": "agentevals sim",
        "data_source_config": {
            "type": "custom",
            "item_schema": {
                "type": "object",
                "properties": {
                    "user_content": {"type": "string"},
                    "actual_response": {"type": "string"},
                    "expected_response": {"type": "string"},
                },
                "required": ["user_content", "actual_response", "expected_response"],
            },
            "include_sample_schema": False,
        },
        "testing_criteria": [
            {
                "type": "text_similarity",
                "name": "sim",
                "input": "{{ item.actual_response }}",
                "reference": "{{ item.expected_response }}",
                "evaluation_metric": "fuzzy_match",
                "pass_threshold": 0.8,
            }
        ],
        "metadata": {"created_by": "agentevals", "ephemeral": "true"},
    }
    assert evals_server.requests[1].json == {
        "name": "agentevals sim",
        "data_source": {
            "type": "jsonl",
            "source": {
                "type": "file_content",
                "content": [
                    {
                        "item": {
                            "user_content": "question 1",
                            "actual_response": "a1",
                            "expected_response": "e1",
                        }
                    },
                    {
                        "item": {
                            "user_content": "question 2",
                            "actual_response": "a2",
                            "expected_response": "e2",
                        }
                    },
                ],
            },
        },
    }
    assert result.status is Status.FAILED
    assert result.per_invocation_scores == [0.9, 0.2, None]
    assert result.score == pytest.approx(0.55)
    assert result.details["turns"][0] == {
        "invocation_id": "inv-1",
        "score": 0.9,
        "passed": True,
        "service_score": 0.9,
        "service_passed": True,
    }
    assert (result.details["eval_id"], result.details["run_id"], result.details["deleted"]) == (
        "eval_1",
        "evalrun_1",
        True,
    )
    assert evals_server.deleted == ["eval_1"]


def test_output_items_are_read_across_pages_and_matched_by_item_id(build, case, evals_server, api_key):
    evals_server.page_size = 2
    evals_server.grade = lambda criterion, item: (float(item["actual_response"]), True)
    result = run(
        build(SIMILARITY, server=evals_server, mode="evals_api"),
        case(["0.1", "0.2", "0.3", "0.4", "0.5"], ["e"] * 5),
    )
    assert result.per_invocation_scores == [0.1, 0.2, 0.3, 0.4, 0.5]
    pages = evals_server.requests_to("GET", "/evals/eval_1/runs/evalrun_1/output_items")
    assert [r.query.get("after") for r in pages] == [None, "outputitem_3", "outputitem_1"]


def test_label_model_criterion(build, case, evals_server, api_key):
    grader = {
        "type": "label_model",
        "model": "gpt-4o-mini",
        "labels": ["good", "bad"],
        "passing_labels": ["good"],
        "input": [{"role": "user", "content": "Rate this response: {{ sample.output_text }}"}],
    }
    evals_server.grade = lambda criterion, item: (1.0, True)
    result = run(build(grader, server=evals_server, mode="evals_api"), case(["fine"], None))
    create = evals_server.requests[0].json
    assert create["testing_criteria"] == [
        {
            "type": "label_model",
            "name": "sim",
            "model": "gpt-4o-mini",
            "input": [{"role": "user", "content": "Rate this response: {{ item.actual_response }}"}],
            "labels": ["good", "bad"],
            "passing_labels": ["good"],
        }
    ]
    assert create["data_source_config"]["item_schema"]["required"] == ["user_content", "actual_response"]
    assert result.status is Status.PASSED


def test_score_model_and_string_check_criteria(build, case, evals_server, api_key):
    score = {
        "type": "score_model",
        "model": "o4-mini",
        "range": [0, 10],
        "input": [{"role": "user", "content": "{{ item.expected_response }} vs {{ item.actual_response }}"}],
        "sampling_params": {"seed": 1},
    }
    evals_server.grade = lambda criterion, item: (7.0, True)
    result = run(build(score, server=evals_server, mode="evals_api", threshold=0.6), case(["a"], ["e"]))
    criterion = evals_server.evals["eval_1"]["testing_criteria"][0]
    assert (criterion["range"], criterion["pass_threshold"], criterion["sampling_params"]) == (
        [0, 10],
        6.0,
        {"seed": 1},
    )
    assert result.score == pytest.approx(0.7)

    run(
        build({"type": "string_check", "operation": "neq"}, server=evals_server, mode="evals_api"),
        case(["a"], ["e"]),
    )
    assert evals_server.evals["eval_2"]["testing_criteria"][0] == {
        "type": "string_check",
        "name": "sim",
        "input": "{{ item.actual_response }}",
        "reference": "{{ item.expected_response }}",
        "operation": "ne",
    }


def test_failed_run_is_an_error_and_the_eval_is_deleted(build, case, evals_server, api_key):
    evals_server.final_status = "failed"
    evals_server.run_error = {"code": "invalid_grader", "message": "metric not available"}
    with pytest.raises(EvaluatorFailure) as info:
        run(build(SIMILARITY, server=evals_server, mode="evals_api"), case(["a"], ["e"]))
    assert str(info.value) == "eval run evalrun_1 failed: invalid_grader: metric not available"
    assert evals_server.deleted == ["eval_1"]


def test_timeout_deletes_the_eval(build, case, evals_server, api_key):
    evals_server.final_status = "never"  # the run never finishes: the deadline passes, in whichever step
    with pytest.raises(EvaluatorFailure) as info:
        run(build(SIMILARITY, server=evals_server, mode="evals_api", timeout=2), case(["a"], ["e"]))
    assert str(info.value).startswith("timed out after 2s while ")
    assert "\n" not in str(info.value)
    assert evals_server.deleted == list(evals_server.evals)  # every eval it created is gone


def test_interrupt_deletes_the_eval(build, case, evals_server, api_key):
    evals_server.final_status = "never"
    evaluator = build(SIMILARITY, server=evals_server, mode="evals_api")

    async def interrupted():
        task = asyncio.ensure_future(evaluator.evaluate(case(["a"], ["e"])))
        while not evals_server.requests_to("GET", "/evals/eval_1/runs/evalrun_1"):
            await asyncio.sleep(0.01)
        task.cancel()  # what asyncio.run does on Ctrl-C
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(interrupted())
    assert evals_server.deleted == ["eval_1"]


def test_slow_delete_is_bounded(build, case, evals_server, api_key, monkeypatch):
    monkeypatch.setattr("agentevals.evaluators.openai_eval._evals_api.DELETE_TIMEOUT", 0.2)
    evals_server.queue("DELETE", "/evals/eval_1", Reply(json={}, delay=30), repeat_last=True)
    result = run(build(SIMILARITY, server=evals_server, mode="evals_api"), case(["a"], ["e"]))
    assert result.status is Status.PASSED
    # Given up on (the reply would come after 30 s and say deleted): the bound, not the server, ended it.
    assert result.details["deleted"] is False
    assert result.details["cleanup"].startswith("could not delete eval_1")


def test_server_error_on_create_is_an_error_with_nothing_to_delete(build, case, evals_server, api_key):
    evals_server.queue(
        "POST",
        "/evals",
        Reply(503, {"error": {"message": "Evals API retired"}}, headers={"retry-after-ms": "10"}),
        repeat_last=True,
    )
    with pytest.raises(EvaluatorFailure) as info:
        run(build(SIMILARITY, server=evals_server, mode="evals_api"), case(["a"], ["e"]))
    assert str(info.value).startswith(f"HTTP 503 from {evals_server.base_url}: ")
    assert calls(evals_server) == [("POST", "/evals")] * 3


def test_rate_limited_poll_is_retried(build, case, evals_server, api_key):
    evals_server.queue(
        "GET",
        "/evals/eval_1/runs/evalrun_1",
        Reply(429, {"error": {"message": "slow down"}}, headers={"retry-after-ms": "10"}),
    )
    result = run(build(SIMILARITY, server=evals_server, mode="evals_api"), case(["a"], ["e"]))
    assert result.status is Status.PASSED
    assert evals_server.deleted == ["eval_1"]


def test_malformed_json_from_the_run_endpoint(build, case, evals_server, api_key):
    evals_server.queue("POST", "/evals/eval_1/runs", Reply(body=b"<html>bad gateway"))
    with pytest.raises(EvaluatorFailure, match=r"^malformed response from http://127\.0\.0\.1"):
        run(build(SIMILARITY, server=evals_server, mode="evals_api"), case(["a"], ["e"]))
    assert evals_server.deleted == ["eval_1"]


def test_missing_grade_is_an_error(build, case, evals_server, api_key):
    evals_server.queue(
        "GET",
        "/evals/eval_1/runs/evalrun_1/output_items",
        Reply(json={"object": "list", "data": [], "has_more": False}),
    )
    with pytest.raises(EvaluatorFailure) as info:
        run(build(SIMILARITY, server=evals_server, mode="evals_api"), case(["a"], ["e"]))
    assert str(info.value) == "the Evals API returned no grade for inv-1: no output item"


def test_missing_key_is_not_evaluated(build, case, evals_server, monkeypatch):
    monkeypatch.delenv("AGENTEVALS_TEST_OPENAI_KEY", raising=False)
    result = run(build(SIMILARITY, server=evals_server, mode="evals_api"), case(["a"], ["e"]))
    assert (result.status, result.reason) == (
        Status.NOT_EVALUATED,
        "mode evals_api: no API key: set AGENTEVALS_TEST_OPENAI_KEY",
    )
    assert evals_server.requests == []
