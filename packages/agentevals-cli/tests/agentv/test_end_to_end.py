"""``agentevals run`` with AgentV types on the recorded Helm trace: the documented case score and verdict."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from agentevals.cli import cli
from click.testing import CliRunner

ADK = Path(__file__).resolve().parents[1] / "data" / "adk"
HELM, EVAL_SET = str(ADK / "helm.json"), str(ADK / "eval_set_helm.json")


def rows(case: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(m["name"], m["status"], m["score"], m["verdict"], m["weight"], m["required"]) for m in case["metrics"]]


def test_mixed_config_gives_the_documented_score(av: Any) -> None:
    config = str(av.data / "helm_mixed.yaml")
    proc = subprocess.run([sys.executable, "-m", "agentevals", "run", HELM, "--eval-set", EVAL_SET,
                           "--config", config, "-o", "json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1, proc.stderr
    (case,) = json.loads(proc.stdout)["cases"]
    assert rows(case) == [
        ("mentions-kagent", "PASSED", 1.0, "pass", 1.0, None),
        ("trajectory", "PASSED", 1.0, "pass", 2.0, None),
        ("efficiency", "FAILED", 0.75, "borderline", 1.0, 0.7),
        ("length", "FAILED", 0.5, "fail", 1.0, None),
        ("json-output", "FAILED", 0.0, "fail", 0.0, None),
        ("no-apology", "PASSED", 1.0, "pass", 1.0, None),
    ]
    # (1 + 2*1 + 0.75 + 0.5 + 0*0 + 1) / (1 + 2 + 1 + 1 + 0 + 1) = 5.25 / 6
    assert (case["score"], case["verdict"]) == (0.875, "pass")
    efficiency = case["metrics"][2]
    assert efficiency["misses"] == ["Total tokens 3906 > 3000 max"]
    assert efficiency["hits"] == ["Tool calls 1 <= 3 max", "LLM calls 2 <= 2 max", "Duration 4168.298ms <= 10000ms max"]
    assert case["metrics"][1]["hits"] == ["Position 0: helm_list_releases",
                                          "helm_list_releases completed in 57.091ms (max: 1000ms)"]


def test_failed_required_gate_zeroes_the_case(av: Any, tmp_path: Path) -> None:
    shutil.copytree(av.data / "judges", tmp_path / "judges")
    text = (av.data / "helm_mixed.yaml").read_text().replace("required: 0.7", "required: true")
    (tmp_path / "eval_config.yaml").write_text(text)
    result = CliRunner().invoke(cli, ["run", HELM, "-e", EVAL_SET, "-c", str(tmp_path / "eval_config.yaml")])
    assert result.exit_code == 1
    assert "  case score 0 (fail)" in result.output
    assert "  efficiency       FAILED  0.75   0.8                  borderline" in result.output


def test_error_counts_zero_and_missing_key_is_left_out(av: Any, monkeypatch: Any) -> None:
    monkeypatch.delenv("AGENTEVALS_TEST_NO_SUCH_KEY", raising=False)
    result = CliRunner().invoke(cli, ["run", HELM, "-e", EVAL_SET, "-c", str(av.data / "helm_error.yaml"), "-o", "json"])
    assert result.exit_code == 1
    (case,) = json.loads(result.stdout)["cases"]
    broken, quality = case["metrics"][1], case["metrics"][2]
    assert (broken["status"], broken["error"]) == (
        "ERROR", "code judge 'broken' `python judges/crash.py` exited with code 3: KeyError: 'answer'")
    assert (quality["status"], quality["reason"]) == (
        "NOT_EVALUATED", "LLM judge unavailable: no API key: set AGENTEVALS_TEST_NO_SUCH_KEY")
    assert (case["score"], case["verdict"]) == (0.5, "fail")
