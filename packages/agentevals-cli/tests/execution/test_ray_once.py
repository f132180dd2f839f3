"""Ray's start-up is paid once per process: two ``executor="ray"`` evaluations in one process share the local
instance the first one started (a real local Ray), and batches are sized to the run and the cluster."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install 'agentevals-cli[ray]'")

import agentevals  # noqa: E402
from agentevals.engine.ray_pool import MAX_BATCH, MIN_BATCH, batch_cases  # noqa: E402
from agentevals.execution.ray_executor import disconnect  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ → `support` is importable
from support.traces import clone_traces  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.timeout(600)]

REPO = Path(__file__).resolve().parents[4]
HELM = REPO / "examples" / "traces" / "helm.json"
EVAL_SET = REPO / "examples" / "evalsets" / "eval_set_helm.json"


def comparable(run: Any) -> Any:
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("duration_ms", "started_at", "finished_at")}
        return [strip(v) for v in value] if isinstance(value, list) else value

    return strip(run.model_dump(mode="json"))


def test_two_evaluations_in_one_process_start_ray_once(tmp_path):
    if ray.is_initialized():
        pytest.skip("a Ray instance is already running in this process (this test needs to start its own)")
    traces = tmp_path / "traces.json"
    clone_traces(HELM, 12, traces)
    kwargs: dict[str, Any] = {"eval_set": EVAL_SET, "metrics": ["tool_trajectory_avg_score", "tool_call_count_v1"],
                              "group_by": "trace"}
    try:
        first = agentevals.evaluate([str(traces)], executor="ray", **kwargs)
        assert ray.is_initialized()  # still up after the run: the next one uses it
        node = ray.get_runtime_context().get_node_id()
        second = agentevals.evaluate([str(traces)], executor="ray", **kwargs)
        assert ray.is_initialized() and ray.get_runtime_context().get_node_id() == node  # the same instance
        local = agentevals.evaluate([str(traces)], **kwargs)
        assert len(first.cases) == 12 and {m.status.value for c in first.cases for m in c.metrics} >= {"PASSED"}
        assert comparable(first) == comparable(second) == comparable(local)
    finally:
        started_here = disconnect()
    assert started_here and not ray.is_initialized()
    assert disconnect() is False  # nothing left to end


@pytest.mark.parametrize(("cases", "actors", "size"), [
    (1000, 2, 125),  # four batches per actor, not 1,000 tasks nor 32 batches of 32
    (1000, 8, 32),
    (20, 2, MIN_BATCH),
    (0, 4, MIN_BATCH),
    (1_000_000, 2, MAX_BATCH),
    (1000, 0, 250),  # a cluster that reports no CPU: taken as one actor
])
def test_batches_are_sized_to_the_run_and_the_cluster(cases, actors, size):
    assert batch_cases(cases, actors) == size
