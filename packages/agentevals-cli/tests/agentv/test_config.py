"""The family in eval_config.yaml: both spellings, AgentV's auto names, and one-line config errors."""

from __future__ import annotations

from typing import Any

import pytest
from agentevals.config.loader import parse_config
from agentevals.errors import ConfigError
from agentevals.evaluators import EVALUATOR_TYPES

TWELVE = ["code_judge", "llm_judge", "rubric", "composite", "tool_trajectory", "field_accuracy", "execution_metrics",
          "skill_trigger", "contains", "regex", "is_json", "equals"]
MORE_ASSERTIONS = ["contains_any", "contains_all", "icontains", "icontains_any", "icontains_all", "starts_with",
                   "ends_with"]


def load(av: Any, text: str) -> list[Any]:
    return [e.evaluator for e in parse_config(text, source="eval_config.yaml", base_dir=av.data).evaluators]


def test_twelve_types_by_name_and_both_spellings() -> None:
    for name in TWELVE + MORE_ASSERTIONS:
        cls = EVALUATOR_TYPES.get(name)
        assert cls.name == name
        if "_" in name:
            assert EVALUATOR_TYPES.get(name.replace("_", "-")) is cls
    assert EVALUATOR_TYPES.get("rubrics") is EVALUATOR_TYPES.get("rubric")


def test_auto_names_for_assertions(av: Any) -> None:
    evaluators = load(av, """
evaluators:
  - type: contains
    value: DENIED
  - type: regex
    value: "Good (morning|afternoon|evening) to everyone here"
  - type: is-json
  - type: equals
    value: 42
  - type: skill-trigger
    skill: commit
  - type: tool_trajectory
    mode: any_order
    minimums: {search: 1}
""")
    assert [e.config.name for e in evaluators] == [
        "contains-DENIED", "regex-Good (morning|afternoon|evenin", "is-json", "equals-42", "skill-trigger-commit",
        "tool_trajectory"]


def test_auto_names_for_the_other_assertion_kinds(av: Any) -> None:
    evaluators = load(av, """
evaluators:
  - {type: contains_any, value: [a, b]}
  - {type: contains-all, value: [a, b, c]}
  - {type: icontains, value: Paris}
  - {type: icontains_any, value: [a]}
  - {type: icontains-all, value: [a, b]}
  - {type: starts_with, value: The}
  - {type: ends-with, value: "."}
""")
    assert [e.config.name for e in evaluators] == [
        "contains-any-2", "contains-all-3", "icontains-Paris", "icontains-any-1", "icontains-all-2", "starts-with-The",
        "ends-with-."]


def test_duplicate_auto_names_are_reported(av: Any) -> None:
    with pytest.raises(ConfigError, match=r"eval_config.yaml:5:5: duplicate evaluator name 'is-json'"):
        load(av, "evaluators:\n  - type: is_json\n    weight: 2\n\n  - type: is-json\n")


@pytest.mark.parametrize(("entry", "message"), [
    ("type: contains\n    value: y\n    valeu: x", "unknown key 'valeu' in evaluators[0] (did you mean 'value'?)"),
    ("type: tool_trajectory\n    mode: in_order", "mode in_order needs 'expected'"),
    ("type: tool_trajectory\n    mode: sideways\n    expected: []", "mode: Input should be 'any_order'"),
    ("type: execution_metrics\n    exploration_tolerance: 0.1", "set at least one of max_tool_calls"),
    ("type: regex\n    value: '(unclosed'", "invalid regex '(unclosed'"),
    ("type: regex\n    value: a\n    flags: x", "unknown regex flag(s) 'x'"),
    ("type: contains_any\n    value: Paris", "value: Input should be a valid list"),
    ("type: icontains-all\n    value: []", "value: List should have at least 1 item"),
    ("type: starts_with\n    value: ''", "value: String should have at least 1 character"),
    ("type: field_accuracy\n    fields: [{path: a, match: fuzzy}]", "fields[0].match"),
    ("name: c\n    type: composite\n    aggregator: {type: safety_gate}\n    evaluators: [{type: is_json}]",
     "'safety_gate' is not an aggregator type"),
    ("name: c\n    type: composite\n    aggregator: {type: threshold}\n    evaluators: [{type: is_json}]",
     "aggregator type threshold needs 'threshold'"),
    ("name: c\n    type: composite\n    aggregator: {type: weighted_average}\n    evaluators: [{type: contains}]",
     "member 1: value: Field required"),
    ("name: c\n    type: composite\n    aggregator: {type: weighted_average}\n    evaluators: [{type: containz, value: x}]",
     "member 1: unknown evaluator type 'containz' (did you mean 'contains'?)"),
    ("name: c\n    type: composite\n    aggregator: {type: weighted_average}\n    evaluators: [{type: is_json}, {type: is_json}]",
     "member 2: duplicate member name 'is-json'"),
    ("name: j\n    type: code_judge\n    command: [python, judges/missing.py]", "code judge script not found"),
    ("name: j\n    type: llm_judge\n    prompt: prompts/missing.md", "prompt file not found"),
    ("type: contains\n    value: x\n    required: 2", "required must be true or a number in (0, 1]"),
])
def test_config_errors_are_one_line(av: Any, entry: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(av, f"evaluators:\n  - {entry}\n")
    assert message in str(info.value)
    assert str(info.value).startswith("eval_config.yaml:")
    assert "\n" not in str(info.value)


def test_nameless_non_assertion_types_take_their_type_as_name(av: Any) -> None:
    [evaluator] = load(av, "evaluators:\n  - type: field-accuracy\n    fields: [{path: a}]\n")
    assert evaluator.config.name == "field-accuracy"


def test_composite_members_are_checked_at_load(av: Any) -> None:
    with pytest.raises(ConfigError, match="member 'j': code judge script not found"):
        load(av, """
evaluators:
  - name: gate
    type: composite
    aggregator: {type: weighted_average}
    evaluators:
      - {name: j, type: code_judge, command: [python, judges/nope.py]}
""")


def test_agentv_4_and_5_types_load_from_eval_config(tmp_path):
    """AgentV's later spellings run from eval_config.yaml as the v2.19 types they stand for."""
    from agentevals.config import parse_config

    (tmp_path / "judges").mkdir()
    (tmp_path / "judges" / "fmt.py").write_text("")
    text = """
evaluators:
  - {type: skill-used, value: csv-analyzer}
  - {type: not-skill-used, value: {name: pdf}}
  - {type: llm-rubric, metric: polite, value: Is polite}
  - {type: llm-rubric, metric: checklist, value: [Names Paris, {outcome: One sentence}]}
  - {type: script, metric: fmt, command: [python, judges/fmt.py], value: {strict: true}}
  - {type: code-grader, name: fmt2, command: [python, judges/fmt.py]}
  - {type: contains, metric: has-paris, value: Paris}
"""
    config = parse_config(text, source="eval_config.yaml", base_dir=tmp_path)
    got = [(type(e.evaluator).__name__, e.evaluator.config.name) for e in config.evaluators]
    assert got == [("SkillTriggerEvaluator", "skill-trigger-csv-analyzer"), ("SkillTriggerEvaluator", "skill-trigger-pdf"),
                   ("LlmJudgeEvaluator", "polite"), ("LlmJudgeEvaluator", "checklist"),
                   ("CodeJudgeEvaluator", "fmt"), ("CodeJudgeEvaluator", "fmt2"), ("ContainsEvaluator", "has-paris")]
    skills = [e.evaluator.config for e in config.evaluators[:2]]
    assert [(c.skill, c.should_trigger) for c in skills] == [("csv-analyzer", True), ("pdf", False)]
    assert config.evaluators[2].evaluator.config.criteria == "Is polite"  # the grader's criteria, not its prompt
    assert config.evaluators[2].evaluator.config.prompt is None
    assert [r.outcome for r in config.evaluators[3].evaluator.config.rubrics] == ["Names Paris", "One sentence"]
    assert config.evaluators[4].evaluator.config.command == ["python", "judges/fmt.py"]
    assert config.evaluators[4].evaluator.config.config == {"value": {"strict": True}}  # AgentV 5: config.value
