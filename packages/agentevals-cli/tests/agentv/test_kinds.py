"""The AgentV assertion table (``evaluators.agentv._kinds``): every consumer reads it, so a new kind is one row.

The acceptance test adds a row in a fresh interpreter (``add_assertion_kind``, the documented hook) and
drives the real CLI there: the new ``type:`` scores in ``agentevals run``, ``eval assert`` knows it,
``transpile`` writes its sentence and ``eval prompt`` names it and briefs it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from agentevals.evaluators import EVALUATOR_TYPES
from agentevals.evaluators.agentv import (
    ASSERTION_KINDS,
    AssertionKind,
    add_assertion_kind,
    assertions,
    find_assertion_kind,
)
from agentevals.judges import builtin_assertion_names, run_assertion
from agentevals.transpile import assertion_to_natural_language

ADK = Path(__file__).resolve().parents[1] / "data" / "adk"
HELM, EVAL_SET = str(ADK / "helm.json"), str(ADK / "eval_set_helm.json")


def test_every_spelling_of_every_row_is_an_evaluator_type_scoring_that_row() -> None:
    assert {"contains", "contains-any", "icontains-all", "starts-with", "regex", "is-json", "equals"} <= set(ASSERTION_KINDS)
    for row in ASSERTION_KINDS.values():
        for spelling in row.spellings:
            cls = EVALUATOR_TYPES.get(spelling)
            assert (cls.kind, cls.name, cls.__name__) == (row, row.type_name, row.class_name), spelling
            assert cls is getattr(assertions, row.class_name)
            assert find_assertion_kind(spelling) is row


def test_eval_assert_names_are_the_table() -> None:
    assert builtin_assertion_names() == sorted(ASSERTION_KINDS)
    assert builtin_assertion_names()[:3] == ["contains", "contains-all", "contains-any"]


def test_a_row_reports_its_spellings_and_class() -> None:
    row = ASSERTION_KINDS["icontains-any"]
    assert (row.type_name, row.spellings, row.class_name) == (
        "icontains_any", ("icontains_any", "icontains-any"), "IcontainsAnyEvaluator")
    assert row.instruction is None  # AgentV v2.19 renders it as "icontains-any assertion"
    assert assertion_to_natural_language({"type": "icontains-any", "value": ["a"]}) == ["icontains-any assertion"]


def test_a_spelling_of_another_kind_or_evaluator_type_is_refused() -> None:
    with pytest.raises(ValueError, match="assertion kind 'is-json' already exists"):
        add_assertion_kind(AssertionKind("is-json", "none", "is_json", "x", None, "x"))
    with pytest.raises(ValueError, match="assertion kind 'json': 'is_json' is kind 'is-json'"):
        add_assertion_kind(AssertionKind("json", "none", "is_json", "x", None, "x", aliases=("is_json",)))
    with pytest.raises(ValueError, match=r"name it in AgentV's kebab-case \('is-valid'\)"):
        add_assertion_kind(AssertionKind("is_valid", "none", "is_json", "x", None, "x"))
    judge = AssertionKind("code-judge", "none", "is_json", "x", None, "x")
    with pytest.raises(ValueError, match="evaluator type code_judge, code-judge already exists"):
        add_assertion_kind(judge)
    assert "code-judge" not in ASSERTION_KINDS


# A program that adds one row, then is the agentevals CLI: what a row added to the table in the source does.
_WITH_ROW = '''
import sys
from agentevals.evaluators.agentv import AssertionKind, add_assertion_kind

add_assertion_kind(AssertionKind(
    "contains-none", "strings", "my_checks:contains_none", "contains-none-{value_count}",
    "Output contains none of: '{values}'", "The answer contains none of ``value``."))

from agentevals.cli import main

sys.exit(main(sys.argv[1:]))
'''

_CHECK = '''
from agentevals.evaluators.agentv._checks import Check


def contains_none(output, values):
    found = [v for v in values if v in output]
    return Check(not found, "Output contains none of the strings", "Output contains: " + ", ".join(found))
'''


def _cli(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "with_row.py").write_text(_WITH_ROW)
    (tmp_path / "my_checks.py").write_text(_CHECK)
    return subprocess.run([sys.executable, str(tmp_path / "with_row.py"), *argv], capture_output=True, text=True,
                          cwd=tmp_path, timeout=120)


def test_one_row_is_an_eval_config_type(tmp_path: Path) -> None:
    (tmp_path / "eval_config.yaml").write_text(textwrap.dedent("""\
        evaluators:
          - type: contains_none
            value: [sorry, apolog]
          - type: contains-none
            value: [kagent]
        """))
    proc = _cli(tmp_path, "run", HELM, "--eval-set", EVAL_SET, "--config", "eval_config.yaml", "-o", "json")
    (case,) = json.loads(proc.stdout)["cases"]
    metrics = [(m["name"], m["type"], m["status"], m["score"], m["hits"], m["misses"]) for m in case["metrics"]]
    assert metrics == [
        ("contains-none-2", "contains_none", "PASSED", 1.0, ["Output contains none of the strings"], []),
        ("contains-none-1", "contains_none", "FAILED", 0.0, [], ["Output contains: kagent"]),
    ]
    assert proc.returncode == 1


def test_one_row_is_an_eval_assert_builtin(tmp_path: Path) -> None:
    proc = _cli(tmp_path, "eval", "assert", "contains_none", "--agent-output", "all good", "--value", "bad",
                "--value", "worse")
    assert (proc.returncode, json.loads(proc.stdout)) == (0, {
        "score": 1.0, "reasoning": "Output contains none of the strings",
        "hits": ["Output contains none of the strings"], "misses": []})
    proc = _cli(tmp_path, "eval", "assert", "contains-none", "--agent-output", "all good")
    assert proc.returncode == 2
    assert proc.stderr == "Error: assertion 'contains-none' needs --value (one or more strings), got None\n"


def _eval_yaml(tmp_path: Path) -> Path:
    path = tmp_path / "EVAL.yaml"
    path.write_text(textwrap.dedent("""\
        tests:
          - id: polite
            input: Say hello
            criteria: A greeting
            assertions:
              - type: contains_none
                value: [sorry, error]
        """))
    return path


def test_one_row_is_transpiled(tmp_path: Path) -> None:
    _eval_yaml(tmp_path)
    proc = _cli(tmp_path, "transpile", "EVAL.yaml", "--out-dir", "out")
    assert proc.returncode == 0, proc.stderr
    (case,) = json.loads((tmp_path / "out" / "evals.json").read_text())["evals"]
    assert case["assertions"] == ["A greeting", "Output contains none of: 'sorry', 'error'"]


def test_one_row_is_named_and_briefed_by_eval_prompt(tmp_path: Path) -> None:
    _eval_yaml(tmp_path)
    proc = _cli(tmp_path, "eval", "prompt", "eval", "EVAL.yaml", "--expected-output", "--test-id", "polite")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["assertions"] == [
        {"name": "contains-none-2", "type": "contains-none", "value": ["sorry", "error"]}]
    proc = _cli(tmp_path, "eval", "prompt", "eval", "EVAL.yaml", "--grading-brief", "--test-id", "polite")
    assert proc.stdout.splitlines()[-2:] == ["  - A greeting", "  - [contains-none] sorry,error"]


def test_without_the_row_the_type_is_unknown(tmp_path: Path) -> None:
    with pytest.raises(Exception, match="unknown judge 'contains-none'"):
        run_assertion("contains-none", output="x", config={"value": ["y"]}, start=tmp_path)
