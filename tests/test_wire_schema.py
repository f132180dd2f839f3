"""The wire schema: byte-identical copies in both packages, and both packages' models match it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import agentevals.protocol as cli_protocol
import agentevals_evaluator_sdk as sdk
import jsonschema
import pytest
from agentevals_evaluator_sdk.protocol import schema_for_version

ROOT = Path(__file__).resolve().parent.parent
SDK_DIR = ROOT / "packages/agentevals-evaluator-sdk/src/agentevals_evaluator_sdk/schema"
CLI_DIR = ROOT / "packages/agentevals-cli/src/agentevals/protocol/schema"
FIXTURE = ROOT / "examples/evalinput_helm_v1.1.json"
VERSIONS = ("1.0", "1.1", "1.2")
DOCS = {"eval_input": ("EvalInput",), "eval_result": ("EvalResult",)}


def test_both_packages_ship_the_same_files_byte_for_byte():
    sdk_files = sorted(p.name for p in SDK_DIR.glob("*.json"))
    assert sdk_files == sorted(p.name for p in CLI_DIR.glob("*.json"))
    assert sdk_files == [f"{d}.v{v}.json" for d in sorted(DOCS) for v in VERSIONS]
    for name in sdk_files:
        assert (SDK_DIR / name).read_bytes() == (CLI_DIR / name).read_bytes(), name


def test_sync_tool_reports_nothing_stale():
    proc = subprocess.run([sys.executable, str(ROOT / "tools/sync_schema.py"), "--check"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("doc", sorted(DOCS))
@pytest.mark.parametrize("package", [sdk, cli_protocol], ids=["sdk", "cli"])
def test_models_generate_the_shipped_schema(package, doc, version):
    model = getattr(package, DOCS[doc][0])
    shipped = json.loads((SDK_DIR / f"{doc}.v{version}.json").read_text())
    generated = schema_for_version(model.model_json_schema(), version)
    for key in ("$schema", "$id", "x-protocol-version"):
        shipped.pop(key)
    assert generated == shipped


def test_v1_0_schema_lacks_1_1_fields_and_v1_1_has_them():
    v10 = json.loads((SDK_DIR / "eval_input.v1.0.json").read_text())["$defs"]
    v11 = json.loads((SDK_DIR / "eval_input.v1.1.json").read_text())["$defs"]
    assert set(v11["InvocationData"]["properties"]) - set(v10["InvocationData"]["properties"]) == {
        "performance_metrics", "trace_id", "span_id"}
    assert set(v11["ToolResponseData"]["properties"]) - set(v10["ToolResponseData"]["properties"]) == {"id", "status", "response"}
    assert set(v11["ToolCallData"]["properties"]) - set(v10["ToolCallData"]["properties"]) == {"id"}


def test_v1_2_adds_the_worker_handshake_and_case_figures_only():
    for doc, added in (("eval_input", {"performance_metrics", "request_id", "worker"}),
                       ("eval_result", {"request_id", "worker", "error"})):
        v11 = json.loads((SDK_DIR / f"{doc}.v1.1.json").read_text())
        v12 = json.loads((SDK_DIR / f"{doc}.v1.2.json").read_text())
        assert set(v12["properties"]) - set(v11["properties"]) == added
        assert {k: v for k, v in v12["$defs"].items() if k != "WorkerOffer"} == v11.get("$defs", {})
    assert "WorkerOffer" not in json.loads((SDK_DIR / "eval_input.v1.1.json").read_text())["$defs"]


@pytest.mark.parametrize("version", VERSIONS)
def test_real_capture_validates_against_both_schemas(version):
    schema = json.loads((SDK_DIR / f"eval_input.v{version}.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads(FIXTURE.read_text()))


def test_result_schema_rejects_string_and_out_of_range_scores():
    schema = json.loads((SDK_DIR / "eval_result.v1.1.json").read_text())
    validator = jsonschema.Draft202012Validator(schema)
    assert validator.is_valid({"score": 0.5})
    assert not validator.is_valid({"score": "0.9"})
    assert not validator.is_valid({"score": 1.5})
