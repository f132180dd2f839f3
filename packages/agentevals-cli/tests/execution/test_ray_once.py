"""Ray's start-up is paid once per process: two ``executor="ray"`` evaluations in one process share the local
instance the first one started (a real local Ray), and batches are sized to the run and the cluster."""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

ray = pytest.importorskip("ray", reason="the ray extra is not installed: pip install 'agentevals-cli[ray]'")

import agentevals  # noqa: E402
from agentevals.engine.ray_pool import MAX_BATCH, MIN_BATCH, batch_cases  # noqa: E402
from agentevals.execution.ray_executor import disconnect  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/ → `support` is importable
from support.sdk_evaluators import SLOW_SDK_EVALUATOR  # noqa: E402
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


def _evaluation_actors() -> dict[str, int]:
    """The live evaluation actors (named ``agentevals-eval-…``) and their process ids."""
    return {a["name"]: ray.get(ray.get_actor(a["name"], namespace="agentevals").pid.remote(), timeout=60)
            for a in ray.util.list_named_actors(all_namespaces=True) if a["name"].startswith("agentevals-eval-")}


def test_a_later_run_of_the_process_reuses_the_evaluation_actors_with_its_own_evaluators(tmp_path):
    if ray.is_initialized():
        pytest.skip("a Ray instance is already running in this process (this test needs to start its own)")
    traces = tmp_path / "traces.json"
    clone_traces(HELM, 8, traces)
    first_kw: dict[str, Any] = {"eval_set": EVAL_SET, "metrics": ["tool_trajectory_avg_score"], "group_by": "trace"}
    second_kw: dict[str, Any] = {"eval_set": EVAL_SET, "metrics": ["tool_call_count_v1"], "group_by": "trace"}
    try:
        first = agentevals.evaluate([str(traces)], executor="ray", **first_kw)
        kept = _evaluation_actors()
        assert kept  # closed, not ended: waiting for the next run
        second = agentevals.evaluate([str(traces)], executor="ray", **second_kw)
        assert _evaluation_actors() == kept  # the same processes served it
        # ... with the second run's evaluators, not the first's
        assert comparable(second) == comparable(agentevals.evaluate([str(traces)], **second_kw))
        assert comparable(first) == comparable(agentevals.evaluate([str(traces)], **first_kw))
        assert {m.name for c in second.cases for m in c.metrics} == {"tool_call_count_v1"}
    finally:
        disconnect()
    assert not ray.is_initialized()


def _kill_a_busy_actor(killed: list[int], stop: threading.Event) -> None:
    """kill -9 an evaluation actor caught running an evaluator process (its child): mid-batch."""
    deadline = time.monotonic() + 120
    while not stop.is_set() and time.monotonic() < deadline:
        for pid in _evaluation_actors().values():
            children = [c for task in Path(f"/proc/{pid}/task").glob("*")
                        for c in (task / "children").read_text().split()] if Path(f"/proc/{pid}").exists() else []
            if children:
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
                return
        time.sleep(0.05)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs /proc to see an actor's evaluator process")
def test_a_kept_actor_killed_in_a_later_run_comes_back_with_that_runs_evaluators(tmp_path, caplog):
    """Ray restarts a lost actor with the arguments it was created with (an earlier run's evaluators): the
    batch it is sent again carries this run's, and it sets itself up from them."""
    if ray.is_initialized():
        pytest.skip("a Ray instance is already running in this process (this test needs to start its own)")
    traces = tmp_path / "traces.json"
    clone_traces(HELM, 16, traces)
    (tmp_path / "quality").mkdir()
    (tmp_path / "quality" / "quality.py").write_text(SLOW_SDK_EVALUATOR)
    (tmp_path / "quality" / "evaluator.yaml").write_text("name: quality\n")
    config = tmp_path / "eval_config.yaml"
    config.write_text("evaluators:\n  - name: tool_trajectory_avg_score\n    type: builtin\n"
                      "  - name: quality\n    type: code\n    path: quality/quality.py\n")
    killed: list[int] = []
    stop = threading.Event()
    try:
        agentevals.evaluate([str(traces)], executor="ray", eval_set=EVAL_SET, metrics=["tool_call_count_v1"],
                            group_by="trace")  # its actors are kept, created with this run's evaluators
        kept = _evaluation_actors()
        killer = threading.Thread(target=_kill_a_busy_actor, args=(killed, stop), daemon=True)
        killer.start()
        try:
            remote = agentevals.evaluate([str(traces)], executor="ray", eval_set=EVAL_SET, config=config,
                                         group_by="trace")
        finally:
            stop.set()
            killer.join()
        assert killed and killed[0] in kept.values(), "no kept actor was found busy to kill"
        local = agentevals.evaluate([str(traces)], eval_set=EVAL_SET, config=config, group_by="trace")
    finally:
        disconnect()
    assert "was lost" in caplog.text and "sending it again" in caplog.text
    rows = [(c.case_id, m.name, m.status.value) for c in remote.cases for m in c.metrics]
    assert len(rows) == len(set(rows)) == 16 * 2 and "ERROR" not in {status for *_, status in rows}
    assert comparable(remote) == comparable(local)
