"""Compatibility matrix across the boundary: SDK results read by the CLI, CLI inputs read by the SDK.

Versions: 1.0, 1.1 and 1.2 (spoken by both; 1.2 adds persistent workers, tested as a session with
the SDK and as an older evaluator that ignores the offer), 1.9 (a future minor with unknown fields: tolerated) and 2.0
(another major: refused), in both directions.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from agentevals import protocol as cli
from agentevals.errors import ProtocolVersionError as CliVersionError
from agentevals_evaluator_sdk import EvalInput as SdkInput
from agentevals_evaluator_sdk import EvalResult as SdkResult
from agentevals_evaluator_sdk import ProtocolVersionError as SdkVersionError
from agentevals_evaluator_sdk import evaluator
from agentevals_evaluator_sdk.decorator import parse_input

FIXTURE = Path(__file__).resolve().parent.parent / "examples/evalinput_helm_v1.1.json"


@evaluator
def echo(input: SdkInput) -> SdkResult:
    calls = [len(inv.intermediate_steps.tool_calls) for inv in input.invocations]
    return SdkResult(score=0.8, per_invocation_scores=[0.8] * len(calls), details={"calls": calls})


def cli_input() -> cli.EvalInput:
    return cli.EvalInput.model_validate_json(FIXTURE.read_text())


# -- CLI → SDK -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("sent", "answered"), [("1.0", "1.0"), ("1.1", "1.1"), ("1.2", "1.2"), ("1.9", "1.2")])
def test_sdk_reads_cli_input(sent, answered):
    payload = json.loads(cli.encode_input(cli_input(), "1.2" if sent == "1.9" else sent))
    if sent == "1.9":
        payload["protocol_version"] = "1.9"
        payload["future_top_level"] = {"x": 1}
        payload["invocations"][0]["future_field"] = [1, 2]
    eval_input, used = parse_input(json.dumps(payload))
    assert used == answered
    assert eval_input.invocations[0].intermediate_steps.tool_calls[0].name == "helm_list_releases"
    result = echo.evaluate(eval_input, version=used)
    assert result.protocol_version == answered
    assert result.details == {"calls": [1]}


def test_cli_strips_1_1_fields_when_sending_1_0():
    payload = json.loads(cli.encode_input(cli_input(), "1.0"))
    inv = payload["invocations"][0]
    assert "performance_metrics" not in inv and "trace_id" not in inv and "span_id" not in inv
    assert set(inv["intermediate_steps"]["tool_responses"][0]) == {"name", "output"}
    assert set(inv["intermediate_steps"]["tool_calls"][0]) == {"name", "args"}
    full = json.loads(cli.encode_input(cli_input(), "1.1"))["invocations"][0]
    assert full["performance_metrics"]["counts"]["llm_calls"] == 2
    assert full["intermediate_steps"]["tool_responses"][0]["response"]["isError"] is False


def test_sdk_refuses_cli_input_of_another_major():
    payload = json.loads(cli.encode_input(cli_input()))
    payload["protocol_version"] = "2.0"
    with pytest.raises(SdkVersionError, match=r"2\.0.*1\.0 to 1\.2.*upgrade agentevals-evaluator-sdk"):
        parse_input(json.dumps(payload))


# -- SDK → CLI -------------------------------------------------------------------------------------

def sdk_result_json(version: str, **extra) -> str:
    eval_input = SdkInput.model_validate_json(FIXTURE.read_text())
    result = echo.evaluate(eval_input, version=version)
    data = result.model_dump(mode="json")
    data.update(extra)
    return json.dumps(data)


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_cli_reads_sdk_result(version):
    result = cli.decode_result(sdk_result_json(version), threshold=0.7, n_invocations=1, sent_version=version)
    assert (result.score, result.per_invocation_scores, result.protocol_version) == (0.8, [0.8], version)


def test_cli_reads_future_minor_result_ignoring_unknown_fields():
    text = sdk_result_json("1.1", protocol_version="1.9", confidence_interval=[0.7, 0.9])
    result = cli.decode_result(text, threshold=0.7, n_invocations=1)
    assert result.score == 0.8 and result.protocol_version == "1.9"
    assert not hasattr(result, "confidence_interval")


def test_cli_reads_result_without_version_as_1_0():
    result = cli.decode_result('{"score": 0.9, "per_invocation_scores": []}', threshold=0.5, n_invocations=3)
    assert result.protocol_version == "1.0"


def test_cli_refuses_result_of_another_major():
    with pytest.raises(CliVersionError, match=r"2\.0 from echo: agentevals-cli speaks 1\.0 to 1\.2; upgrade agentevals-cli"):
        cli.decode_result(sdk_result_json("1.1", protocol_version="2.0"), threshold=0.5, n_invocations=1, name="echo")


def test_negotiation_is_symmetric():
    for theirs, ours in [("1.0", "1.1"), ("1.1", "1.0"), ("1.9", "1.1")]:
        assert cli.negotiate(theirs, ours) == f"1.{min(int(theirs[2]), int(ours[2]))}"
    with pytest.raises(CliVersionError):
        cli.negotiate("0.9")


# -- persistent workers (1.2) across the boundary: session and non-session ------------------------------

SDK_PROGRAM = """\
from agentevals_evaluator_sdk import EvalInput, EvalResult, evaluator

@evaluator
def turns(input: EvalInput) -> EvalResult:
    return EvalResult(score=1.0, details={"turns": len(input.invocations)})

if __name__ == "__main__":
    turns.run()
"""


def start_sdk(tmp_path: Path, first: dict, pass_fds=()):
    import subprocess
    import sys

    program = tmp_path / "turns.py"
    program.write_text(SDK_PROGRAM)
    proc = subprocess.Popen([sys.executable, str(program)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, pass_fds=pass_fds)
    proc.stdin.write(json.dumps(first).encode() + b"\n")
    proc.stdin.close()
    return proc


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_new_sdk_answers_an_older_cli_once_and_exits_even_if_the_input_carries_an_offer(tmp_path, version):
    payload = json.loads(cli.encode_input(cli_input(), version))
    payload["worker"] = {"input_fd": 0}  # a field 1.0/1.1 do not define: ignored
    proc = start_sdk(tmp_path, payload)
    out = proc.stdout.read()
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    result = json.loads(out)
    assert result["protocol_version"] == version and "worker" not in result and "request_id" not in result


def test_new_sdk_accepts_the_offer_of_a_1_2_cli_and_serves_until_its_input_ends(tmp_path):
    import os

    read_fd, write_fd = os.pipe()
    first = cli.EvalInput.model_validate_json(FIXTURE.read_text()).model_copy(
        update={"request_id": "1", "worker": cli.WorkerOffer(input_fd=read_fd)})
    proc = start_sdk(tmp_path, json.loads(cli.encode_input(first, "1.2")), pass_fds=(read_fd,))
    os.close(read_fd)
    accepted = json.loads(proc.stdout.readline())
    assert (accepted["worker"], accepted["request_id"], accepted["protocol_version"]) == (True, "1", "1.2")
    with os.fdopen(write_fd, "wb", buffering=0) as lines:
        for request_id, version in (("2", "1.2"), ("3", "1.1")):
            payload = json.loads(cli.encode_input(cli_input(), version))
            lines.write(json.dumps({**payload, "request_id": request_id}).encode() + b"\n")
            answer = json.loads(proc.stdout.readline())
            assert (answer["request_id"], answer["score"], answer["protocol_version"]) == (request_id, 1.0, version)
        lines.write(b'{"request_id": "4", "protocol_version": "2.0"}\n')
        answer = json.loads(proc.stdout.readline())
        assert answer["request_id"] == "4" and "upgrade agentevals-evaluator-sdk" in answer["error"]
    assert proc.wait(timeout=30) == 0  # end of input: the worker exits


def test_cli_reads_a_worker_error_result_and_a_1_2_result():
    result = cli.decode_result(sdk_result_json("1.2", request_id="9", worker=True), threshold=0.7, n_invocations=1,
                               sent_version="1.2")
    assert (result.score, result.request_id, result.worker) == (0.8, "9", True)
    error = cli.EvalResult.model_validate({"request_id": "9", "error": "boom"})
    assert error.score is None and error.error == "boom"
