"""mode: local — scores, the exact requests to a loopback chat/embeddings server, and its faults."""

from __future__ import annotations

import asyncio
import math

import pytest
from agentevals.errors import EvaluatorFailure
from agentevals.results import Status
from support.openai_server import Reply, letter_vector

LABEL = {
    "type": "label_model",
    "model": "judge-model",
    "input": [
        {"role": "developer", "content": "You grade answers of a Kubernetes agent."},
        {"role": "user", "content": "Question: {{ item.user_content }}\nAnswer: {{ sample.output_text }}"},
    ],
    "labels": ["good", "bad"],
    "passing_labels": ["good"],
}
SCORE = {
    "type": "score_model",
    "model": "judge-model",
    "input": [
        {
            "role": "user",
            "content": "Reference: {{ item.expected_response }} Answer: {{ item.actual_response }}",
        }
    ],
    "range": [1, 10],
}


def run(evaluator, ctx):
    return asyncio.run(evaluator.evaluate(ctx))


def verdict(label: str, why: str = "checked") -> dict:
    return {"steps": [{"description": "read the answer", "conclusion": why}], "result": label}


def test_text_similarity_grades_each_turn_and_averages(build, case):
    evaluator = build({"type": "text_similarity", "evaluation_metric": "rouge_1"}, threshold=0.6)
    result = run(
        evaluator, case(["the cat sat on the mat", "a b", "extra turn"], ["the cat is on the mat", "a b"])
    )
    assert result.status is Status.PASSED
    assert result.per_invocation_scores == [pytest.approx(5 / 6), 1.0, None]
    assert result.score == pytest.approx((5 / 6 + 1.0) / 2)
    assert result.threshold == 0.6 and result.type == "openai_eval"
    assert result.reason == "turn(s) 3 have no expected response and were not graded"
    assert result.details["turns"][1] == {"invocation_id": "inv-2", "score": 1.0, "passed": True}
    assert result.details["grader"] == {
        "type": "text_similarity",
        "name": "sim",
        "input": "{{ item.actual_response }}",
        "reference": "{{ item.expected_response }}",
        "evaluation_metric": "rouge_1",
        "pass_threshold": 0.6,
    }


def test_text_similarity_without_an_eval_case_is_not_evaluated(build, case):
    result = run(build({"type": "text_similarity", "evaluation_metric": "fuzzy_match"}), case(["a"], None))
    assert result.status is Status.NOT_EVALUATED
    assert result.reason == (
        "no expected responses: the grader compares against {{ item.expected_response }}, "
        "which needs a matching eval-set case"
    )


def test_meteor_without_wordnet_is_not_evaluated(build, case, monkeypatch):
    monkeypatch.setattr(
        "agentevals.evaluators.openai_eval._evaluator.meteor_unavailable", lambda: "no wordnet"
    )
    result = run(build({"type": "text_similarity", "evaluation_metric": "meteor"}), case(["a"], ["a"]))
    assert (result.status, result.reason) == (Status.NOT_EVALUATED, "no wordnet")


@pytest.mark.parametrize(
    ("operation", "scores"),
    [
        ("eq", [1.0, 0.0, 0.0]),
        ("ne", [0.0, 1.0, 1.0]),
        ("neq", [0.0, 1.0, 1.0]),
        ("like", [1.0, 0.0, 1.0]),
        ("ilike", [1.0, 1.0, 1.0]),
    ],
)
def test_string_check(build, case, operation, scores):
    ctx = case(["Paris", "PARIS", "Paris, France"], ["Paris", "Paris", "Paris"])
    result = run(build({"type": "string_check", "operation": operation}), ctx)
    assert result.per_invocation_scores == scores
    assert result.score == pytest.approx(sum(scores) / 3)


def test_label_model_requests_and_scores(build, case, chat_server, api_key):
    chat_server.chat = lambda body: verdict("bad" if "kubectl" in body["messages"][1]["content"] else "good")
    result = run(
        build(LABEL, server=chat_server), case(["helm list -A shows 2 releases", "use kubectl"], None)
    )
    assert result.status is Status.FAILED  # threshold is not used: every turn must get a passing label
    assert (result.score, result.threshold, result.per_invocation_scores) == (0.5, 1.0, [1.0, 0.0])
    assert [t["label"] for t in result.details["turns"]] == ["good", "bad"]
    assert result.reasoning == "inv-1: checked; inv-2: checked"
    first = next(r.json for r in chat_server.requests if "question 1" in r.json["messages"][1]["content"])
    assert first["model"] == "judge-model" and first["temperature"] == 0.0
    assert first["messages"] == [
        {"role": "system", "content": "You grade answers of a Kubernetes agent."},
        {"role": "user", "content": "Question: question 1\nAnswer: helm list -A shows 2 releases"},
        {
            "role": "user",
            "content": 'Reply with a JSON object: "steps", your reasoning as a list of '
            '{"description", "conclusion"}, and "result", exactly one of these labels: '
            '"good", "bad".',
        },
    ]
    schema = first["response_format"]["json_schema"]
    assert first["response_format"]["type"] == "json_schema" and schema["strict"] is True
    assert schema["schema"]["properties"]["result"] == {"type": "string", "enum": ["good", "bad"]}
    assert schema["schema"]["required"] == ["steps", "result"]
    assert chat_server.requests[0].headers["authorization"] == f"Bearer {api_key}"


def test_label_model_with_explicit_threshold_uses_the_pass_rate(build, case, chat_server, api_key):
    chat_server.chat = lambda body: verdict("bad" if "2" in body["messages"][1]["content"] else "good")
    result = run(build(LABEL, server=chat_server, threshold=0.5), case(["answer 1", "answer 2"], None))
    assert (result.status, result.score) == (Status.PASSED, 0.5)


def test_score_model_scales_the_range(build, case, chat_server, api_key):
    replies = {"a": verdict(7), "b": verdict(11), "c": verdict("seven")}
    chat_server.chat = lambda body: replies[body["messages"][0]["content"][-1]]
    evaluator = build(
        {**SCORE, "sampling_params": {"max_completions_tokens": 50, "reasoning_effort": "low", "seed": 3}},
        server=chat_server,
    )
    result = run(evaluator, case(["a", "b", "c"], ["x", "y", "z"]))
    assert result.per_invocation_scores == [pytest.approx(6 / 9), 1.0, 0.0]  # 7 → 6/9; 11 clipped; text → 0
    assert [t["raw_score"] for t in result.details["turns"]] == [7, 10, 1]
    assert result.details["turns"][2]["note"] == "non-numeric result 'seven' counted as 0"
    body = next(r.json for r in chat_server.requests if r.json["messages"][0]["content"].endswith("a"))
    assert body["messages"][0]["content"] == "Reference: x Answer: a"
    assert body["response_format"]["json_schema"]["schema"]["properties"]["result"] == {"type": "number"}
    assert (body["max_completion_tokens"], body["reasoning_effort"], body["seed"]) == (50, "low", 3)
    assert "temperature" not in body  # reasoning models reject it


def test_cosine_through_the_embeddings_endpoint(build, case, chat_server, api_key):
    evaluator = build({"type": "text_similarity", "evaluation_metric": "cosine"}, server=chat_server)
    result = run(evaluator, case(["abc", "xyz"], ["abd", ""]))
    (request,) = chat_server.requests
    assert request.path == "/embeddings"
    assert request.json["model"] == "text-embedding-3-large"
    assert sorted(request.json["input"]) == ["abc", "abd", "xyz"]  # empty texts are not sent
    u, v = letter_vector("abc"), letter_vector("abd")
    expected = sum(a * b for a, b in zip(u, v, strict=True)) / math.sqrt(
        sum(a * a for a in u) * sum(b * b for b in v)
    )
    assert result.per_invocation_scores == [pytest.approx(expected), 0.0]
    assert expected == pytest.approx(2 / 3)


def test_missing_key_is_not_evaluated_without_any_request(build, case, chat_server, monkeypatch):
    monkeypatch.delenv("AGENTEVALS_TEST_OPENAI_KEY", raising=False)
    result = run(build(LABEL, server=chat_server), case(["a"], None))
    assert (result.status, result.reason) == (
        Status.NOT_EVALUATED,
        "grader label_model: no API key: set AGENTEVALS_TEST_OPENAI_KEY",
    )
    assert chat_server.requests == []


def test_rate_limit_then_success_is_retried(build, case, chat_server, api_key):
    chat_server.chat = lambda body: verdict("good")
    chat_server.queue(
        "POST",
        "/chat/completions",
        Reply(429, {"error": {"message": "Rate limit reached"}}, headers={"retry-after-ms": "20"}),
    )
    result = run(build(LABEL, server=chat_server), case(["a"], None))
    assert result.status is Status.PASSED
    assert len(chat_server.requests) == 2


def test_server_error_forever_is_an_error_after_bounded_retries(build, case, chat_server, api_key):
    chat_server.queue(
        "POST",
        "/chat/completions",
        Reply(
            500,
            {"error": {"message": f"upstream failed for key {api_key}"}},
            headers={"retry-after-ms": "10"},
        ),
        repeat_last=True,
    )
    with pytest.raises(EvaluatorFailure) as info:
        run(build(LABEL, server=chat_server), case(["a"], None))
    message = str(info.value)
    assert message.startswith(f"inv-1: HTTP 500 from {chat_server.base_url}: ")
    assert api_key not in message and "***" in message
    assert len(chat_server.requests) == 3  # the first try and 2 retries


def test_rate_limit_longer_than_the_deadline_fails_at_once_with_its_cause(build, case, chat_server, api_key):
    chat_server.queue(
        "POST",
        "/chat/completions",
        Reply(429, {"error": {"message": "Rate limit reached"}}, headers={"retry-after": "30"}),
        repeat_last=True,
    )
    with pytest.raises(EvaluatorFailure) as info:
        run(build(LABEL, server=chat_server, timeout=3), case(["a"], None))
    assert str(info.value) == (
        f"inv-1: HTTP 429 from {chat_server.base_url}: Rate limit reached "
        "(the server asks to retry in 30s, past the deadline)"
    )
    assert len(chat_server.requests) == 1  # not retried after a wait the deadline cannot cover


def test_unreachable_endpoint_names_the_cause(build, case, api_key):
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{sock.getsockname()[1]}/v1"  # nobody listens once closed
    evaluator = build(LABEL, base_url=url, api_key_env="AGENTEVALS_TEST_OPENAI_KEY", timeout=10)
    with pytest.raises(EvaluatorFailure) as info:
        run(evaluator, case(["a"], None))
    assert str(info.value).startswith(f"inv-1: APIConnectionError from {url}: Connection error: [Errno 111] ")


def test_slow_server_hits_the_deadline(build, case, chat_server, api_key):
    chat_server.queue("POST", "/chat/completions", Reply(json={}, delay=30), repeat_last=True)
    with pytest.raises(EvaluatorFailure) as info:
        run(build(LABEL, server=chat_server, timeout=0.5), case(["a"], None))
    # The reply (after 30 s) would be a malformed response: this error says the deadline ended the call.
    assert str(info.value) == f"timed out after 0.5s while grading with {chat_server.base_url}"


def test_malformed_json_body(build, case, chat_server, api_key):
    chat_server.queue("POST", "/chat/completions", Reply(body=b'{"choices": [{"message": '))
    with pytest.raises(
        EvaluatorFailure, match=r"^inv-1: malformed response from http://127\.0\.0\.1:\d+/v1: Expecting"
    ):
        run(build(LABEL, server=chat_server), case(["a"], None))


def test_reply_that_is_not_json(build, case, chat_server, api_key):
    chat_server.chat = lambda body: "good, I think"
    with pytest.raises(EvaluatorFailure, match=r"^inv-1: judge reply is not valid JSON: 'good, I think'"):
        run(build(LABEL, server=chat_server), case(["a"], None))


def test_label_outside_the_labels_is_an_error(build, case, chat_server, api_key):
    chat_server.chat = lambda body: verdict("meh")
    with pytest.raises(EvaluatorFailure) as info:
        run(build(LABEL, server=chat_server), case(["a"], None))
    assert str(info.value) == "inv-1: the grader model answered 'meh', not one of the labels ['good', 'bad']"


def test_standard_variables_give_endpoint_key_org_and_project(build, case, chat_server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", chat_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-standard-0123456789")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-test")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj_test")
    chat_server.chat = lambda body: verdict("good")
    result = run(build(LABEL), case(["a"], None))
    assert result.status is Status.PASSED
    (request,) = chat_server.requests
    assert request.headers["authorization"] == "Bearer sk-standard-0123456789"
    assert request.headers["openai-organization"] == "org-test"
    assert request.headers["openai-project"] == "proj_test"


def test_first_failure_cancels_the_other_turns():
    from agentevals.evaluators.openai_eval._local import map_bounded

    finished = []

    async def grade(seconds: float) -> float:
        await asyncio.sleep(seconds)
        if seconds < 1:
            raise EvaluatorFailure("turn failed")
        finished.append(seconds)
        return seconds

    async def scenario():
        with pytest.raises(EvaluatorFailure):
            await map_bounded(grade, [0.01, 30.0, 30.0], limit=2)

    asyncio.run(scenario())
    assert finished == []  # the two 30 s turns were cancelled, not awaited
