"""The live evaluation worker: one session is one case, late traces re-evaluate the whole conversation,
a broken session is marked and the others are evaluated."""

from __future__ import annotations

import asyncio
import copy
import gc

import agentevals.serve.live as live_module
from agentevals.engine.consumers import RunConsumer
from agentevals.serve.live import EvalSettings, LiveEvaluator, load_eval_sets
from agentevals.serve.sessions import ReadySession, SessionAssembler
from agentevals.serve.store import MemorySessionStore
from agentevals.traces.readers import read_traces
from support.live_server import DATA, EXAMPLES

HELM = EXAMPLES / "traces/helm.json"


def worker(**settings) -> tuple[LiveEvaluator, MemorySessionStore, SessionAssembler]:
    assembler, store = SessionAssembler(), MemorySessionStore()
    return LiveEvaluator(assembler, store, EvalSettings(**settings)), store, assembler


def test_late_trace_re_evaluates_the_whole_conversation():
    live, store, assembler = worker(metrics=["tool_call_count_v1"])
    first, second = (list(read_traces(p)) for p in (HELM, EXAMPLES / "traces/k8s.json"))
    units = sum(len(t.spans) for t in first + second)
    assembler.add_spans([s for t in first + second for s in t.spans])  # what the receivers would hold
    asyncio.run(live.evaluate([ReadySession("conv", first, sum(len(t.spans) for t in first), conversation=True)]))
    one = store.get("conv")
    asyncio.run(live.evaluate([ReadySession("conv", second, sum(len(t.spans) for t in second), conversation=True)]))
    both = store.get("conv")
    assert one.status == both.status == "evaluated"
    assert len(both.trace_ids) == 2 and len(both.invocations) == len(one.invocations) + 1
    assert both.result.invocation_count == len(both.invocations)
    assert assembler.stats()["buffered"] == 0 and units > 0  # every unit given back after conversion


def test_eval_set_named_by_the_session_and_a_broken_session_beside_a_good_one(tmp_path):
    live, store, _ = worker(eval_sets=load_eval_sets(EXAMPLES / "evalsets"))
    (helm,) = read_traces(HELM)
    broken = copy.deepcopy(helm)
    for span in broken.spans:
        span.attributes = {"gen_ai.operation.name": "chat"}  # nothing to convert into a turn
    broken.trace_id = "f" * 32
    asyncio.run(live.evaluate([ReadySession(helm.trace_id, [helm], 1, eval_set_id="helm_eval_set"),
                               ReadySession(broken.trace_id, [broken], 1, eval_set_id="nope")]))
    good = store.get(helm.trace_id)
    assert good.status == "evaluated" and good.eval_set_id == "helm_eval_set" and good.result.eval_id
    assert [m.status.value for m in good.result.metrics] == ["PASSED"]
    bad = store.get(broken.trace_id)
    assert bad.error == "eval set 'nope' named by the session is not loaded (--eval-sets)"
    assert bad.result is not None and bad.result.metrics[0].status.value == "NOT_EVALUATED"


def test_invocation_spans_are_recorded_for_parenting():
    live, store, _ = worker()
    (trace,) = read_traces(DATA / "traces/genai/openai_agents_otel_genai.otlp.json")
    asyncio.run(live.evaluate([ReadySession(trace.trace_id, [trace], 1)]))
    record = store.get(trace.trace_id)
    spans = record.result.invocation_spans
    assert spans and all(s.trace_id == trace.trace_id for s in spans)
    assert [s.span_id for s in spans] == [i["span_id"] for i in record.invocations]


class _GcSeen(RunConsumer):
    """Notes whether the cyclic garbage collector was running when each case finished."""

    def __init__(self) -> None:
        self.seen: list[bool] = []

    def case_finished(self, index: int, case: object) -> None:
        self.seen.append(gc.isenabled())


def test_a_batch_runs_with_the_garbage_collector_paused_and_resumes_it():
    seen = _GcSeen()
    assembler, store = SessionAssembler(), MemorySessionStore()
    live = LiveEvaluator(assembler, store, EvalSettings(metrics=["tool_call_count_v1"]), consumers=[seen])
    traces = [*read_traces(HELM), *read_traces(EXAMPLES / "traces/k8s.json")]
    assert assembler.add_spans([s for t in traces for s in t.spans])
    assert gc.isenabled()
    live.start()
    live.stop()  # sweeps what is buffered, evaluates it on the worker's thread, joins
    assert seen.seen == [False, False] and gc.isenabled()
    assert [r.status for r in store.list()] == ["evaluated", "evaluated"]


def test_a_batch_that_waits_resumes_the_garbage_collector(monkeypatch):
    """A batch still running after GC_PAUSE_SECONDS waits on something: the collector runs again meanwhile."""
    monkeypatch.setattr(live_module, "GC_PAUSE_SECONDS", 0.05)
    states: list[bool] = []

    async def waiting_batch() -> None:
        states.append(gc.isenabled())
        await asyncio.sleep(0.5)
        states.append(gc.isenabled())

    live_module._run_paused(waiting_batch())
    assert states == [False, True] and gc.isenabled()
