"""The entry's validation, load-time checks, templates and the turn-pairing rule."""

from __future__ import annotations

import importlib.util

import pytest
from agentevals.evaluators import EVALUATOR_TYPES
from agentevals.evaluators.openai_eval import OpenAIEvalConfig, OpenAIEvalEvaluator
from agentevals.evaluators.openai_eval._items import build_turns
from agentevals.evaluators.openai_eval._templates import for_evals_api, item_fields, render
from pydantic import ValidationError

LABEL = {
    "type": "label_model",
    "model": "gpt-4o-mini",
    "input": [{"role": "user", "content": "Rate this response: {{ item.actual_response }}"}],
    "labels": ["good", "bad"],
    "passing_labels": ["good"],
}


def validate(grader: dict, **entry) -> OpenAIEvalConfig:
    return OpenAIEvalConfig.model_validate({"name": "x", "type": "openai_eval", "grader": grader, **entry})


def error_of(grader: dict, **entry) -> str:
    with pytest.raises(ValidationError) as info:
        validate(grader, **entry)
    (error,) = info.value.errors()
    assert error["loc"] == ("grader",) or error["loc"][0] != "grader"
    return error["msg"].removeprefix("Value error, ")


def test_registered_under_its_type():
    assert EVALUATOR_TYPES.get("openai_eval") is OpenAIEvalEvaluator
    assert OpenAIEvalEvaluator.Config is OpenAIEvalConfig


def test_seed_examples_validate_with_their_defaults():
    config = validate({"type": "text_similarity", "evaluation_metric": "fuzzy_match"}, threshold=0.8)
    assert (config.mode, config.timeout, config.pass_threshold) == ("local", 120.0, 0.8)
    assert config.grader.input == "{{ item.actual_response }}"
    assert config.grader.reference == "{{ item.expected_response }}"
    label = validate(LABEL)
    assert label.pass_threshold == 1.0  # threshold is not used for label_model: every turn must pass
    assert validate(LABEL, threshold=0.5).pass_threshold == 0.5


@pytest.mark.parametrize(
    ("grader", "message"),
    [
        (
            {"type": "text_similarity", "evaluation_metrc": "bleu"},
            "unknown key 'evaluation_metrc' in text_similarity grader (did you mean 'evaluation_metric'?)",
        ),
        (
            {"type": "text_similarty", "evaluation_metric": "bleu"},
            "unknown grader type 'text_similarty' (did you mean 'text_similarity'?); "
            "known: text_similarity, string_check, label_model, score_model",
        ),
        (
            {"type": "text_similarity", "evaluation_metric": "rouge_6"},
            "text_similarity grader: evaluation_metric: Input should be 'fuzzy_match', 'bleu', 'gleu', 'meteor', "
            "'cosine', 'rouge_1', 'rouge_2', 'rouge_3', 'rouge_4', 'rouge_5' or 'rouge_l' (got 'rouge_6')",
        ),
        (
            {"type": "text_similarity", "evaluation_metric": "bleu", "pass_threshold": 0.4},
            "text_similarity grader: set the pass threshold with the entry's `threshold:` (it becomes pass_threshold)",
        ),
        (
            {**LABEL, "passing_labels": ["great"]},
            "label_model grader: passing_labels ['great'] are not among labels ['good', 'bad']",
        ),
        (
            {**LABEL, "input": [{"role": "user", "content": "{{ item.actual_respons }}"}]},
            "label_model grader: input[0].content: template uses item.actual_respons (did you mean "
            "'actual_response'?); item has: user_content, actual_response, expected_response",
        ),
        (
            {"type": "string_check", "operation": "eq", "reference": "{{ sample.output_json }}"},
            "string_check grader: reference: template uses sample.output_json; recorded turns have no model "
            "sample, only sample.output_text (the agent's response)",
        ),
        (
            {"type": "string_check", "operation": "eq", "input": "{{ answer }}"},
            "string_check grader: input: template placeholder '{{ answer }}' is not '{{ item.<field> }}' or "
            "'{{ sample.output_text }}'",
        ),
        (
            {
                "type": "score_model",
                "model": "m",
                "input": [{"role": "user", "content": "x"}],
                "range": [5, 1],
            },
            "score_model grader: range: range must be [low, high] with low < high (got [5.0, 1.0])",
        ),
        (
            "fuzzy_match",
            "must be a mapping with a 'type' (one of: text_similarity, string_check, label_model, "
            "score_model)",
        ),
    ],
)
def test_grader_mistakes_are_one_line_messages(grader, message: str):
    assert error_of(grader) == message


def test_entry_level_mistakes():
    with pytest.raises(ValidationError, match="mode"):
        validate({"type": "string_check", "operation": "eq"}, mode="remote")
    with pytest.raises(ValidationError, match="timeout"):
        validate({"type": "string_check", "operation": "eq"}, timeout=0)
    with pytest.raises(ValidationError, match=r"extra_forbidden|Extra inputs"):
        validate({"type": "string_check", "operation": "eq"}, timout=3)
    with pytest.raises(ValidationError, match=r"base_url must be an http:// or https:// URL \(got 'htp:/x'\)"):
        validate({"type": "string_check", "operation": "eq"}, base_url="htp:/x")
    assert validate({"type": "string_check", "operation": "eq"}, base_url="http://127.0.0.1:8000/v1").base_url


def test_templates():
    item = {"user_content": "q", "actual_response": "A", "expected_response": "E"}
    template = "{{item.user_content}} / {{ sample.output_text }} / {{ item.expected_response }} {% raw %}"
    assert render(template, item) == "q / A / E {% raw %}"
    assert render("{{ item.expected_response }}", {"actual_response": "A"}) == ""
    assert item_fields(template) == {"user_content", "actual_response", "expected_response"}
    assert for_evals_api(template) == (
        "{{ item.user_content }} / {{ item.actual_response }} / {{ item.expected_response }} {% raw %}"
    )


def test_needs_expected_follows_the_templates():
    assert validate({"type": "text_similarity", "evaluation_metric": "bleu"}).grader.needs_expected
    assert not validate(LABEL).grader.needs_expected
    with_reference = {**LABEL, "input": [{"role": "user", "content": "{{ item.expected_response }}"}]}
    assert validate(with_reference).grader.needs_expected


def test_turns_pair_by_position(case):
    turns, note = build_turns(case(["a1", "a2", "a3"], ["e1", None]), needs_expected=True)
    assert [(t.position, t.item["expected_response"]) for t in turns] == [(0, "e1")]
    assert note == "turn(s) 2, 3 have no expected response and were not graded"

    turns, note = build_turns(case(["a1"], ["e1", "e2"]), needs_expected=True)
    assert [t.item for t in turns] == [
        {"user_content": "question 1", "actual_response": "a1", "expected_response": "e1"}
    ]
    assert note == "the eval case expects 2 turns; the trace has 1"

    turns, note = build_turns(case(["a1", None], None), needs_expected=False)
    assert [t.item["actual_response"] for t in turns] == ["a1", ""] and note is None


def test_turns_that_cannot_be_graded(case):
    assert build_turns(case([], ["e"]), needs_expected=True) == ([], "the trace has no agent turns to grade")
    turns, note = build_turns(case(["a"], None), needs_expected=True)
    assert turns == [] and note.startswith("no expected responses: the grader compares against")
    turns, note = build_turns(case(["a"], [None]), needs_expected=True)
    assert turns == [] and note == (
        "no turn has an expected response to compare with: turn(s) 1 have no expected response and were not graded"
    )


@pytest.mark.parametrize(
    ("grader", "entry", "use"),
    [
        (LABEL, {}, "grader label_model"),
        (
            {"type": "score_model", "model": "m", "input": [{"role": "user", "content": "x"}]},
            {},
            "grader score_model",
        ),
        ({"type": "text_similarity", "evaluation_metric": "cosine"}, {}, "evaluation_metric cosine"),
        ({"type": "text_similarity", "evaluation_metric": "bleu"}, {"mode": "evals_api"}, "mode evals_api"),
    ],
)
def test_api_entries_without_the_openai_extra_load_and_name_the_install_command(build, monkeypatch, grader,
                                                                                 entry, use):
    """One rule for a missing extra: the entry loads, and is NOT_EVALUATED with the install command."""
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name.startswith("openai") else real(name, *a)
    )
    evaluator = build(grader, **entry)
    assert evaluator.missing_dependency() == (
        f"{use} calls an OpenAI-compatible API and needs the 'openai' extra: pip install \"agentevals-cli[openai]\""
    )


@pytest.mark.parametrize("metric", ["fuzzy_match", "bleu", "gleu", "meteor", "rouge_1", "rouge_l"])
def test_local_text_metrics_need_no_openai(build, monkeypatch, metric):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name.startswith("openai") else real(name, *a)
    )
    build({"type": "text_similarity", "evaluation_metric": metric})
    build({"type": "string_check", "operation": "ilike"})


def test_runner_deadline_leaves_room_for_cleanup(build):
    assert build({"type": "string_check", "operation": "eq"}, timeout=10).timeout == 16.0
