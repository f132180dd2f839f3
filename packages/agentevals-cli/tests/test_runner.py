"""The pipeline: a trace that cannot be read or converted costs only that trace, never the run."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentevals.api import prepare_run
from agentevals.engine import run_evaluation
from agentevals.traces import _collect

ADK = Path(__file__).resolve().parent / "data" / "adk"


def test_a_trace_the_converter_cannot_handle_is_an_input_error_and_the_rest_is_evaluated(monkeypatch):
    real = _collect.convert_trace

    def convert(trace):
        if trace.trace_id == "3e289017fe03ffd7c4145316d2eb3d0d":
            raise AttributeError("'int' object has no attribute 'get'\nsecond line")
        return real(trace)

    monkeypatch.setattr(_collect, "convert_trace", convert)
    helm = str(ADK / "helm.json")
    evaluators, options, eval_set = prepare_run(eval_set=ADK / "eval_set_helm.json")
    run = asyncio.run(run_evaluation([helm, ADK / "k8s.json"], evaluators, eval_set=eval_set, options=options))
    assert [(c.case_id, [m.status.value for m in c.metrics]) for c in run.cases] == [
        ("d497c9dd55717f2c5ecb79bda3028993", ["FAILED"])]
    (error,) = run.input_errors
    assert (error.source, error.error) == (helm, f"{helm}: trace 3e289017fe03ffd7c4145316d2eb3d0d could not be converted: "
                                                 "AttributeError: 'int' object has no attribute 'get' | second line")
