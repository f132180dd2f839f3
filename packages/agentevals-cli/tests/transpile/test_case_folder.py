"""``tests: ./cases/`` in an EVAL.yaml: a folder of tests, read as AgentV's ``loadCasesFromDirectory`` reads it.

AgentV (since #1142): each immediate subfolder, in name order, holding ``case.yaml`` (else ``case.yml``) is one
test whose ``id`` defaults to the subfolder's name; a subfolder without one is skipped with a warning; files
directly in the folder are not tests.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from agentevals.cli import cli
from click.testing import CliRunner


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip(), "utf-8")


def make_suite(root: Path) -> Path:
    write(root / "EVAL.yaml", """
        assertions:
          - type: contains
            value: Paris
        tests: ./cases/
    """)
    write(root / "cases" / "b-weather" / "case.yaml", """
        input: What's the weather in Paris?
        criteria: Gives the weather
    """)
    write(root / "cases" / "a-capital" / "case.yml", """
        id: capital-of-france
        input: What is the capital of France?
        expected_output: Paris.
    """)
    write(root / "cases" / "B-upper" / "case.yaml", "input: Upper case sorts first\ncriteria: c\n")
    write(root / "cases" / "notes" / "README.md", "not a test\n")  # no case.yaml: skipped with a warning
    write(root / "cases" / "stray.yaml", "- id: not-a-test\n  input: x\n")  # a file in the folder: not a test
    return root / "EVAL.yaml"


def test_transpile_reads_a_tests_folder_in_agentvs_order(tmp_path):
    suite = make_suite(tmp_path)
    result = CliRunner().invoke(cli, ["transpile", str(suite), "--stdout"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    evals = json.loads(result.stdout)["evals"]
    assert [e["prompt"] for e in evals] == [
        "Upper case sorts first", "What is the capital of France?", "What's the weather in Paris?"]
    assert evals[1]["expected_output"] == "Paris."
    assert "Output contains 'Paris'" in " ".join(evals[2]["assertions"])
    assert f"{tmp_path / 'cases'}: skipping folder 'notes': no case.yaml found" in result.stderr


def test_eval_prompt_lists_the_folder_names_as_ids(tmp_path):
    suite = make_suite(tmp_path)
    result = CliRunner().invoke(cli, ["eval", "prompt", "eval", "--list", str(suite)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["test_ids"] == ["B-upper", "b-weather", "capital-of-france"]


def test_a_case_file_that_is_not_a_mapping_names_itself(tmp_path):
    write(tmp_path / "EVAL.yaml", "tests: ./cases\n")
    write(tmp_path / "cases" / "one" / "case.yaml", "- input: a list, not one test\n")
    result = CliRunner().invoke(cli, ["transpile", str(tmp_path / "EVAL.yaml"), "--stdout"])
    assert result.exit_code == 1
    assert f"{tmp_path / 'cases' / 'one' / 'case.yaml'}:1:1: a case file must hold a mapping (one test), got a list" \
        in result.output
