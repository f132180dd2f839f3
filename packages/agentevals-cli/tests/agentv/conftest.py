"""Fixtures for the AgentV family: cases built from plain values, evaluators built through the registry."""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from agentevals.engine.options import RunOptions
from agentevals.evalsets.model import EvalCase
from agentevals.evaluators import EVALUATOR_TYPES, BaseEvaluator, EvalContext
from agentevals.protocol import InvocationData
from agentevals.results import MetricResult
from agentevals.traces.model import ConvertedTrace, Span, Trace

DATA = Path(__file__).resolve().parent / "data"


def turn(user: str = "", answer: str | None = None, tools: tuple[Any, ...] = (), perf: dict | None = None,
         span_id: str | None = None) -> InvocationData:
    """One turn; a tool is ``name``, ``(name, args)`` or ``{name, args, id, output, status}``."""
    calls, responses = [], []
    for index, tool in enumerate(tools):
        spec = {"name": tool} if isinstance(tool, str) else (
            {"name": tool[0], "args": tool[1]} if isinstance(tool, tuple) else dict(tool))
        call_id = spec.get("id", f"call_{index}_{spec['name']}")
        calls.append({"name": spec["name"], "args": spec.get("args", {}), "id": call_id})
        responses.append({"name": spec["name"], "id": call_id, "output": spec.get("output", "ok"),
                          "status": spec.get("status")})
    return InvocationData.model_validate({
        "invocation_id": f"inv-{user[:8]}", "user_content": user, "final_response": answer,
        "intermediate_steps": {"tool_calls": calls, "tool_responses": responses},
        "performance_metrics": perf, "span_id": span_id,
    })


def tool_span(name: str, call_id: str, start_ms: float, duration_ms: float, parent: str | None = None,
              **attrs: Any) -> Span:
    return Span(trace_id="t1", span_id=f"s-{call_id}", name=f"execute_tool {name}", parent_span_id=parent,
                start_ns=int(start_ms * 1e6), end_ns=int((start_ms + duration_ms) * 1e6),
                attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name,
                            "gen_ai.tool.call.id": call_id, **attrs})


def make_case(answer: str | None = "The capital of France is Paris.", *,
              question: str = "What is the capital of France?", tools: tuple[Any, ...] = (),
              turns: list[InvocationData] | None = None, expected: str | None = None,
              expected_tools: tuple[Any, ...] = (), perf: dict | None = None, case_perf: dict | None = None,
              spans: tuple[Span, ...] = (), criteria: str | None = None, options: RunOptions | None = None,
              golden: bool | None = None) -> EvalContext:
    """An ``EvalContext`` for one agent turn (or ``turns``) and, when ``expected`` is given, a golden turn."""
    invocations = turns if turns is not None else [turn(question, answer, tools, perf)]
    case = None
    if golden or (golden is None and (expected is not None or expected_tools or criteria is not None)):
        golden_turn = turn(question, expected, expected_tools)
        case = EvalCase(eval_id="case-1", conversation=[golden_turn],
                        metadata={"criteria": criteria} if criteria else {})
    traces = [ConvertedTrace(trace_id="t1", source="test", invocations=invocations,
                             trace=Trace(trace_id="t1", spans=list(spans)))] if spans else []
    return EvalContext(case_id="t1", invocations=invocations,
                       expected_invocations=case.conversation if case else None, eval_case=case,
                       traces=traces, options=options or RunOptions(), performance_metrics=case_perf)


def build(entry: dict[str, Any], base_dir: Path = DATA, options: RunOptions | None = None) -> BaseEvaluator:
    """Validate ``entry`` with its type's Config, build it and run its load-time checks (as the loader does)."""
    cls = EVALUATOR_TYPES.get(entry["type"])
    evaluator = cls(cls.Config.model_validate(entry), base_dir=base_dir, options=options)
    evaluator.check()
    return evaluator


def run(entry: dict[str, Any], ctx: EvalContext, **kwargs: Any) -> MetricResult:
    result = asyncio.run(build(entry, **kwargs).evaluate(ctx))
    assert isinstance(result, MetricResult)
    return result


@pytest.fixture
def av() -> SimpleNamespace:
    """Helpers: ``case``, ``turn``, ``span``, ``build``, ``run`` and the ``data`` folder."""
    return SimpleNamespace(case=make_case, turn=turn, span=tool_span, build=build, run=run, data=DATA)


@pytest.fixture
def chat_server(monkeypatch: pytest.MonkeyPatch) -> Any:
    """The shared loopback chat-completions server, with TEST_JUDGE_KEY set."""
    path = Path(__file__).resolve().parents[1] / "support" / "openai_server.py"
    spec = importlib.util.spec_from_file_location("agentv_tests_openai_server", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    monkeypatch.setenv("TEST_JUDGE_KEY", "sk-test-judge-key")
    with module.ChatServer() as server:
        yield server
