"""``agentevals transpile``: golden files for re-created AgentV example suites, layout, errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from agentevals.cli import cli, main
from agentevals.transpile._js import js_stringify
from click.testing import CliRunner

DATA = Path(__file__).resolve().parent.parent / "data" / "transpile"
GOLDEN = DATA / "golden"
SUITES = [
    "agent-skills/csv-analyzer.EVAL.yaml",
    "eval-assert-demo/evals/dataset.eval.yaml",
    "assert-extended/dataset.eval.yaml",
    "multi-skill/skills.EVAL.yaml",
    "jsonl/dataset.jsonl",
    "external-tests/suite.eval.yaml",
    "field-accuracy/invoice.eval.yaml",
    "agentv-4/dataset.eval.yaml",  # code-grader / llm-grader (AgentV 4)
    "agentv-5/csv-analyzer.EVAL.yaml",  # assert / script / llm-rubric / skill-used / vars / file:// (AgentV 5)
    "agentv-5-graders/suite.yaml",  # metric, script command/description, llm-rubric text and items (AgentV 5)
]


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


@pytest.mark.parametrize("suite", SUITES)
def test_output_is_byte_identical_to_the_golden_files(suite, tmp_path):
    result = run("transpile", str(DATA / suite), "--out-dir", str(tmp_path))
    assert result.exit_code == 0, result.output
    golden_dir = GOLDEN / Path(suite).parent
    expected = sorted(p.name for p in golden_dir.glob("*.json"))
    assert sorted(p.name for p in tmp_path.iterdir()) == expected
    for name in expected:
        assert (tmp_path / name).read_bytes() == (golden_dir / name).read_bytes(), name
    assert sorted(result.stdout.splitlines()) == [f"Transpiled to {tmp_path / name}" for name in expected]


@pytest.mark.parametrize("golden", sorted(GOLDEN.rglob("*.json")), ids=lambda p: str(p.relative_to(GOLDEN)))
def test_golden_layout_is_json_stringify(golden):
    text = golden.read_text("utf-8")
    assert js_stringify(json.loads(text), indent=2) + "\n" == text


def test_default_output_is_next_to_the_input(tmp_path):
    src = tmp_path / "suite" / "csv-analyzer.EVAL.yaml"
    src.parent.mkdir()
    shutil.copy(DATA / "agent-skills/csv-analyzer.EVAL.yaml", src)
    result = run("transpile", str(src))
    assert result.exit_code == 0
    assert result.stdout == f"Transpiled to {src.parent / 'evals.json'}\n"
    assert (src.parent / "evals.json").read_bytes() == (GOLDEN / "agent-skills/evals.json").read_bytes()


def test_stdout_prints_the_single_file():
    result = run("transpile", str(DATA / "agent-skills/csv-analyzer.EVAL.yaml"), "--stdout")
    assert result.exit_code == 0
    assert result.stdout == (GOLDEN / "agent-skills/evals.json").read_text("utf-8")


def test_two_skills_write_two_skill_files(tmp_path):
    result = run("transpile", str(DATA / "multi-skill/skills.EVAL.yaml"), "-d", str(tmp_path))
    assert result.exit_code == 0
    files = {p.name: json.loads(p.read_text("utf-8")) for p in tmp_path.iterdir()}
    assert sorted(files) == ["csv-analyzer.evals.json", "pdf-reader.evals.json"]
    assert files["pdf-reader.evals.json"]["skill_name"] == "pdf-reader"
    assert [e["id"] for e in files["csv-analyzer.evals.json"]["evals"]] == [1, 2, 4, 3]
    written = [
        f"Transpiled to {tmp_path / name}" for name in ("pdf-reader.evals.json", "csv-analyzer.evals.json")
    ]
    assert result.stdout.splitlines() == written  # in the order the skills first appear


def test_stdout_refuses_several_skills(capsys):
    with pytest.raises(SystemExit) as info:
        main(["transpile", str(DATA / "multi-skill/skills.EVAL.yaml"), "--stdout"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("Error: --stdout needs a single skill but ")
        and "(pdf-reader, csv-analyzer); use --out-dir" in err
    )


def test_warnings_go_to_stderr():
    result = run("transpile", str(DATA / "external-tests/suite.eval.yaml"), "--stdout")
    assert result.exit_code == 0
    assert "Warning: " in result.stderr and "'assert' is deprecated at the suite level" in result.stderr
    assert result.stdout.startswith("{\n")


def test_several_inputs_into_one_dir_must_not_collide(tmp_path, capsys):
    inputs = [
        str(DATA / "agent-skills/csv-analyzer.EVAL.yaml"),
        str(DATA / "assert-extended/dataset.eval.yaml"),
    ]
    with pytest.raises(SystemExit) as info:
        main(["transpile", *inputs, "-d", str(tmp_path)])
    assert info.value.code == 2
    assert "would be written twice" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def invoke_main(args: list[str], capsys) -> tuple[int, str]:
    with pytest.raises(SystemExit) as info:
        main(args)
    return info.value.code, capsys.readouterr().err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "tests:\n  - id: a\n    input: [unclosed\n",
            "EVAL.yaml:4:1: invalid YAML: expected ',' or ']', but got '<stream end>'",
        ),
        (
            "tests:\n  - id: a\n    input: x\n    input: y\n",
            "EVAL.yaml:4:5: invalid YAML: duplicate key 'input' (first defined on line 3)",
        ),
        (
            "tests:\n  - id: a\n\tinput: x\n",
            "EVAL.yaml:3:1: invalid YAML: found character '\\t' that cannot start any token",
        ),
        (
            "- just\n- a list\n",
            "EVAL.yaml:1:1: invalid EVAL.yaml: expected a mapping at the top level, got a list",
        ),
        ("description: no tests\n", "EVAL.yaml:1:1: invalid EVAL.yaml: missing 'tests' array"),
        (
            "tests:\n  - id: a\n    input: q\n    assertions:\n      - type: contains\n      -\n",
            "EVAL.yaml:6:8: test 'a': an assertion must be a mapping with a 'type', got null",
        ),
        ("tests: []\n", "EVAL.yaml: no tests found, nothing to write"),
    ],
)
def test_malformed_input_is_one_line_naming_file_and_line(text, message, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    Path("EVAL.yaml").write_text(text, "utf-8")
    code, err = invoke_main(["transpile", "EVAL.yaml"], capsys)
    assert (code, err) == (1, f"Error: {message}\n")


def test_missing_files_are_one_line_errors(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert invoke_main(["transpile", "nope.yaml"], capsys) == (1, "Error: nope.yaml: no such file\n")
    Path("s.yaml").write_text("tests: ./missing.jsonl\n", "utf-8")
    assert invoke_main(["transpile", "s.yaml"], capsys) == (
        1,
        "Error: s.yaml:1:8: tests file or folder './missing.jsonl' not found (looked for missing.jsonl)\n",
    )
    Path("bad.jsonl").write_text('{"id": "a", "input": "q"}\n{"id": \n', "utf-8")
    assert invoke_main(["transpile", "bad.jsonl"], capsys) == (
        1,
        "Error: bad.jsonl:2:8: invalid JSON: Expecting value\n",
    )
