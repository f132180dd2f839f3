"""Every error case of ``.run()``, each as a real subprocess reading stdin."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

FIXTURE = Path(__file__).resolve().parents[3] / "examples" / "evalinput_helm_v1.1.json"

HEADER = "from agentevals_evaluator_sdk import evaluator, EvalInput, EvalResult\n"


def run(tmp_path: Path, body: str, stdin: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "ev.py"
    script.write_text(HEADER + textwrap.dedent(body) + "\nif __name__ == '__main__':\n    ev.run()\n")
    return subprocess.run(
        [sys.executable, str(script)], input=stdin, capture_output=True, text=True, timeout=60
    )


GOOD = """
@evaluator
def ev(input: EvalInput) -> EvalResult:
    n = len(input.invocations)
    return EvalResult(score=1.0, per_invocation_scores=[1.0] * n, details={"n": n})
"""


def fixture_text(**changes) -> str:
    data = json.loads(FIXTURE.read_text())
    data.update(changes)
    return json.dumps(data)


def test_valid_input_prints_one_result_with_protocol_version(tmp_path):
    proc = run(tmp_path, GOOD, fixture_text())
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result == {
        "score": 1.0,
        "status": None,
        "per_invocation_scores": [1.0],
        "details": {"n": 1},
        "protocol_version": "1.1",
    }


def test_print_inside_evaluator_goes_to_stderr(tmp_path):
    body = GOOD.replace("    n = len", "    print('debugging')\n    n = len")
    proc = run(tmp_path, body, fixture_text())
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["score"] == 1.0
    assert "debugging" in proc.stderr


def test_newer_minor_is_accepted_and_answered_with_ours(tmp_path):
    proc = run(tmp_path, GOOD, fixture_text(protocol_version="1.9", brand_new_field={"x": 1}))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["protocol_version"] == "1.2"


def test_older_minor_is_answered_with_theirs(tmp_path):
    proc = run(tmp_path, GOOD, fixture_text(protocol_version="1.0"))
    assert json.loads(proc.stdout)["protocol_version"] == "1.0"


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("", "error: empty stdin: expected one EvalInput JSON document"),
        ('{"protocol_version": "1.0", ', "error: stdin is not valid JSON: Expecting property name"),
        ("[1, 2]", "error: stdin must be a JSON object (EvalInput), got list"),
        (
            '{"protocol_version": "2.0"}',
            "error: unsupported protocol_version 2.0 from agentevals-cli: agentevals-evaluator-sdk speaks "
            "1.0 to 1.2; upgrade agentevals-evaluator-sdk so both speak major 2",
        ),
        ('{"protocol_version": "one"}', "error: protocol_version must look like 'MAJOR.MINOR', got 'one'"),
        (
            '{"protocol_version": "1.0", "invocations": [{"user_content": 5}]}',
            "error: invalid EvalInput: invocations[0].user_content: Input should be a valid string (got 5)",
        ),
        (
            '{"threshold": "high"}',
            "error: invalid EvalInput: threshold: Input should be a valid number, unable to parse string "
            "as a number (got 'high')",
        ),
    ],
)
def test_bad_input_is_one_line_and_nonzero(tmp_path, stdin, message):
    proc = run(tmp_path, GOOD, stdin)
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.strip().splitlines()[-1].startswith(message)
    assert len(proc.stderr.strip().splitlines()) == 1


def test_invalid_json_names_position(tmp_path):
    proc = run(tmp_path, GOOD, '{"a": 1,\n "b": }')
    assert "at line 2 column 7" in proc.stderr


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        ("EvalResult(score=1.5)", "ev built an invalid EvalResult: score: Input should be less than or equal to 1 (got 1.5)"),
        ("EvalResult(score=-0.5)", "score: Input should be greater than or equal to 0 (got -0.5)"),
        ('EvalResult(score=float("nan"))', "score: Input should be a finite number (got nan)"),
        ('EvalResult(score=float("inf"))', "score: Input should be a finite number (got inf)"),
        ('{"score": 1.5}', "ev returned an invalid EvalResult: score: Input should be less than or equal to 1 (got 1.5)"),
        ("{}", "score is required unless status is NOT_EVALUATED"),
        ('EvalResult(score="high")', "ev built an invalid EvalResult: score: Input should be a valid number (got 'high')"),
        ('{"score": "high"}', "ev returned an invalid EvalResult: score: Input should be a valid number (got 'high')"),
        ("EvalResult(score=1.0, per_invocation_scores=[2.0])", "per_invocation_scores[0]: Input should be less than or equal to 1 (got 2.0)"),
        ('"PASSED"', "ev returned str, expected EvalResult"),
    ],
)
def test_invalid_result_is_one_line_naming_field_and_value(tmp_path, returned, message):
    body = f"\n@evaluator\ndef ev(input: EvalInput):\n    return {returned}\n"
    proc = run(tmp_path, body, fixture_text())
    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert message in lines[0]


@pytest.mark.parametrize(
    ("returned", "written"),
    [
        ('EvalResult(score="0.9")', {"score": 0.9, "status": None, "per_invocation_scores": []}),
        ('{"score": True}', {"score": 1.0, "status": None, "per_invocation_scores": []}),
        ('EvalResult(score=0.1, status="PASSED")', {"score": 0.1, "status": "PASSED", "per_invocation_scores": []}),
        ("EvalResult(score=1.0, per_invocation_scores=[1.0, 0.0])",
         {"score": 1.0, "status": None, "per_invocation_scores": [1.0, 0.0]}),
    ],
)
def test_what_the_0_2_sdk_accepted_runs_and_is_written_strictly(tmp_path, returned, written):
    body = f"\n@evaluator\ndef ev(input: EvalInput):\n    return {returned}\n"
    proc = run(tmp_path, body, fixture_text())
    assert proc.returncode == 0, proc.stderr
    document = json.loads(proc.stdout)
    assert {key: document[key] for key in written} == written
    assert isinstance(document["score"], float)


def test_evaluator_raising_prints_message_and_traceback(tmp_path):
    body = "\n@evaluator\ndef ev(input: EvalInput):\n    raise KeyError('min_length')\n"
    proc = run(tmp_path, body, fixture_text())
    assert proc.returncode == 1
    assert "Traceback (most recent call last)" in proc.stderr
    assert proc.stderr.strip().splitlines()[-1] == "error: evaluator 'ev' raised KeyError: 'min_length'"


def test_async_evaluator_runs_as_program(tmp_path):
    body = (
        "\nimport asyncio\n@evaluator\nasync def ev(input: EvalInput):\n"
        "    await asyncio.sleep(0)\n    return EvalResult(score=0.5)\n"
    )
    proc = run(tmp_path, body, fixture_text())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["score"] == 0.5


def test_evaluator_raising_a_multi_line_message_still_ends_with_one_error_line(tmp_path):
    body = "\n@evaluator\ndef ev(input: EvalInput):\n    raise ValueError('bad config\\n  min_length: -1')\n"
    proc = run(tmp_path, body, fixture_text())
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines()[-1] == "error: evaluator 'ev' raised ValueError: bad config | min_length: -1"


def test_byte_order_mark_before_the_input_is_ignored(tmp_path):
    proc = run(tmp_path, GOOD, "\ufeff" + fixture_text())
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["protocol_version"] == "1.1"
