"""``agentevals eval prompt eval``: --list / --input / --expected-output JSON and the grading brief."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentevals.cli import cli
from agentevals.transpile._prompt import load_prompt_suite
from click.testing import CliRunner

DATA = Path(__file__).resolve().parent.parent / "data" / "transpile"

SAMPLE = """\
description: Prompt eval CLI fixture

tests:
  - id: greeting-test
    criteria: Assistant greets the user by name
    assertions:
      - name: mentions-name
        type: contains
        value: Taylor
    input:
      - role: user
        content: Say hello to Taylor.
    expected_output:
      - role: assistant
        content: Hello, Taylor!
  - id: farewell-test
    criteria: Assistant says goodbye politely
    input:
      - role: user
        content: Say goodbye to Taylor.
    expected_output:
      - role: assistant
        content: Goodbye, Taylor.
  - id: incomplete
    input: nothing to grade against
"""


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    path = tmp_path / "suite" / "sample.eval.yaml"
    path.parent.mkdir()
    path.write_text(SAMPLE, "utf-8")
    return path


def run(*args: str):
    return CliRunner().invoke(cli, ["eval", "prompt", "eval", *args], catch_exceptions=False)


def test_list_prints_sorted_ids_of_complete_tests(sample):
    result = run("--list", str(sample))
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {
        "eval_path": str(sample.resolve()),
        "test_ids": ["farewell-test", "greeting-test"],
    }
    assert "skipping incomplete test 'incomplete'" in result.stderr


def test_input_view(sample):
    result = run("--input", str(sample), "--test-id", "greeting-test")
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {
        "test_id": "greeting-test",
        "input": [{"role": "user", "content": "Say hello to Taylor."}],
        "guideline_paths": [],
        "criteria": "Assistant greets the user by name",
    }


def test_expected_output_view(sample):
    result = run("--expected-output", str(sample), "--test-id", "greeting-test")
    assert result.exit_code == 0
    assert result.stdout == (
        '{\n  "test_id": "greeting-test",\n  "criteria": "Assistant greets the user by name",\n'
        '  "expected_output": [\n    {\n      "role": "assistant",\n      "content": "Hello, Taylor!"\n    }\n  ],\n'
        '  "reference_answer": "Hello, Taylor!",\n'
        '  "assertions": [\n    {\n      "name": "mentions-name",\n      "type": "contains",\n      "value": "Taylor"\n    }\n  ]\n}\n'
    )


BRIEF_SUITE = """\
input:
  - role: system
    content:
      - {type: file, value: guide.md}
      - {type: text, value: Follow the guide.}
assertions:
  - {type: latency, threshold: 5000}
tests:
  - id: csv-top-months
    criteria: Agent finds the top 3 months by revenue
    input:
      - role: user
        content:
          - {type: file, value: evals/files/sales.csv}
          - {type: text, value: I have a CSV of monthly sales data.}
          - {type: text, value: Find the top 3 months by revenue.}
    expected_output: "The top 3 months by revenue are November ($22,500), September ($20,100), and December ($19,400)."
    assertions:
      - {type: skill-trigger, skill: csv-analyzer, should_trigger: true}
      - {type: contains, value: "$22,500"}
      - type: code-judge
        name: format-checker
        description: Validates output CSV format
        command: [bun, run, .agentv/judges/format-checker.ts]
      - {type: llm_judge, prompt: The answer is clear and concise}
      - Mentions November first
      - {type: rubrics, criteria: [{id: r1, outcome: Uses a table}, Cites the CSV]}
      - {type: regex, value: "\\\\$[0-9,]+"}
  - id: bare
    input: Hi
    expected_output: {greeting: hello}
    execution: {skip_defaults: true}
"""


@pytest.fixture
def brief_suite(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "guide.md").write_text("guide", "utf-8")
    (tmp_path / "evals" / "files").mkdir(parents=True)
    (tmp_path / "evals" / "files" / "sales.csv").write_text("m,r\n", "utf-8")
    path = tmp_path / "evals" / "dataset.eval.yaml"
    path.write_text(BRIEF_SUITE, "utf-8")
    return path


def test_grading_brief_has_input_expected_and_tagged_criteria(brief_suite):
    result = run("--grading-brief", str(brief_suite), "--test-id", "csv-top-months")
    assert result.exit_code == 0, result.output
    sales = brief_suite.parent / "files" / "sales.csv"
    assert result.stdout == (
        'Input: "I have a CSV of monthly sales data. Find the top 3 months by revenue."\n'
        f"Files: {sales.resolve()}\n"
        'Expected: "The top 3 months by revenue are November ($22,500), September ($20,100), and December ($19,400)."\n'
        "Criteria:\n"
        "  - Agent finds the top 3 months by revenue\n"
        "  - [skill-trigger] should_trigger: true for csv-analyzer\n"
        "  - Output contains '$22,500'\n"
        "  - [code-judge] format-checker: Validates output CSV format\n"
        "  - [llm-judge] The answer is clear and concise\n"
        "  - Mentions November first\n"
        "  - Uses a table\n"
        "  - Cites the CSV\n"
        "  - [regex] \\$[0-9,]+\n"
        "  - [latency] Response time under 5000ms\n"
    )


def test_grading_brief_skip_defaults_and_object_expected(brief_suite):
    result = run("--grading-brief", str(brief_suite), "--test-id", "bare")
    assert result.stdout == 'Input: "Hi"\nExpected: "{\n  "greeting": "hello"\n}"\n'


def test_input_view_prepends_suite_input_and_resolves_files(brief_suite):
    result = run("--input", str(brief_suite), "--test-id", "csv-top-months")
    data = json.loads(result.stdout)
    guide = str((brief_suite.parent.parent / "guide.md").resolve())
    assert data["guideline_paths"] == [guide]
    assert data["input"][0] == {
        "role": "system",
        "content": [{"type": "file", "path": guide}, {"type": "text", "value": "Follow the guide."}],
    }
    assert data["input"][1]["content"][0] == {
        "type": "file",
        "path": str((brief_suite.parent / "files" / "sales.csv").resolve()),
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--list", "--input"],
            "Error: specify exactly one of --list, --input, --expected-output or --grading-brief\n",
        ),
        ([], "Error: specify exactly one of --list, --input, --expected-output or --grading-brief\n"),
        (
            ["--grading-brief"],
            "Error: --test-id is required with --input, --expected-output and --grading-brief\n",
        ),
        (
            ["--grading-brief", "--test-id", "nope"],
            "Error: {path}: no test with id 'nope'; tests: csv-top-months, bare\n",
        ),
    ],
)
def test_usage_errors_exit_2(args, message, brief_suite, capsys):
    from agentevals.cli import main

    with pytest.raises(SystemExit) as info:
        main(["eval", "prompt", "eval", str(brief_suite), *args])
    assert info.value.code == 2
    assert capsys.readouterr().err == message.format(path=brief_suite)


def test_grading_brief_of_the_eval_assert_demo_names_its_code_judges():
    result = run(
        "--grading-brief",
        str(DATA / "eval-assert-demo/evals/dataset.eval.yaml"),
        "--test-id",
        "capital-of-france",
    )
    assert result.stdout.splitlines()[-3:] == [
        "  - [code-judge] keyword-check: Checks that the answer mentions Paris and France",
        "  - [code-judge] length-check: Ensures answer is between 5 and 50 words",
        "  - Output contains 'Paris'",
    ]


def test_agentv_5_suite_grading_brief_with_included_tests():
    path = Path(__file__).resolve().parent.parent / "data" / "transpile" / "agentv-5" / "csv-analyzer.EVAL.yaml"
    suite = load_prompt_suite(path)
    assert suite.warnings == []
    assert [t.id for t in suite.tests] == ["csv-top-months", "irrelevant-query", "quarterly-totals", "json-export",
                                           "no-skill-greeting"]
    assert suite.grading_brief("csv-top-months").splitlines() == [
        'Input: "I have a CSV of monthly sales data. Find the top 3 months by revenue."',
        'Expected: "The top 3 months by revenue are November ($22,500), September ($20,100), and December ($19,400)."',
        "Criteria:",
        "  - [skill-trigger] should_trigger: true for csv-analyzer",
        "  - [llm-judge] Output identifies November as the highest revenue month",
        "  - Output contains '$22,500'",
        "  - [code-judge] format-checker: Validates output CSV format",
    ]
