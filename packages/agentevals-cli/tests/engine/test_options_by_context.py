"""A run's options reach evaluators through ``EvalContext`` only: the engine never writes them into an
evaluator object, so one evaluator instance serves two concurrent runs with different options."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

from agentevals.config import build_evaluators
from agentevals.engine import RunOptions, run_evaluation
from agentevals.evalsets import load_eval_set

REPO = Path(__file__).resolve().parents[4]
HELM = REPO / "examples" / "traces" / "helm.json"
EVAL_SET = REPO / "examples" / "evalsets" / "eval_set_helm.json"


def copies(directory: Path, n: int) -> list[str]:
    """``n`` copies of the helm trace, one file each (distinct trace ids), so the two runs interleave."""
    document = json.loads(HELM.read_text())
    paths = []
    for i in range(n):
        trace = json.loads(json.dumps(document["data"][0]))
        trace["traceID"] = f"{i + 1:032x}"
        for span in trace["spans"]:
            span["traceID"] = trace["traceID"]
        path = directory / f"t{i}.json"
        path.write_text(json.dumps({"data": [trace]}))
        paths.append(str(path))
    return paths


def test_one_evaluator_instance_serves_two_concurrent_runs_with_different_options(tmp_path):
    inputs = copies(tmp_path, 12)
    eval_set = load_eval_set(EVAL_SET)
    (loaded,) = build_evaluators(["tool_trajectory_avg_score"], options=RunOptions(), existing=[])
    evaluator = loaded.evaluator
    strict = RunOptions(threshold=0.9, trajectory_match_type="exact", concurrency=2, group_by="trace")
    lenient = RunOptions(threshold=0.1, trajectory_match_type="any_order", concurrency=2, group_by="trace")

    async def both():
        return await asyncio.gather(run_evaluation(inputs, [evaluator], eval_set=eval_set, options=strict),
                                    run_evaluation(inputs, [evaluator], eval_set=eval_set, options=lenient))

    first, second = asyncio.run(both())
    for run, options in ((first, strict), (second, lenient)):
        metrics = [m for c in run.cases for m in c.metrics]
        assert len(metrics) == 12
        assert {m.threshold for m in metrics} == {options.threshold}
        assert {m.details["match_type"] for m in metrics} == {options.trajectory_match_type}
    assert evaluator.options == RunOptions()  # never written by a run


def test_two_runs_on_two_threads_share_one_evaluator(tmp_path):
    """serve's shape: sessions evaluated on a worker thread while a request runs another evaluation."""
    inputs = copies(tmp_path, 6)
    (loaded,) = build_evaluators(["tool_trajectory_avg_score"], options=RunOptions(), existing=[])
    results: dict[float, set] = {}

    def run(threshold: float) -> None:
        run = asyncio.run(run_evaluation(inputs, [loaded], options=RunOptions(threshold=threshold, concurrency=2)))
        results[threshold] = {m.threshold for c in run.cases for m in c.metrics}

    threads = [threading.Thread(target=run, args=(t,)) for t in (0.25, 0.75)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert results == {0.25: {0.25}, 0.75: {0.75}}
