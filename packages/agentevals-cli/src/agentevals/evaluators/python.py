"""Evaluation in code, MASEval-style: an ``Evaluator`` base class with ``filter_traces`` and ``__call__``.

Evaluators written for MASEval work by changing the import::

    from agentevals import Evaluator

    class ToolUsageEvaluator(Evaluator):
        def __init__(self, task, environment, user=None):
            super().__init__(task, environment, user)
            self.expected_tool = "helm_list_releases"

        def filter_traces(self, traces):
            return traces.get("tools", {}).get(self.expected_tool, {})

        def __call__(self, traces, final_answer=None):
            invocations = traces.get("invocations", [])
            return {"tool_used": bool(invocations), "score": 1.0 if invocations else 0.0}

Register it in eval_config.yaml as ``type: python`` with ``path: evaluators.py:ToolUsageEvaluator`` (or
``module.path:ToolUsageEvaluator`` for an installed module), or pass an instance of
``PythonEvaluator`` to ``agentevals.evaluate``. The traces dict has MASEval's shape (agents / models /
tools / environment / user, OpenAI-style messages), built from the converted OpenTelemetry traces.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import json
import math
import sys
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, ClassVar, Literal, Optional

from pydantic import Field

from ..errors import ConfigError, EvaluatorFailure
from ..protocol import InvocationData
from ..results import MetricResult, Status, verdict_for
from ..traces.model import ConvertedTrace
from .base import BaseEvaluator, EvalContext, EvaluatorConfig, NotCacheable

__all__ = ["Environment", "Evaluator", "PythonEvaluator", "Task", "User", "build_traces"]


@dataclass
class Task:
    """The eval case as MASEval's ``Task``: ``query``, ``id``, ``evaluation_data`` (ground truth), …

    ``evaluation_data`` holds ``expected_response`` (last turn's golden answer), ``expected_tool_calls``,
    ``conversation`` (every golden turn) and every extra key of the eval case (e.g. ``correct_answer``).
    """

    query: str = ""
    id: str = ""
    environment_data: dict[str, Any] = field(default_factory=dict)
    user_data: dict[str, Any] = field(default_factory=dict)
    evaluation_data: dict[str, Any] = field(default_factory=dict)
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass
class Environment:
    """What the agent ran in: the trace's resource attributes and session/root attributes."""

    resource: dict[str, Any] = field(default_factory=dict)
    attributes: dict[str, Any] = field(default_factory=dict)
    session_id: Optional[str] = None
    traces: list[ConvertedTrace] = field(default_factory=list)
    state: dict[str, Any] = field(default_factory=dict)

    def gather_traces(self) -> dict[str, Any]:
        return {"type": "Environment", "gathered_at": _now(), "resource": self.resource,
                "attributes": self.attributes, "session_id": self.session_id}


@dataclass
class User:
    """The simulated or real user's data, when the eval case carries some (``session_input``, persona)."""

    profile: dict[str, Any] = field(default_factory=dict)
    name: str = "user"


class Evaluator(ABC):
    """Abstract base class for evaluating agent task performance (MASEval's contract).

    Implement ``filter_traces`` (pick the relevant part of the traces dict) and ``__call__`` (compute a
    JSON-serialisable dict of metrics). A metric named ``score`` — or the only numeric metric — is
    compared with the entry's ``threshold`` for PASSED/FAILED. Let unexpected failures raise: the run
    marks the repetition ``evaluation_failed`` (or stops, with ``fail_on_evaluation_error``).
    """

    def __init__(self, task: Task, environment: Environment, user: Optional[User] = None) -> None:
        self.task = task
        self.environment = environment
        self.user = user

    @abstractmethod
    def filter_traces(self, traces: dict[str, Any]) -> dict[str, Any]:
        """Extract the traces this evaluator needs (or return ``traces`` unchanged)."""

    @abstractmethod
    def __call__(self, traces: dict[str, Any], final_answer: Optional[str] = None) -> dict[str, Any]:
        """Compute metrics from the filtered traces and the agent's final answer."""


# -- the traces dict ---------------------------------------------------------------------------------

def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


def _messages(invocations: list[InvocationData]) -> list[dict[str, Any]]:
    """OpenAI-style message history of the turns."""
    out: list[dict[str, Any]] = []
    for inv in invocations:
        out.append({"role": "user", "content": inv.user_content})
        steps = inv.intermediate_steps
        if steps.tool_calls:
            out.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": c.id or f"call_{i}", "type": "function",
                 "function": {"name": c.name, "arguments": json.dumps(c.args, ensure_ascii=False)}}
                for i, c in enumerate(steps.tool_calls)
            ]})
        for i, r in enumerate(steps.tool_responses):
            out.append({"role": "tool", "tool_call_id": r.id or f"call_{i}", "name": r.name, "content": r.output})
        if inv.final_response is not None:
            out.append({"role": "assistant", "content": inv.final_response})
    return out


def _models(traces: list[ConvertedTrace], gathered: str) -> dict[str, dict[str, Any]]:
    """``traces["models"]``: one entry per model with MASEval's call counters and one log per call."""
    models: dict[str, dict[str, Any]] = {}
    for trace in traces:
        m = trace.measure
        if m is None:
            continue
        for i, duration in enumerate(m.llm_ms):
            name = (m.llm_models[i] if i < len(m.llm_models) else None) or "unknown"
            failed = m.llm_failed[i] if i < len(m.llm_failed) else False
            entry = models.setdefault(name, {"type": "ModelAdapter", "gathered_at": gathered, "model_id": name,
                                             "total_calls": 0, "successful_calls": 0, "failed_calls": 0,
                                             "total_duration_seconds": 0.0, "logs": []})
            entry["total_calls"] += 1
            entry["failed_calls" if failed else "successful_calls"] += 1
            entry["total_duration_seconds"] += duration / 1000
            entry["logs"].append({"duration_seconds": duration / 1000, "status": "error" if failed else "success",
                                  "prompt_tokens": m.prompt_tokens[i] if i < len(m.prompt_tokens) else None,
                                  "output_tokens": m.output_tokens[i] if i < len(m.output_tokens) else None,
                                  "trace_id": trace.trace_id})
    for entry in models.values():
        entry["average_duration_seconds"] = entry["total_duration_seconds"] / entry["total_calls"]
    return models


def build_traces(ctx: EvalContext) -> dict[str, Any]:
    """MASEval's traces dict for one case, built from the converted OpenTelemetry traces."""
    invocations = ctx.invocations
    gathered = _now()
    agent_name = next((t.agent_name for t in ctx.traces if t.agent_name), None) or "agent"
    messages = _messages(invocations)
    tools: dict[str, dict[str, Any]] = {}
    for inv in invocations:
        steps = inv.intermediate_steps
        responses = {r.id: r for r in steps.tool_responses if r.id}
        unmatched = [r for r in steps.tool_responses if not r.id]
        for call in steps.tool_calls:
            response = responses.get(call.id) if call.id else None
            if response is None:
                response = next((r for r in unmatched if r.name == call.name), None)
                if response is not None:
                    unmatched.remove(response)
            entry = tools.setdefault(call.name, {"type": "Tool", "gathered_at": gathered, "name": call.name,
                                                 "invocations": [], "total_invocations": 0})
            entry["invocations"].append({
                "id": call.id,
                "inputs": call.args,
                "outputs": (response.response if response is not None and response.response is not None
                            else response.output if response is not None else None),
                "status": "error" if response is not None and (response.status or "").upper() == "ERROR" else "success",
                "timestamp": None,
                "meta": {"invocation_id": inv.invocation_id, "trace_id": inv.trace_id},
            })
            entry["total_invocations"] += 1
    models = _models(ctx.traces, gathered)
    environment = build_environment(ctx)
    return {
        "metadata": {"timestamp": gathered, "case_id": ctx.case_id, "trace_ids": [t.trace_id for t in ctx.traces],
                     "total_components": 1 + len(models) + len(tools)},
        "agents": {agent_name: {"type": "AgentAdapter", "gathered_at": gathered, "name": agent_name,
                                "agent_type": "otel", "message_count": len(messages), "messages": messages,
                                "callbacks": [], "logs": []}},
        "models": models,
        "tools": tools,
        "simulators": {},
        "callbacks": {},
        "environment": environment.gather_traces(),
        "user": None,
        "other": {"performance_metrics": ctx.performance_metrics},
    }


def build_environment(ctx: EvalContext) -> Environment:
    """The case's ``Environment``: resource and root attributes of its first trace, its session id."""
    return Environment(
        resource=dict(ctx.traces[0].resource) if ctx.traces else {},
        attributes=dict(ctx.traces[0].attributes) if ctx.traces else {},
        session_id=next((t.session_id for t in ctx.traces if t.session_id), None),
        traces=list(ctx.traces),
    )


def build_task(ctx: EvalContext) -> Task:
    case = ctx.eval_case
    query = ctx.invocations[0].user_content if ctx.invocations else ""
    if case is None:
        return Task(query=query, id=ctx.case_id)
    last = case.conversation[-1] if case.conversation else None
    evaluation_data = {
        "eval_id": case.eval_id,
        "expected_response": last.final_response if last else None,
        "expected_tool_calls": [{"name": c.name, "args": c.args} for c in last.intermediate_steps.tool_calls]
        if last else [],
        "conversation": [turn.model_dump(mode="json") for turn in case.conversation],
        **case.metadata,
    }
    return Task(query=case.conversation[0].user_content if case.conversation else query, id=case.eval_id,
                environment_data=dict(case.session_input or {}), user_data=dict(case.session_input or {}),
                evaluation_data=evaluation_data, metadata=dict(case.metadata))


def build_user(ctx: EvalContext) -> Optional[User]:
    case = ctx.eval_case
    if case is None:
        return None
    persona = (case.conversation_scenario or {}).get("user_persona")
    state = (case.session_input or {}).get("state")
    if not persona and not state:
        return None
    return User(profile={**({"persona": persona} if persona else {}), **({"state": state} if state else {})})


# -- type: python ------------------------------------------------------------------------------------

class PythonEvaluatorConfig(EvaluatorConfig):
    """``type: python``: an ``agentevals.Evaluator`` subclass run in-process."""

    type: Literal["python"] = "python"
    path: str
    """``file.py:ClassName`` (relative to the config file) or ``package.module:ClassName``."""
    timeout: float = Field(default=30.0, gt=0, allow_inf_nan=False)
    """Deadline in seconds for one evaluation."""
    config: dict[str, Any] = Field(default_factory=dict)
    """Passed to the class's ``__init__`` as keyword arguments (checked when the config is loaded)."""


class PythonEvaluator(BaseEvaluator):
    """Runs an ``Evaluator`` subclass per case: ``filter_traces`` then ``__call__`` on MASEval's traces dict."""

    name = "python"
    Config = PythonEvaluatorConfig
    config: PythonEvaluatorConfig
    needs_spans: ClassVar[bool] = True  # user code receives the converted traces, raw spans included

    @classmethod
    def runs_code(cls, entry: Mapping[str, Any]) -> Optional[str]:
        return "imports and runs Python code (type python)"

    def __init__(self, config: EvaluatorConfig, *, base_dir: Path, options: Any = None,
                 cls: Optional[type] = None) -> None:
        super().__init__(config, base_dir=base_dir, options=options)
        self._cls = cls
        self._with_user: Optional[bool] = None

    @classmethod
    def from_class(cls, evaluator_class: type, *, name: Optional[str] = None, threshold: float = 0.5,
                   **fields: Any) -> PythonEvaluator:
        """Wrap an ``Evaluator`` subclass for ``agentevals.evaluate(..., evaluators=[...])``."""
        config = PythonEvaluatorConfig(name=name or evaluator_class.__name__, path=f"<in-memory>:{evaluator_class.__name__}",
                                       threshold=threshold, **fields)
        return cls(config, base_dir=Path.cwd(), cls=evaluator_class)

    def check(self) -> None:
        if self._cls is None:
            self._cls = self._load()
        if not (callable(getattr(self._cls, "filter_traces", None)) and callable(self._cls)):
            raise ConfigError(f"{self.config.path}: {self._cls.__name__} must define filter_traces() and __call__()")
        self._with_user = self._constructor_takes_user()

    def _loaded(self) -> type:
        """The evaluator class, loaded on first use."""
        if self._cls is None:
            self._cls = self._load()
        return self._cls

    def code_paths(self) -> list[Path]:
        """The class's file: ``file.py`` of ``file.py:Class``, the module's file or package folder of
        ``package.module:Class``, the defining file of a class passed in memory."""
        if self._cls is not None and self.config.path.startswith("<in-memory>:"):
            try:
                source = inspect.getsourcefile(self._cls)
            except TypeError:
                source = None
            if source is None:
                raise NotCacheable(f"the file that defines {self._cls.__name__} cannot be found")
            return [Path(source)]
        target, _, _ = self.config.path.rpartition(":")
        if target.endswith(".py") or "/" in target or "\\" in target:
            return [self.resolve_path(target)]
        try:  # the top package, found without importing it: the key covers the whole package
            spec = importlib.util.find_spec(target.split(".")[0])
        except (ImportError, ValueError):
            spec = None
        if spec is None or not spec.origin or not Path(spec.origin).is_file():
            raise NotCacheable(f"module '{target}' has no source file to hash")
        return [Path(spec.origin)]

    def _constructor_takes_user(self) -> bool:
        """Whether the class is built as ``cls(task, environment, user, **config)`` or without ``user``
        (MASEval never builds evaluators itself, so both forms exist). ``ConfigError`` when neither fits."""
        try:
            signature = inspect.signature(self._loaded())
        except (TypeError, ValueError):
            return True
        config = self.config.config
        try:
            signature.bind(None, None, None, **config)
            return True
        except TypeError as exc:
            error = exc
        try:
            signature.bind(None, None, **config)
            return False
        except TypeError:
            keys = f" with config keys {sorted(config)}" if config else ""
            raise ConfigError(f"{self._loaded().__name__}(task, environment, user, **config) cannot be called{keys}: "
                              f"{error}") from None

    def _load(self) -> type:
        target, sep, attr = self.config.path.rpartition(":")
        if not sep or not target or not attr:
            raise ConfigError(f"path '{self.config.path}' must be 'file.py:ClassName' or 'module:ClassName'")
        if target.endswith(".py") or "/" in target or "\\" in target:
            file = self.resolve_path(target)
            if file.is_dir():
                raise ConfigError(f"{file} is a directory, expected a .py file")
            if not file.is_file():
                raise ConfigError(f"evaluator file not found: {file}")
            name = f"agentevals_user_{abs(hash(str(file)))}"
            spec = importlib.util.spec_from_file_location(name, file)
            if spec is None or spec.loader is None:
                raise ConfigError(f"{file} cannot be imported as a Python module")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            try:
                spec.loader.exec_module(module)
            except Exception as exc:
                raise ConfigError(f"importing {file} failed: {type(exc).__name__}: {exc}") from None
        else:
            try:
                module = importlib.import_module(target)
            except ImportError as exc:
                raise ConfigError(f"cannot import module '{target}': {exc}") from None
        found = getattr(module, attr, None)
        if not isinstance(found, type):
            raise ConfigError(f"'{attr}' is not a class in {target}")
        return found

    async def evaluate(self, ctx: EvalContext) -> MetricResult:
        if self._cls is None:
            self.check()
        from ..execution.inprocess import run_in_thread

        # A daemon thread interrupted at the deadline: an evaluator stuck in a loop never holds the run,
        # and its sys.exit() or KeyboardInterrupt is its own ERROR.
        return await run_in_thread(self._evaluate_sync, ctx, timeout=self.config.timeout,
                                   what=f"python evaluator '{self.config.name}'")

    def _evaluate_sync(self, ctx: EvalContext) -> MetricResult:
        task, user = build_task(ctx), build_user(ctx)
        environment = build_environment(ctx)
        if self._with_user is None:
            self._with_user = self._constructor_takes_user()
        args = (task, environment, user) if self._with_user else (task, environment)
        evaluator_class = self._loaded()
        instance = evaluator_class(*args, **self.config.config)
        traces = build_traces(ctx)
        final_answer = ctx.invocations[-1].final_response if ctx.invocations else None
        metrics = instance(instance.filter_traces(traces), final_answer)
        if not isinstance(metrics, dict):
            raise EvaluatorFailure(f"{evaluator_class.__name__}.__call__ returned {type(metrics).__name__}, expected a dict of metrics")
        try:
            details = json.loads(json.dumps(metrics, default=str))
        except (TypeError, ValueError) as exc:
            raise EvaluatorFailure(f"metrics are not JSON-serialisable: {exc}") from None
        score_key = "score" if "score" in metrics else None
        if score_key is None:
            numeric = [k for k, v in metrics.items() if isinstance(v, (int, float)) and not isinstance(v, bool)]
            score_key = numeric[0] if len(numeric) == 1 else None
        result_fields: dict[str, Any] = {"type": self.name, "details": {"metrics": details}}
        if score_key is None:
            return MetricResult(name=self.config.name, status=Status.INFORMATIONAL, value=details, **result_fields)
        score = metrics[score_key]
        if isinstance(score, bool):
            score = float(score)
        if not isinstance(score, (int, float)) or not math.isfinite(score) or not 0.0 <= score <= 1.0:
            raise EvaluatorFailure(f"metric '{score_key}' must be a number in [0, 1] to drive PASSED/FAILED, got {score!r}")
        threshold = self.config.threshold if self.config.threshold is not None else 0.5
        result = MetricResult.scored(self.config.name, float(score), threshold, **result_fields)
        result.details["score_metric"] = score_key
        result.verdict = verdict_for(result.score)
        return result
