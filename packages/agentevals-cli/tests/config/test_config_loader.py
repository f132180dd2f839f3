"""eval_config.yaml: strict, with file:line:col, suggestions, and everything reported before running."""

from __future__ import annotations

import json
import textwrap

import jsonschema
import pytest
import yaml
from agentevals.config import config_json_schema, load_config
from agentevals.errors import ConfigError


def write(tmp_path, text: str):
    path = tmp_path / "eval_config.yaml"
    path.write_text(textwrap.dedent(text).lstrip())
    return path


def error_lines(tmp_path, text: str) -> list[str]:
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert info.value.exit_code == 2
    return [line.replace(str(path), "CFG") for line in str(info.value).splitlines()]


def test_misspelt_key_names_line_and_suggests(tmp_path):
    lines = error_lines(tmp_path, """
        evaluators:
          - name: traj
            type: builtin
            treshold: 0.7
    """)
    assert lines == ["CFG:4:5: unknown key 'treshold' in evaluator 'traj' (did you mean 'threshold'?)"]


def test_unknown_type_and_metric_and_duplicates_all_reported(tmp_path):
    lines = error_lines(tmp_path, """
        evaluators:
          - name: a
            type: bulitin
          - name: tool_trajectory_avg_scor
            type: builtin
          - name: response_match_score
            type: builtin
          - name: response_match_score
            type: builtin
    """)
    assert lines[0].startswith("CFG:3:5: evaluator 'a': unknown evaluator type 'bulitin' (did you mean 'builtin'?); known: ")
    assert lines[1].startswith("CFG:4:5: evaluator 'tool_trajectory_avg_scor': unknown builtin metric "
                               "'tool_trajectory_avg_scor' (did you mean 'tool_trajectory_avg_score'?)")
    assert lines[2] == "CFG:8:5: duplicate evaluator name 'response_match_score' (first defined at CFG:6:5)"
    assert len(lines) == 3


def test_values_are_validated_with_the_value(tmp_path):
    lines = error_lines(tmp_path, """
        evaluators:
          - name: response_match_score
            type: builtin
            threshold: 1.5
          - name: tool_trajectory_avg_score
            type: builtin
            trajectory_match_type: sideways
    """)
    assert lines[0] == "CFG:4:5: evaluator 'response_match_score': threshold: Input should be less than or equal to 1 (got 1.5)"
    assert lines[1].startswith("CFG:7:5: evaluator 'tool_trajectory_avg_score': trajectory_match_type: Input should be")


def test_missing_type_and_non_mapping_entries(tmp_path):
    lines = error_lines(tmp_path, """
        evaluators:
          - name: x
          - just a string
    """)
    assert lines[0].startswith("CFG:2:5: evaluator 'x' has no 'type' (one of: ")
    assert lines[1] == "CFG:3:5: evaluators[1] must be a mapping with 'name' and 'type'"


def test_unknown_top_level_key(tmp_path):
    lines = error_lines(tmp_path, """
        evaluator:
          - name: x
            type: builtin
    """)
    assert lines == ["CFG:1:1: unknown key 'evaluator' in the config (did you mean 'evaluators'?)"]


def test_invalid_yaml_names_position(tmp_path):
    lines = error_lines(tmp_path, "evaluators:\n  - name: [unclosed\n")
    assert lines[0].startswith("CFG:3:1: invalid YAML:")


def test_duplicate_yaml_key(tmp_path):
    lines = error_lines(tmp_path, "evaluators:\n  - name: a\n    name: b\n    type: builtin\n")
    assert lines == ["CFG:3:5: invalid YAML: duplicate key 'name'"]


def test_unsupported_metric_and_rubrics_on_wrong_metric(tmp_path):
    lines = error_lines(tmp_path, """
        evaluators:
          - name: per_turn_user_simulator_quality_v1
            type: builtin
          - name: response_match_score
            type: builtin
            rubrics: [be nice]
    """)
    assert "is not supported: it scores a simulated user" in lines[0]
    assert lines[1] == "CFG:4:5: evaluator 'response_match_score': builtin metric 'response_match_score' does not take rubrics"


def test_valid_config_loads_in_order_with_settings(tmp_path):
    config = load_config(write(tmp_path, """
        fail_on_evaluation_error: true
        pass_at_k: [1, 2]
        evaluators:
          - name: response_match_score
            type: builtin
            threshold: 0.6
            weight: 2
            required: true
          - name: tool_trajectory_avg_score
            type: builtin
            trajectory_match_type: IN-ORDER
    """))
    assert [e.evaluator.config.name for e in config.evaluators] == ["response_match_score", "tool_trajectory_avg_score"]
    first = config.evaluators[0].evaluator.config
    assert (first.threshold, first.weight, first.gate) == (0.6, 2.0, 0.8)
    assert config.evaluators[1].evaluator.config.trajectory_match_type == "in_order"
    assert config.settings.fail_on_evaluation_error is True and config.settings.pass_at_k == [1, 2]
    assert config.evaluators[0].where.endswith(":4:5")


def test_empty_config_is_fine(tmp_path):
    assert load_config(write(tmp_path, "")).evaluators == []


def test_missing_config_file(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_config(tmp_path / "nope.yaml")


def test_published_json_schema_validates_a_real_config_and_rejects_typos():
    schema = config_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    good = yaml.safe_load("evaluators:\n  - name: tool_trajectory_avg_score\n    type: builtin\n    threshold: 0.9\n")
    assert validator.is_valid(good)
    bad = yaml.safe_load("evaluators:\n  - name: x\n    type: builtin\n    treshold: 0.9\n")
    assert not validator.is_valid(bad)
    assert json.dumps(schema)


def test_nested_unknown_key_names_its_own_line_and_suggests(tmp_path):
    lines = error_lines(tmp_path, """
        evaluators:
          - name: crit
            type: rubric
            rubrics:
              - id: accuracy
                outcome: Answer is factually correct
                wieght: 3.0
    """)
    assert lines == ["CFG:7:9: unknown key 'wieght' in evaluator 'crit' at rubrics[0].wieght (did you mean 'weight'?)"]


def test_run_settings_values_are_validated(tmp_path):
    lines = error_lines(tmp_path, """
        trajectory_match_type: fuzzy
        pass_at_k: [2, 0]
        evaluators:
          - name: tool_trajectory_avg_score
            type: builtin
    """)
    assert lines == [
        "CFG:1:1: the config: trajectory_match_type: Input should be 'exact', 'in_order' or 'any_order' (got 'fuzzy')",
        "CFG:2:16: the config: pass_at_k[1]: Input should be greater than or equal to 1 (got 0)",
    ]


def test_config_that_is_a_list_says_so_in_plain_words(tmp_path):
    assert error_lines(tmp_path, "- name: a\n- name: b\n") == [
        "CFG: the config must be a mapping with an 'evaluators' list, got a list"]


def _shipped_configs() -> list:
    from pathlib import Path

    repo = Path(__file__).resolve().parents[4]
    found = []
    for path in sorted([*(repo / "examples").rglob("*.yaml"), *(repo / "packages").rglob("tests/**/*.yaml")]):
        text = path.read_text("utf-8")
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError:
            continue  # the loader's own error tests
        if isinstance(document, dict) and isinstance(document.get("evaluators"), list) and "index.yaml" not in text[:80]:
            found.append(path)
    return found


def test_config_schema_and_config_validate_agree_on_every_shipped_config():
    """What `agentevals config validate` accepts, `agentevals config schema` accepts (docs configs: tests/docs)."""
    validator = jsonschema.Draft202012Validator(config_json_schema())
    checked = []
    for path in _shipped_configs():
        try:
            load_config(path)
        except ConfigError:
            continue  # written to be rejected (or needs files the test creates)
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(
            yaml.safe_load(path.read_text("utf-8")))]
        assert not errors, f"{path}: the schema rejects what the loader accepts: {errors}"
        checked.append(path.name)
    assert {"eval_config.yaml", "eval_config_agentv.yaml", "eval_config_python.yaml", "helm_mixed.yaml"} <= set(checked)


def test_unnamed_agentv_assertions_are_valid_in_the_schema_too():
    validator = jsonschema.Draft202012Validator(config_json_schema())
    document = {"evaluators": [{"type": "contains", "value": "DENIED"}]}
    assert validator.is_valid(document)
    assert load_config_text(document).evaluators[0].evaluator.config.name == "contains-DENIED"
    assert not validator.is_valid({"evaluators": [{"type": "code", "path": "x.py"}]})  # code entries need a name


def load_config_text(document):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "eval_config.yaml"
        path.write_text(yaml.safe_dump(document))
        return load_config(path)
