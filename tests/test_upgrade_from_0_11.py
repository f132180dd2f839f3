"""Upgrading from agentevals-cli 0.11: a tree laid out like theirs runs unchanged with the same results.

The tree (``tests/data/upgrade_0_11``, see its README) has the config in a subfolder with paths relative
to the repository root, builtin metrics without thresholds, and evaluators built with their SDK 0.2.0
that return an explicit status against the threshold, extra per-invocation scores and a string score.
``agentevals_cli_0_11_output.json`` is 0.11.0's ``-o json`` for it; our document must carry every one of
its keys with the same values (durations aside), so a script written for 0.11 keeps working.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# The first test also runs the module's fixture (a venv with SDK 0.2.0 from the registry, up to 600 s).
pytestmark = pytest.mark.timeout(900)

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "upgrade_0_11"
THEIRS = json.loads((DATA / "agentevals_cli_0_11_output.json").read_text("utf-8"))
COMMAND = ["run", "samples/helm.json", "samples/k8s.json", "-c", "examples/custom_evaluators/eval_config.yaml",
           "-o", "json"]


@pytest.fixture(scope="module")
def run_0_11_tree(tmp_path_factory: pytest.TempPathFactory) -> tuple[int, dict[str, Any], str]:
    """Run this release on the tree; skip when the evaluators' venv (SDK 0.2.0 from the registry) cannot be built."""
    tree = tmp_path_factory.mktemp("tree")
    shutil.copytree(DATA / "examples", tree / "examples")
    (tree / "samples").mkdir()
    for name in ("traces/helm.json", "traces/k8s.json", "evalsets/eval_set_helm.json"):
        shutil.copy(ROOT / "examples" / name, tree / "samples")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path_factory.mktemp("cache")), "NO_COLOR": "1",
           "AGENTEVALS_STORE": str(tmp_path_factory.mktemp("store") / "runs.sqlite")}  # nothing cached
    proc = subprocess.run([sys.executable, "-m", "agentevals", *COMMAND], cwd=tree, env=env, capture_output=True,
                          text=True, timeout=600)
    document = json.loads(proc.stdout)
    errors = [m["error"] for c in document["cases"] for m in c["metrics"] if m["status"] == "ERROR"]
    if errors and all("requirements.txt" in e or "install" in e for e in errors):
        pytest.skip(f"cannot install agentevals-evaluator-sdk 0.2.0 from the package registry: {errors[0]}")
    return proc.returncode, document, proc.stderr


def _rows(document: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """(trace id, metric name) → the 0.11 row without its duration (0.11 listed rows in completion order)."""
    return {(t["trace_id"], m["metric_name"]): {k: v for k, v in m.items() if k != "duration_ms"}
            for t in document["traces"] for m in t["metrics"]}


def _like(ours: Any, theirs: Any) -> Any:
    """``ours`` restricted to the keys ``theirs`` has (our rows may carry more, e.g. ``details.match_type``)."""
    if isinstance(ours, dict) and isinstance(theirs, dict):
        return {k: _like(ours[k], theirs[k]) if k in ours else "<missing>" for k in theirs}
    if isinstance(ours, list) and isinstance(theirs, list) and len(ours) == len(theirs):
        return [_like(o, t) for o, t in zip(ours, theirs, strict=True)]
    return ours


def _key_paths(value: Any, prefix: str = "") -> set[str]:
    if isinstance(value, dict):
        return {p for k, v in value.items() for p in {f"{prefix}.{k}", *_key_paths(v, f"{prefix}.{k}")}}
    if isinstance(value, list):
        return {p for item in value for p in _key_paths(item, f"{prefix}[]")}
    return set()


def test_same_exit_code_and_results_as_0_11(run_0_11_tree):
    code, ours, stderr = run_0_11_tree
    assert code == 1, stderr  # k8s fails its trajectory, in 0.11 too
    assert _like(_rows(ours), _rows(THEIRS)) == _rows(THEIRS)
    assert [t["trace_id"] for t in ours["traces"]] == [t["trace_id"] for t in THEIRS["traces"]]
    assert [t["num_invocations"] for t in ours["traces"]] == [t["num_invocations"] for t in THEIRS["traces"]]
    assert ours["errors"] == THEIRS["errors"] == []


def test_a_script_reading_0_11_json_reads_ours(run_0_11_tree):
    def failing(document: dict[str, Any]) -> list[tuple[str, str]]:  # what a CI script written for 0.11 does
        return sorted((t["trace_id"], m["metric_name"]) for t in document["traces"] for m in t["metrics"]
                      if m["eval_status"] != "PASSED")

    _, ours, _ = run_0_11_tree
    assert failing(ours) == failing(THEIRS) == [
        ("d497c9dd55717f2c5ecb79bda3028993", "response_match_score"),
        ("d497c9dd55717f2c5ecb79bda3028993", "tool_trajectory_avg_score"),
    ]


def test_every_0_11_key_is_in_our_document(run_0_11_tree):
    _, ours, _ = run_0_11_tree
    assert _key_paths(THEIRS) - _key_paths(ours) == set()


def test_document_matches_the_published_schema(run_0_11_tree):
    import jsonschema
    from agentevals.report.json import load_result_schema

    _, ours, _ = run_0_11_tree
    jsonschema.validate(ours, load_result_schema())


def test_what_was_kept_is_said(run_0_11_tree):
    _, ours, stderr = run_0_11_tree
    warnings = {m["name"]: m["warnings"] for m in ours["cases"][0]["metrics"]}
    assert warnings == {
        "tool_trajectory_avg_score": [],
        "response_match_score": [],
        "lenient_judge": ["status PASSED set by the evaluator overrides score 0.3 vs threshold 0.7 (which says FAILED)"],
        "per_turn": ["2 per_invocation_scores for 1 invocations (kept as given; they do not line up with the turns)"],
        "string_score": [],
    }
    config = "examples/custom_evaluators/eval_config.yaml"
    assert [note.split(" (")[0] for note in ours["notes"]] == [
        f"{config}:9:5: evaluator 'lenient_judge': 'examples/custom_evaluators/evaluators/lenient_judge.py' is not "
        "in the config's folder; using it relative to the working directory",
        f"{config}:13:5: evaluator 'per_turn': 'examples/custom_evaluators/evaluators/per_turn.py' is not in the "
        "config's folder; using it relative to the working directory",
        f"{config}:16:5: evaluator 'string_score': 'examples/custom_evaluators/evaluators/string_score.py' is not "
        "in the config's folder; using it relative to the working directory",
        f"{config}: eval_set 'samples/eval_set_helm.json' is not in the config's folder; using it relative to the "
        "working directory",
    ]
    assert all(f"agentevals: {note}" in stderr for note in ours["notes"])


def _shape(value: Any) -> Any:
    """The JSON types at every key (lists by their items), to compare documents' shapes key by key."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_shape(v) for v in value]
    return "number" if isinstance(value, (int, float)) and not isinstance(value, bool) else type(value).__name__


def test_performance_metrics_have_0_11s_shape_and_figures(run_0_11_tree):
    """Per trace, not over the union of traces: k8s.json's turn has no tool call, and 0.11 wrote zeros there
    (``tool_executions.count`` 0), never null; the figures come from the same spans, so they are equal."""
    _, ours, _ = run_0_11_tree
    for our_trace, their_trace in zip(ours["traces"], THEIRS["traces"], strict=True):
        assert _shape(our_trace["performance_metrics"]) == _shape(their_trace["performance_metrics"])
        assert our_trace["performance_metrics"] == their_trace["performance_metrics"]
    assert THEIRS["traces"][1]["performance_metrics"]["latency"]["tool_executions"]["count"] == 0
    assert ours["performance_metrics"] == THEIRS["performance_metrics"]
