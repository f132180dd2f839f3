"""The run engine: one pool across cases, output order whatever the concurrency, consumers called in order."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from agentevals.api import prepare_run
from agentevals.engine import run_evaluation
from agentevals.engine.consumers import RunConsumer
from agentevals.engine.options import RunOptions
from support.generate import replicate

ADK = Path(__file__).resolve().parent.parent / "data" / "adk"

SDK_EVALUATOR = """\
import random, time
from agentevals_evaluator_sdk import EvalInput, EvalResult, evaluator

@evaluator
def scored(input: EvalInput) -> EvalResult:
    time.sleep(random.random() / 50)  # finish out of order
    calls = sum(len(inv.intermediate_steps.tool_calls) for inv in input.invocations)
    figures = input.performance_metrics or {}
    return EvalResult(score=min(1.0, calls / 2), per_invocation_scores=[0.5] * len(input.invocations),
                      details={"turns": len(input.invocations), "case_llm_calls": figures.get("counts", {}).get("llm_calls")})

if __name__ == "__main__":
    scored.run()
"""

PLAIN_EVALUATOR = """\
import json, random, sys, time
data = json.load(sys.stdin)
time.sleep(random.random() / 50)
print(json.dumps({"score": 1.0 if data["invocations"][-1].get("final_response") else 0.0,
                  "details": {"keys": sorted(data)}}))
"""


class Recorder(RunConsumer):
    def __init__(self) -> None:
        self.events: list[tuple] = []

    def run_started(self, run):
        self.events.append(("started", len(run.cases)))

    def case_finished(self, index, case):
        self.events.append(("case", index, case.case_id))

    def run_finished(self, run):
        self.events.append(("finished", len(run.cases)))


def generated(tmp_path: Path) -> list[Path]:
    """20 traces in two files: conversations of 1-4 traces spread through both files."""
    first = replicate(tmp_path / "a.json", 12, session_of=lambda i: f"conv-{i % 5}")
    second = replicate(tmp_path / "b.json", 8, session_of=lambda i: f"conv-{(i * 3) % 7}")
    return [first, second]


def config(tmp_path: Path) -> Path:
    (tmp_path / "sdk_eval.py").write_text(SDK_EVALUATOR)
    (tmp_path / "plain_eval.py").write_text(PLAIN_EVALUATOR)
    path = tmp_path / "eval_config.yaml"
    path.write_text("evaluators:\n"
                    "  - {name: sdk, type: code, path: sdk_eval.py, threshold: 0.4}\n"
                    "  - {name: plain, type: code, path: plain_eval.py}\n"
                    "  - {name: tool_trajectory_avg_score, type: builtin}\n")
    return path


def run_json(inputs, cfg, *, concurrency: int, workers: bool, group_by: str = "auto") -> tuple[dict, Recorder]:
    evaluators, options, eval_set = prepare_run(config=cfg, eval_set=ADK / "eval_set_helm.json", group_by=group_by,
                                                concurrency=concurrency)
    options.persistent_workers = workers
    recorder = Recorder()
    run = asyncio.run(run_evaluation(inputs, evaluators, eval_set=eval_set, options=options, consumers=[recorder]))
    document = run.model_dump(mode="json")
    for key in ("started_at", "finished_at"):  # when it ran, not what it found
        document.pop(key)
    for case in document["cases"]:
        for metric in case["metrics"]:
            metric.pop("duration_ms")
    assert recorder.events == [("started", 0), *(("case", i, c.case_id) for i, c in enumerate(run.cases)),
                               ("finished", len(run.cases))]
    return document, recorder


EVERY = [(c, w) for c in (1, 2, 8) for w in (False, True)]


@pytest.mark.parametrize(("group_by", "runs"), [("auto", EVERY), ("trace", [(1, True), (8, True), (2, False)])])
def test_results_are_identical_at_every_concurrency_with_and_without_workers(tmp_path, group_by, runs):
    """Every run's JSON document (minus durations) equals the first's: 7 conversations, or 20 traces."""
    inputs, cfg = generated(tmp_path), config(tmp_path)
    (concurrency, workers), *runs = runs
    reference, _ = run_json(inputs, cfg, concurrency=concurrency, workers=workers, group_by=group_by)
    cases = reference["cases"]
    assert len(cases) == (7 if group_by == "auto" else 20)
    assert not [m for c in cases for m in c["metrics"] if m["status"] == "ERROR"]
    for concurrency, workers in runs:
        document, _ = run_json(inputs, cfg, concurrency=concurrency, workers=workers, group_by=group_by)
        assert document == reference, (concurrency, workers)


def test_conversations_spread_through_the_files_are_grouped_in_first_trace_order(tmp_path):
    document, _ = run_json(generated(tmp_path), config(tmp_path), concurrency=4, workers=True)
    cases = document["cases"]
    # a.json: conv-0..4 in order; b.json adds conv-6 (i=2) then conv-5 (i=4)
    assert [c["case_id"] for c in cases] == ["conv-0", "conv-1", "conv-2", "conv-3", "conv-4", "conv-6", "conv-5"]
    conv0 = cases[0]
    # a.json traces 0, 5, 10 and b.json traces 0, 7 (ids repeat across files), by start time
    assert len(conv0["trace_ids"]) == 5 and conv0["sources"] == sorted({str(tmp_path / "a.json"), str(tmp_path / "b.json")})
    sdk = next(m for m in conv0["metrics"] if m["name"] == "sdk")
    assert sdk["details"]["turns"] == 5 and sdk["details"]["case_llm_calls"] == 10  # the case's figures, once


def test_one_json_input_size_for_a_long_conversation(tmp_path):
    """1.2 sends the case's figures once; each turn keeps only its own."""
    from agentevals.engine import group_traces, load_traces
    from agentevals.evaluators.backend import build_eval_input
    from agentevals.protocol import encode_input

    traces, _ = load_traces([replicate(tmp_path / "long.json", 50, session_of=lambda i: "one")], keep_spans=False)
    (case,) = group_traces(traces, "conversation")
    from agentevals.engine import _case_metrics
    from agentevals.evaluators.base import EvalContext

    ctx = EvalContext(case_id="one", invocations=case.invocations, performance_metrics=_case_metrics(case.traces))
    eval_input = build_eval_input(ctx, name="x", threshold=0.5, config={}, version="1.2")
    v12, v11 = json.loads(encode_input(eval_input, "1.2")), json.loads(encode_input(eval_input, "1.1"))
    assert v12["performance_metrics"]["counts"]["invocations"] == 50 and "performance_metrics" not in v11
    assert v12["invocations"] == v11["invocations"]


def test_a_consumer_error_stops_the_run_with_that_error(tmp_path):
    class Broken(RunConsumer):
        def case_finished(self, index, case):
            raise OSError("disk full")

    evaluators, options, _ = prepare_run(metrics=["tool_trajectory_avg_score"], concurrency=2)
    with pytest.raises(OSError, match="disk full"):
        asyncio.run(run_evaluation([replicate(tmp_path / "t.json", 5)], evaluators, options=options,
                                   consumers=[Broken()]))


def test_default_concurrency_is_the_number_of_cores():
    import os

    assert RunOptions().concurrency == len(os.sched_getaffinity(0))
