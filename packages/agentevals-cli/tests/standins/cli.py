"""Run the real CLI in a subprocess and reduce its JSON report to what must not depend on where the traces
came from (scores, statuses, matching; not source names or timings)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[4]
HELM = REPO / "examples" / "traces" / "helm.json"
K8S = REPO / "examples" / "traces" / "k8s.json"
TEMPO_EXPORT = REPO / "packages" / "agentevals-cli" / "tests" / "data" / "adk" / "tempo_export_with_batches.json"
EVAL_SET = REPO / "examples" / "evalsets" / "eval_set_helm.json"

CASE_KEYS = ("case_id", "trace_ids", "eval_id", "match_reason", "invocation_count", "user_contents",
             "performance_metrics", "score", "verdict", "evaluation_status")


def run_cli(*inputs: str, timeout: float = 120, env: dict[str, str] | None = None,
            extra: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
    """``agentevals run INPUTS -m tool_trajectory_avg_score --eval-set eval_set_helm.json -o json``."""
    return subprocess.run([sys.executable, "-m", "agentevals", "run", *inputs, "-m", "tool_trajectory_avg_score",
                           "--eval-set", str(EVAL_SET), "-o", "json", "--no-store", *extra],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO,
                          env={**os.environ, **(env or {})})


def outcome(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Per case: its matching, invocations, metrics (without durations) and verdict."""
    return [{**{k: case[k] for k in CASE_KEYS},
             "metrics": [{k: v for k, v in m.items() if k != "duration_ms"} for m in case["metrics"]]}
            for case in report["cases"]]


def report_of(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    assert proc.stdout.strip(), proc.stderr
    return json.loads(proc.stdout)
